/**
 * The OpenAPI 3.1 document of the REST API, generated from the same compiled route table the
 * gateway serves and from the proto comments in the descriptor image (STYLE 3): paths, methods,
 * path/query parameters, bodies, response schemas, the error body, and the bearer scheme. Users
 * generate typed REST clients from it (e.g. openapi-typescript).
 */
import type { DescEnum, DescField, DescFile, DescMessage, DescMethod } from '@bufbuild/protobuf';
import { API_VERSION } from '../../rpc/pipeline';
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
  return {
    type: 'object',
    ...(doc ? { description: doc } : {}),
    additionalProperties: false,
    properties: Object.fromEntries(m.fields.filter((f) => !omit.has(f.name)).map((f) => [f.name, fieldSchema(f, schemas)])),
  };
}

function operation(route: Route, schemas: Map<string, Json>): Json {
  const method = route.input.file.services.flatMap((s) => s.methods).find((x) => `/${x.parent.typeName}/${x.name}` === route.entry.path)!;
  const pathVars = new Set(route.template.variables);
  const parameters: Json[] = [...pathVars].map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  if (route.body !== '*') {
    for (const f of route.input.fields) {
      if (pathVars.has(f.name) || f.name === route.body || f.fieldKind === 'message' || f.fieldKind === 'map') continue;
      parameters.push({ name: f.name, in: 'query', required: false, schema: fieldSchema(f, schemas) });
    }
  }
  const op: Json = {
    operationId: `${route.entry.service.split('.').pop()}_${route.entry.name}`,
    summary: route.entry.name,
    description: methodDoc(method),
    tags: [route.entry.service.split('.').pop()],
    parameters,
    responses: {
      '200': {
        description: 'OK',
        content: route.rawBody
          ? // a google.api.HttpBody: the body is its raw bytes, described by the method's comment
            { 'application/json': { schema: {} } }
          : {
              [route.entry.definition.responseStream ? 'application/x-ndjson' : 'application/json']: {
                schema: route.responseBody ? fieldSchema(route.output.fields.find((f) => f.name === route.responseBody)!, schemas) : ref(route.output, schemas),
              },
            },
      },
      default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    },
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

/** The OpenAPI document for every route of the table. */
export function openApiDocument(routes: RouteTable, serverUrl?: string): Json {
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
  return {
    openapi: '3.1.0',
    info: { title: 'Forecast service API', version: API_VERSION, description: 'Probabilistic forecasting over REST; the same contract is served over gRPC (package forecast.v1).' },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key: fk_live_…' } },
      schemas: Object.fromEntries([...schemas.entries()].sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}
