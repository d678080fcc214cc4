/**
 * The OpenAPI 3.1 document of the REST API, generated from the same compiled route table the
 * gateway serves and from the proto comments in the descriptor image (STYLE 3): paths, methods,
 * path/query parameters, bodies, response schemas with `required` (google.api.field_behavior
 * REQUIRED) and `readOnly` (OUTPUT_ONLY) fields, every error status an operation can answer
 * with the error body, and the bearer scheme. `@redocly/cli lint` passes it with no warnings
 * (test/integration/openapi.test.ts); `/docs` renders it.
 *
 * Error statuses of an operation: those of the shared mechanism (400 for any input; 401/403 by
 * the method's access; 409/422 idempotency on POST; 413/415 when it takes a body; 429 quota for
 * keyed methods; 500/503/504 always), 404 when the path names a resource, and any status or
 * code the method's proto comment names (e.g. "409 `already_exists`").
 */
import { type DescEnum, type DescField, type DescFile, type DescMessage, type DescMethod } from '@bufbuild/protobuf';
import { ERROR_STATUS, type ErrorCode } from '../../rpc/errors';
import { API_VERSION } from '../../rpc/pipeline';
import { behaviors, OUTPUT_ONLY, REQUIRED } from './field-behavior';
import type { Route, RouteTable } from './route-table';

type Json = Record<string, unknown>;

/** Leading comment of a descriptor, from the file's source info. */
function comment(file: DescFile, path: readonly number[]): string | undefined {
  const loc = file.proto.sourceCodeInfo?.location.find((l) => l.path.length === path.length && l.path.every((v, i) => v === path[i]));
  const text = loc?.leadingComments?.trim();
  return text ? text.split('\n').map((l) => l.replace(/^ /, '')).join('\n') : undefined;
}

function messagePath(m: DescMessage): number[] {
  return [4, m.file.messages.indexOf(m)];
}

function fieldDoc(f: DescField): string | undefined {
  const m = f.parent;
  return comment(m.file, [...messagePath(m), 2, m.proto.field.indexOf(f.proto)]);
}

function methodDoc(method: DescMethod): string | undefined {
  const s = method.parent;
  return comment(s.file, [6, s.file.services.indexOf(s), 2, s.methods.indexOf(method)]);
}

const SCALARS: Record<number, Json> = {
  1: { type: 'number', format: 'double' },
  2: { type: 'number', format: 'float' },
  3: { type: 'string', format: 'int64' },
  4: { type: 'string', format: 'uint64' },
  5: { type: 'integer', format: 'int32' },
  8: { type: 'boolean' },
  9: { type: 'string' },
  12: { type: 'string', format: 'byte' },
  13: { type: 'integer', format: 'uint32' },
};

function scalarSchema(scalar: number): Json {
  return SCALARS[scalar] ?? { type: 'string' };
}

function enumSchema(e: DescEnum): Json {
  return { type: 'string', enum: e.values.map((v) => v.name) };
}

/** Well-known types whose proto3 JSON form is plain JSON, not their fields. */
const WELL_KNOWN: Readonly<Record<string, Json>> = {
  'google.protobuf.Struct': { type: 'object', additionalProperties: true },
  'google.protobuf.Value': {},
  'google.protobuf.ListValue': { type: 'array', items: {} },
};

function ref(m: DescMessage, schemas: Map<string, Json>): Json {
  const known = WELL_KNOWN[m.typeName];
  if (known) return { ...known };
  if (!schemas.has(m.typeName)) {
    schemas.set(m.typeName, {}); // placeholder against recursion
    schemas.set(m.typeName, messageSchema(m, schemas));
  }
  return { $ref: `#/components/schemas/${m.typeName}` };
}

