/**
 * The OpenAPI 3.1 document of the REST API, generated from the same compiled route table the
 * gateway serves and from the proto comments in the descriptor image (STYLE 3): paths, methods,
 * path/query parameters, bodies, response schemas with `required` (google.api.field_behavior
 * REQUIRED) and `readOnly` (OUTPUT_ONLY) fields, every error status an operation can answer
 * with the error body, the bearer scheme, and the protocol headers: `Idempotency-Key` on the
 * methods that take one, and on responses `Request-Id`, `API-Version`, `RateLimit`,
 * `RateLimit-Policy`, `Retry-After`, `Idempotent-Replayed` where the server sends them
 * (`responseHeaders`), each declared once in `components`. `@redocly/cli lint` passes it with no warnings
 * (test/integration/openapi.test.ts); `/docs` renders it.
 *
 * Error statuses of an operation: those of the shared mechanism (400 for any input; 401/403 by
 * the method's access; 409/422 idempotency on POST; 413/415 when it takes a body; 429 quota for
 * keyed methods the quota counts (`QUOTA_EXEMPT_METHODS` are answered over it); 500/503/504 always), 404 when the path names a resource, and any status or
 * code the method's proto comment names (e.g. "409 `already_exists`").
 */
import { type DescEnum, type DescField, type DescFile, type DescMessage, type DescMethod } from '@bufbuild/protobuf';
import { QUOTA_EXEMPT_METHODS } from '../../accounts/quota';
import { ERROR_STATUS, type ErrorCode } from '../../rpc/errors';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MIN_PUBLIC_KEY_LENGTH, storesOutcome } from '../../rpc/idempotency';
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
  if (access !== 'public') statuses.add(401);
  if (access !== 'public' && !QUOTA_EXEMPT_METHODS.has(route.entry.path)) statuses.add(429);
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

/**
 * The protocol headers (API.md sections 2, 4, 11, 12), declared once in `components` and referred
 * to by every response that can carry them (`responseHeaders`).
 */
const HEADERS: Readonly<Record<string, Json>> = {
  'Request-Id': { description: 'Identifies the call (also in the error body), for support.', required: true, schema: { type: 'string' } },
  'API-Version': { description: `The contract version (semantic versioning), e.g. \`${API_VERSION}\`; also answered by \`GET /v1/version\`.`, required: true, schema: { type: 'string' } },
  RateLimit: {
    description:
      'What is left of the monthly quota (IETF draft): `"monthly";r=<remaining>;t=<seconds to reset>`. On every answer to a call made with a valid API key of a tier with a quota (Free, Pro), counted or not; never for Enterprise (unlimited) nor without a valid key.',
    schema: { type: 'string', examples: ['"monthly";r=97;t=86400'] },
  },
  'RateLimit-Policy': {
    description: 'The monthly quota (IETF draft): `"monthly";q=<limit>;w=<seconds in the month>`. Sent with `RateLimit`.',
    schema: { type: 'string', examples: ['"monthly";q=100;w=2592000'] },
  },
  'Retry-After': { description: 'Seconds to wait before retrying (429: until the month resets; 409: with `idempotency_key_in_use`).', schema: { type: 'integer' } },
  'WWW-Authenticate': { description: '`Bearer`.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key` (not sent otherwise).',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Component name of a header (`RateLimit-Policy` → `RateLimitPolicy`). */
const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name.replace(/-/g, '')}` });

/** The `Idempotency-Key` request header of a method that takes one; a method without an API key needs a longer one. */
function idempotencyKeyRef(route: Route): Json {
  return { $ref: `#/components/parameters/${route.entry.endpoint.access === 'public' ? 'IdempotencyKeyWithoutApiKey' : 'IdempotencyKey'}` };
}

const IDEMPOTENCY_KEY_DOC =
  'Makes a retry safe (API.md section 11): within 24 hours the same key with the same request answers the stored response (`Idempotent-Replayed: true`), with a different request 422 `idempotency_key_reused`, while the first still runs 409 `idempotency_key_in_use`. Scoped to the account and the method. Send it once: two header lines are 400 `invalid_argument`.';

const PARAMETERS: Readonly<Record<string, Json>> = {
  IdempotencyKey: { name: 'Idempotency-Key', in: 'header', required: false, description: IDEMPOTENCY_KEY_DOC, schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH } },
  IdempotencyKeyWithoutApiKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description: `${IDEMPOTENCY_KEY_DOC} This method needs no API key, so the key alone guards the replay: at least ${MIN_PUBLIC_KEY_LENGTH} characters (use a random UUID).`,
    schema: { type: 'string', minLength: MIN_PUBLIC_KEY_LENGTH, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
  },
};

/**
 * The headers a response with `status` (200 or an error) can carry, as the server
 * sets them: Request-Id and API-Version always (rpc/pipeline.ts); the RateLimit pair whenever
 * the caller's key is known, so on every status but 401 (the quota's describer; a public method
 * called with a key included); Retry-After on 409, 429 and 503; Idempotent-Replayed on the outcomes a
 * method taking an Idempotency-Key stores (`storesOutcome`).
 */
function responseHeaders(status: number, idempotent: boolean): Json {
  const names = ['Request-Id', 'API-Version'];
  if (status !== 401) names.push('RateLimit', 'RateLimit-Policy');
  if (status === 429 || status === 503 || status === 409) names.push('Retry-After');
  if (status === 401) names.push('WWW-Authenticate');
  if (idempotent && (status === 200 || (CODES_BY_STATUS.get(status) ?? []).some(storesOutcome))) names.push('Idempotent-Replayed');
  return Object.fromEntries(names.map((n) => [n, headerRef(n)]));
}

function errorResponse(status: number, idempotent: boolean): Json {
  const codes = (CODES_BY_STATUS.get(status) ?? []).map((c) => `\`${c}\``).join(', ');
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes}.`,
    headers: responseHeaders(status, idempotent),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

function operation(route: Route, schemas: Map<string, Json>, idempotent: boolean): Json {
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
  if (idempotent) parameters.push(idempotencyKeyRef(route));
  const doc = methodDoc(method);
  const responses: Json = {
    '200': {
      description: 'OK',
      headers: responseHeaders(200, idempotent),
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
  for (const status of errorStatuses(route, doc)) responses[String(status)] = errorResponse(status, idempotent);
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
    paths[path][route.httpMethod.toLowerCase()] = operation(route, schemas, routes.idempotentMethods.has(route.entry.path));
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
      parameters: PARAMETERS,
      headers: Object.fromEntries(Object.entries(HEADERS).map(([name, header]) => [name.replace(/-/g, ''), header])),
      schemas: Object.fromEntries([...schemas.entries()].sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

