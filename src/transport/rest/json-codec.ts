/**
 * The proto3 JSON mapping for the gateway, using the descriptor image (protobuf-es reflection):
 * strict decoding (unknown fields and wrong types are 400 naming the field by its full path, e.g.
 * `observations[0].value` or `axes[0].kind`, and the value as JSON; so is a singular field marked
 * `google.api.field_behavior = REQUIRED` that is left out), proto field
 * names on output, every field emitted. Stricter than proto3 JSON requires, on purpose: `null`
 * is refused for anything but a message (where it means "absent"), so `"value": null` is an
 * error rather than a silent 0; integers given as text must be decimal (`"0x10"` is not 16),
 * and so must floating-point numbers (or NaN/Infinity/-Infinity). One leniency: a `page_size`
 * beyond int32 is read as "large" (`saturatePageSize`). The endpoint itself sees the same generated (ts-proto)
 * objects as over gRPC: JSON → reflective message → binary → generated decoder, and back.
 */
import { fromBinary, fromJson, ScalarType, toBinary, toJson, type DescField, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { invalidArgument, QUOTE_CHARS, ServiceError } from '../../rpc/errors';
import { PAGE_SIZE_FIELD } from '../../rpc/pagination';
import { requiredFields } from './field-behavior';
import type { Route } from './route-table';

const JSON_WRITE = { useProtoFieldName: true, alwaysEmitImplicit: true } as const;

/** Build the request JSON from body, path variables and query, then its binary encoding. */
export function decodeRequest(route: Route, vars: Record<string, string>, query: URLSearchParams, body: unknown): Buffer {
  let object: Record<string, unknown>;
  if (route.body === '*') {
    if (body === undefined) object = {};
    else if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidArgument('body', 'must be a JSON object');
    else object = { ...(body as Record<string, unknown>) };
  } else if (route.body) {
    object = body === undefined ? {} : { [route.body]: body };
  } else {
    object = {};
  }
  for (const [path, value] of Object.entries(vars)) {
    if (hasFieldPath(route.input, object, path)) throw invalidArgument(path, 'is given in the URL path and must not be repeated in the body');
    setFieldPath(object, path, value);
  }
  if (route.body !== '*') addQuery(route.input, object, query);
  else if ([...query.keys()].length > 0) throw invalidArgument([...query.keys()][0], 'query parameters are not accepted by this method (send them in the body)');
  saturatePageSize(route.input, object);
  return encodeJson(route.input, object);
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * A request's `page_size` (API.md section 10, every List method's proto comment: larger values
 * are coerced to the maximum) given as a positive integer beyond int32, from the query string or
 * a JSON body, is read as the largest int32, which the endpoint coerces to its maximum like any
 * other large size. Why: JSON can state a size the int32 field cannot hold (a gRPC client's
 * cannot exceed it), and "too large" must not be 400 on one protocol only. Every other int32
 * field keeps its range check, and a negative or non-integer page_size is still 400.
 */
function saturatePageSize(schema: DescMessage, object: Record<string, unknown>): void {
  const field = schema.fields.find((f) => f.name === PAGE_SIZE_FIELD);
  if (!field || field.fieldKind !== 'scalar' || field.scalar !== ScalarType.INT32) return;
  for (const key of new Set([field.name, field.jsonName])) {
    const v = object[key];
    const large = typeof v === 'number' ? Number.isInteger(v) && v > INT32_MAX : typeof v === 'string' && /^\d+$/.test(v) && Number(v) > INT32_MAX;
    if (large) object[key] = INT32_MAX;
  }
}

/**
 * JSON object → binary encoding of `schema`, or 400 naming the offending field by its full path
 * below `path` (`messages[3]` for a message of a stream; the request itself when empty).
 */
export function encodeJson(schema: DescMessage, object: unknown, path = ''): Buffer {
  if (!isObject(object)) throw invalidArgument(path || 'body', 'must be a JSON object');
  if (nestingDepth(object, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) throw invalidArgument(path || 'body', `nests lists and objects deeper than ${MAX_JSON_DEPTH} levels`);
  checkStrict(schema, object, path, false);
  try {
    return Buffer.from(toBinary(schema, fromJson(schema, object as JsonValue, { ignoreUnknownFields: false })));
  } catch (err) {
    // protobuf-es names the field but not where it sits: find the value it refused, by its path.
    checkStrict(schema, object, path, true);
    throw jsonError(err, path);
  }
}

/**
 * How deep lists and objects may nest in a request (protobuf's own default recursion limit). Why:
 * the strict checks, the error messages' rendering (`JSON.stringify`) and protobuf-es's decoder
 * all recurse, and a body of 5,000 nested lists overflowed the stack: 500 with an error-level
 * stack trace in the log, on every JSON endpoint including sign-up (found by QA). No message of
 * this API nests anywhere near 100.
 */
export const MAX_JSON_DEPTH = 100;

/** Deepest nesting of lists and objects in `v` (a flat object is 1), counted without recursion; stops once past `limit`. */
function nestingDepth(v: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[v, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) break;
    for (const child of Array.isArray(node) ? node : Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Response bytes → JSON value (the `response_body` field alone, when the rule names one). */
export function encodeResponse(route: Route, bytes: Uint8Array): JsonValue {
  const message = fromBinary(route.output, bytes);
  if (!route.responseBody) return toJson(route.output, message, JSON_WRITE);
  const field = route.output.fields.find((f) => f.name === route.responseBody)!;
  if (field.fieldKind !== 'message') throw new Error(`response_body ${field.name} must be a message field`);
  const sub = (message as unknown as Record<string, unknown>)[field.localName];
  return toJson(field.message, (sub ?? {}) as never, JSON_WRITE);
}

/** A `google.api.HttpBody` response (see `Route.rawBody`): its content type and raw bytes. */
export function rawResponse(route: Route, bytes: Uint8Array): { contentType: string; data: Uint8Array } {
  const message = fromBinary(route.output, bytes) as unknown as Record<string, unknown>;
  const field = route.responseBody ? route.output.fields.find((f) => f.name === route.responseBody)! : undefined;
  const body = (field ? message[field.localName] : message) as { contentType?: string; data?: Uint8Array } | undefined;
  return { contentType: body?.contentType || 'application/octet-stream', data: body?.data ?? new Uint8Array(0) };
}

/** The problem a protobuf-es JSON error states, without its preamble (type names are internals). */
function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return /from JSON:? (?:list item #\d+: )?(.*)$/s.exec(text)?.[1] ?? 'is not a valid value';
}

/** Last resort, when `checkStrict` could not place a protobuf-es error: 400 on the request (or stream message) as a whole. */
function jsonError(err: unknown, path: string): ServiceError {
  return invalidArgument(path || 'body', reason(err));
}

/** A value as a message shows it: as JSON (`[]`, `1`, `"x"`), cut to `QUOTE_CHARS`. */
function render(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length <= QUOTE_CHARS ? text : `${text.slice(0, QUOTE_CHARS)}…`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function findField(schema: DescMessage, name: string): DescField | undefined {
  return schema.fields.find((f) => f.name === name || f.jsonName === name);
}

function hasFieldPath(schema: DescMessage, object: Record<string, unknown>, path: string): boolean {
  const [head, ...rest] = path.split('.');
  const field = findField(schema, head);
  const value = object[head] ?? (field ? object[field.jsonName] : undefined);
  if (value === undefined) return false;
  if (rest.length === 0 || !field || field.fieldKind !== 'message' || typeof value !== 'object' || value === null) return true;
  return hasFieldPath(field.message, value as Record<string, unknown>, rest.join('.'));
}

function setFieldPath(object: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let target = object;
  for (const part of parts.slice(0, -1)) {
    const next = target[part];
    target = (target[part] = typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
  }
  target[parts[parts.length - 1]] = value;
}

/** Query parameters → fields (grpc-gateway style: `?a=1&b.c=x&list=1&list=2`). */
function addQuery(schema: DescMessage, object: Record<string, unknown>, query: URLSearchParams): void {
  for (const key of new Set(query.keys())) {
    const values = query.getAll(key);
    let desc = schema;
    let field: DescField | undefined;
    for (const part of key.split('.')) {
      field = findField(desc, part);
      if (!field) throw invalidArgument(key, 'unknown query parameter');
      if (field.fieldKind === 'message') desc = field.message;
    }
    if (!field || field.fieldKind === 'message' || field.fieldKind === 'map') throw invalidArgument(key, 'cannot be set from the query string');
    if (hasFieldPath(schema, object, key)) throw invalidArgument(key, 'is given in the URL path and must not be repeated in the query');
    const convert = (v: string): unknown => (field!.fieldKind === 'scalar' && field!.scalar === 8 /* BOOL */ ? boolOf(key, v) : v);
    if (field.fieldKind === 'list') setFieldPath(object, key, values.map(convert));
    else if (values.length > 1) throw invalidArgument(key, 'is given more than once');
    else setFieldPath(object, key, convert(values[0]));
  }
}

function boolOf(key: string, v: string): boolean {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalidArgument(key, `expected true or false, got ${JSON.stringify(v)}`);
}

const FLOATS = new Set([ScalarType.DOUBLE, ScalarType.FLOAT]);
const NOT_NUMBERS = new Set([ScalarType.STRING, ScalarType.BYTES, ScalarType.BOOL]);
const DECIMAL_INTEGER = /^-?\d+$/;
/** 64-bit integer types: JSON may carry them as numbers, which JSON.parse reads exactly only up to 2^53 − 1. */
const INTS64 = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);
const DECIMAL_NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^(NaN|-?Infinity)$/;

/** Messages whose proto3 JSON form is not an object of their fields (Timestamp is a string, Value anything). */
const SPECIAL_JSON = /^google\.protobuf\.(Any|Timestamp|Duration|FieldMask|Struct|Value|ListValue|\w+Value)$/;

/**
 * The checks proto3 JSON leaves out (module doc), and the shape of every value (an object for a
 * message, a list for a repeated field, the JSON type of a scalar), before protobuf-es decodes:
 * each names the full path of the offending value. With `probe` (only after protobuf-es refused
 * the request) each scalar is also decoded on its own, to find the one it refused and its path.
 */
function checkStrict(schema: DescMessage, object: Record<string, unknown>, path: string, probe: boolean): void {
  for (const key in object) {
    const v = object[key];
    const field = findField(schema, key);
    const at = path ? `${path}.${field?.name ?? key}` : (field?.name ?? key);
    if (!field) throw invalidArgument(at, 'unknown field');
    if (key !== field.name && field.name in object) throw invalidArgument(at, `is given twice (as ${field.name} and ${key})`);
    if (v === null || field.fieldKind === 'scalar' || field.fieldKind === 'enum' || field.fieldKind === 'message') {
      checkValue(field, v, at, probe);
    } else if (field.fieldKind === 'list') {
      if (!Array.isArray(v)) throw invalidArgument(at, `expected a list, got ${render(v)}`);
      for (let i = 0; i < v.length; i++) checkValue(field, v[i], `${at}[${i}]`, probe);
    } else {
      if (!isObject(v)) throw invalidArgument(at, `expected an object, got ${render(v)}`);
      for (const k in v) checkValue(field, v[k], `${at}.${k}`, probe, k);
    }
  }
  for (const field of requiredFields(schema)) {
    // Absent, or null for a message (which means absent): proto3 would read a silent default.
    if ((object[field.name] ?? object[field.jsonName] ?? null) === null) throw invalidArgument(path ? `${path}.${field.name}` : field.name, 'is required');
  }
}

/** One value (or list element, or map value under `mapKey`) of `field`. */
function checkValue(field: DescField, v: unknown, at: string, probe: boolean, mapKey?: string): void {
  const message = field.fieldKind === 'list' || field.fieldKind === 'map' || field.fieldKind === 'message' ? field.message : undefined;
  const single = field.fieldKind === 'message';
  if (v === null) {
    if (single && message!.typeName !== 'google.protobuf.Value') return; // null = absent
    if (message?.typeName === 'google.protobuf.Value' || field.enum?.typeName === 'google.protobuf.NullValue') return;
    throw invalidArgument(at, 'null is not a value (leave the field out for its default)');
  }
  if (message && !SPECIAL_JSON.test(message.typeName)) {
    if (!isObject(v)) throw invalidArgument(at, `expected an object, got ${render(v)}`);
    return checkStrict(message, v, at, probe);
  }
  if (!message) checkScalar(field, v, at);
  if (probe) {
    // Decode this value alone, as the only content of its field.
    const content = field.fieldKind === 'list' ? [v] : field.fieldKind === 'map' ? { [mapKey!]: v } : v;
    try {
      fromJson(field.parent, { [field.name]: content } as JsonValue, { ignoreUnknownFields: false });
    } catch (err) {
      throw invalidArgument(at, reason(err));
    }
  }
}

/** A scalar or enum value: its JSON type, and numbers given as text written in decimal. */
function checkScalar(field: DescField, v: unknown, at: string): void {
  const scalar = field.fieldKind === 'scalar' || field.fieldKind === 'list' || field.fieldKind === 'map' ? field.scalar : undefined;
  const expected = scalar === undefined ? 'a string or an integer' : NOT_NUMBERS.has(scalar) ? (scalar === ScalarType.BOOL ? 'true or false' : 'a string') : 'a number';
  const ok =
    scalar === undefined
      ? typeof v === 'string' || typeof v === 'number' // enum: name or number
      : scalar === ScalarType.BOOL
        ? typeof v === 'boolean'
        : NOT_NUMBERS.has(scalar)
          ? typeof v === 'string'
          : typeof v === 'number' || typeof v === 'string';
  if (!ok) throw invalidArgument(at, `expected ${expected}, got ${render(v)}`);
  if (typeof v === 'number' && scalar !== undefined && INTS64.has(scalar)) {
    // the decoder's own words were "1.5 out of range", and for 9223372036854775807 a rounded
    // 9223372036854776000 "out of range": neither what was wrong nor what was sent (found by QA)
    if (!Number.isInteger(v)) throw invalidArgument(at, `expected an integer, got ${render(v)}`);
    if (!Number.isSafeInteger(v)) throw invalidArgument(at, `${render(v)} is beyond 2^53 - 1, where a JSON number loses digits: send a 64-bit integer as a string (e.g. "9223372036854775807")`);
  }
  if (typeof v !== 'string' || scalar === undefined || NOT_NUMBERS.has(scalar)) return;
  if (FLOATS.has(scalar) ? !DECIMAL_NUMBER.test(v) : !DECIMAL_INTEGER.test(v)) {
    throw invalidArgument(at, `${FLOATS.has(scalar) ? 'expected a decimal number' : 'expected a decimal integer'}, got ${JSON.stringify(v.slice(0, 40))}`);
  }
}