function fieldSchema(f: DescField, schemas: Map<string, Json>): Json {
  let s: Json;
  switch (f.fieldKind) {
    case 'scalar':
      s = scalarSchema(f.scalar);
      break;
    case 'enum':
      s = enumSchema(f.enum);
      break;
    case 'message':
      s = ref(f.message, schemas);
      break;
    case 'list':
      s = { type: 'array', items: f.listKind === 'scalar' ? scalarSchema(f.scalar) : f.listKind === 'enum' ? enumSchema(f.enum) : ref(f.message, schemas) };
      break;
    case 'map':
      s = { type: 'object', additionalProperties: f.mapKind === 'scalar' ? scalarSchema(f.scalar) : f.mapKind === 'enum' ? enumSchema(f.enum) : ref(f.message, schemas) };
      break;
  }
  const doc = fieldDoc(f);
  return { ...s, ...(doc ? { description: doc } : {}), ...(f.deprecated ? { deprecated: true } : {}) };
}

function messageSchema(m: DescMessage, schemas: Map<string, Json>, omit: ReadonlySet<string> = new Set()): Json {
  const doc = comment(m.file, messagePath(m));
  const fields = m.fields.filter((f) => !omit.has(f.name));
  const required = fields.filter((f) => behaviors(f).includes(REQUIRED)).map((f) => f.name);
  return {
    type: 'object',
    ...(doc ? { description: doc } : {}),
    additionalProperties: false,
    ...(required.length > 0 ? { required } : {}),
    properties: Object.fromEntries(
      fields.map((f) => {
        const schema = fieldSchema(f, schemas);
        return [f.name, behaviors(f).includes(OUTPUT_ONLY) ? { ...schema, readOnly: true } : schema];
      }),
    ),
  };
}

/** Codes by HTTP status, from the one code table. */
const CODES_BY_STATUS = new Map<number, ErrorCode[]>();
for (const [code, { http }] of Object.entries(ERROR_STATUS) as [ErrorCode, { http: number }][]) {
  if (code !== 'method_not_allowed') CODES_BY_STATUS.set(http, [...(CODES_BY_STATUS.get(http) ?? []), code]);
}

/** Every error status the operation can answer (module doc). */
export function errorStatuses(route: Route, doc: string | undefined): number[] {
  const access = route.entry.endpoint.access;
  const statuses = new Set([400, 500, 503, 504]);
  if (access !== 'public') [401, 429].forEach((s) => statuses.add(s));
  if (access !== 'public' && access !== 'authenticated') statuses.add(403);
  if (route.httpMethod === 'POST') [409, 422].forEach((s) => statuses.add(s));
  if (route.body) [413, 415].forEach((s) => statuses.add(s));
  if (route.template.variables.length > 0) statuses.add(404);
  for (const m of (doc ?? '').matchAll(/\b([45]\d\d)\b|`([a-z_]+)`/g)) {
    const status = m[1] ? Number(m[1]) : ERROR_STATUS[m[2] as ErrorCode]?.http;
    if (status !== undefined && CODES_BY_STATUS.has(status)) statuses.add(status);
  }
  return [...statuses].sort((a, b) => a - b);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request', 401: 'Missing or invalid API key', 403: 'The key lacks the scope', 404: 'Not found',
  409: 'Conflict', 413: 'Body too large', 415: 'Unsupported media type', 422: 'Unprocessable', 429: 'Quota exceeded',
  500: 'Internal error', 503: 'Unavailable', 504: 'Deadline exceeded',
};

const REQUEST_ID_HEADER = { 'Request-Id': { description: 'Identifies the call (also in the error body), for support.', schema: { type: 'string' } } };

function errorResponse(status: number): Json {
  const headers: Json = { ...REQUEST_ID_HEADER };
  if (status === 429 || status === 503) headers['Retry-After'] = { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } };
  if (status === 409) headers['Retry-After'] = { description: 'With `idempotency_key_in_use`: seconds to wait before retrying.', schema: { type: 'integer' } };
  if (status === 401) headers['WWW-Authenticate'] = { description: '`Bearer`.', schema: { type: 'string' } };
  const codes = (CODES_BY_STATUS.get(status) ?? []).map((c) => `\`${c}\``).join(', ');
  return { description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes}.`, headers, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}

function operation(route: Route, schemas: Map<string, Json>): Json {
  const method = route.method;
  const pathVars = new Set(route.template.variables);
  const parameters: Json[] = [...pathVars].map((name) => {
    const f = route.input.fields.find((x) => x.name === name);
    const doc = f ? fieldDoc(f) : undefined;
    return { name, in: 'path', required: true, ...(doc ? { description: doc } : {}), schema: { type: 'string' } };
  });
  if (route.body !== '*') {
    for (const f of route.input.fields) {
      if (pathVars.has(f.name) || f.name === route.body || f.fieldKind === 'message' || f.fieldKind === 'map') continue;
      const { description, ...schema } = fieldSchema(f, schemas);
      parameters.push({ name: f.name, in: 'query', required: behaviors(f).includes(REQUIRED), ...(description ? { description } : {}), schema });
    }
  }
  const doc = methodDoc(method);
  const responses: Json = {
    '200': {
      description: 'OK',
      headers: REQUEST_ID_HEADER,
      content: route.rawBody
        ? // a google.api.HttpBody: the body is its raw bytes, described by the method's comment
          { 'application/json': { schema: {} } }
        : {
            [route.entry.definition.responseStream ? 'application/x-ndjson' : 'application/json']: {
              schema: route.responseBody ? fieldSchema(route.output.fields.find((f) => f.name === route.responseBody)!, schemas) : ref(route.output, schemas),
            },
          },
    },
  };
  for (const status of errorStatuses(route, doc)) responses[String(status)] = errorResponse(status);
  const op: Json = {
    operationId: `${route.entry.service.split('.').pop()}_${route.entry.name}`,
    summary: route.entry.name,
    description: doc,
    tags: [route.entry.service.split('.').pop()],
    parameters,
    responses,
  };
  if (route.entry.deprecation) op.deprecated = true;
  if (route.entry.endpoint.access === 'public') op.security = [];
  if (route.body) {
    const type = route.entry.definition.requestStream ? 'application/x-ndjson' : 'application/json';
    const schema = route.body === '*' ? messageSchema(route.input, schemas, pathVars) : fieldSchema(route.input.fields.find((f) => f.name === route.body)!, schemas);
    op.requestBody = { required: false, content: { [type]: { schema } } };
  }
  return op;
}

/** The OpenAPI document for every route of the table; `serverUrl` defaults to this server (`/`). */
export function openApiDocument(routes: RouteTable, serverUrl = '/'): Json {
  const schemas = new Map<string, Json>([
    [
      'Error',
      {
        type: 'object',
        required: ['code', 'message', 'request_id'],
        properties: {
          code: { type: 'string', description: 'Error code (API.md section 4), e.g. invalid_argument, not_found, quota_exceeded.' },
          message: { type: 'string', description: 'What is wrong, naming the offending field and value.' },
          request_id: { type: 'string', description: 'The Request-Id of the call, for support.' },
          details: { type: 'object' },
        },
      },
    ],
  ]);
  const paths: Record<string, Json> = {};
  for (const route of routes.routes) {
    const path = route.template.template;
    paths[path] ??= {};
    paths[path][route.httpMethod.toLowerCase()] = operation(route, schemas);
  }
  const services = new Map(routes.routes.map((r) => [r.entry.service, r.method.parent]));
  const tags = [...services.values()].map((service) => ({
    name: service.name,
    description: comment(service.file, [6, service.file.services.indexOf(service)]) ?? service.typeName,
  }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Forecast service API',
      version: API_VERSION,
      description: 'Probabilistic forecasting over REST; the same contract is served over gRPC (package forecast.v1).',
      contact: { name: 'Forecast service support', email: 'support@localhost' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl, description: 'This service' }],
    security: [{ bearer: [] }],
    tags: tags.sort((a, b) => a.name.localeCompare(b.name)),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key: fk_live_…' } },
      schemas: Object.fromEntries([...schemas.entries()].sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

