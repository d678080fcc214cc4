/**
 * Runtime of the generated REST clients (protoc-gen-rest-client). The generator copies this file
 * verbatim into its output (`gen/rest_runtime.ts`) so the generated client is self-contained: it
 * needs only the global `fetch` (Node 20+, browsers) and imports nothing, not even the ts-proto
 * runtime (the generated files import the ts-proto message *types* only).
 *
 * - proto3 JSON ↔ ts-proto objects, driven by the field tables the generator writes per message
 *   (`message(...)`): proto field names on the wire, int64 as decimal strings, enums by name,
 *   bytes as base64, non-finite doubles as "NaN"/"Infinity", Struct/Value/ListValue as the plain
 *   JSON they are; default values are omitted on the way out and filled in on the way back (the
 *   shape ts-proto's decoders produce).
 * - A method answering a `google.api.HttpBody` gets the raw body: its bytes and content type.
 * - The call: path from the `google.api.http` template, the rest of the request in the query
 *   (no body) or as the JSON body, the response (or its `response_body` field) decoded.
 * - One error class, `ApiError`, for every failure: an error answer of the service (its `code`,
 *   `message`, `request_id`, HTTP status, `Retry-After`), a timeout, a network failure.
 * - Paginated lists as async iterators; client streams sent as NDJSON.
 */

/** A JSON value as `JSON.parse` returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
type JsonObject = { [key: string]: JsonValue };

/** An enum: its proto name and the names of its values by number. */
export interface EnumType {
  readonly enumName: string;
  readonly names: Readonly<Record<number, string>>;
}

/**
 * The JSON form of a value: a scalar kind, an enum, a message (by thunk, for recursion), `json`
 * (google.protobuf.Struct/Value/ListValue: plain JSON, where null is a value) or `raw` (a
 * google.api.HttpBody, only ever a response's raw body).
 */
export type ValueType = 'string' | 'bool' | 'int32' | 'int64' | 'double' | 'bytes' | 'json' | 'raw' | EnumType | (() => MessageCodec<any>);

/**
 * One field: `single` (implicit presence: the default value is not sent), `required` (implicit
 * presence, but google.api.field_behavior REQUIRED: always sent, even at its default, since the
 * service refuses a missing one), `optional` (explicit presence: message fields, proto3 `optional`,
 * oneof members), `list` or `map`.
 */
export interface FieldSpec {
  /** The proto field name, which is the JSON key on the wire. */
  readonly name: string;
  readonly type: ValueType;
  readonly kind: 'single' | 'required' | 'optional' | 'list' | 'map';
  /** Key type of a map. */
  readonly key?: 'string' | 'int32' | 'int64' | 'bool';
}

/** A message's field table, keyed by the ts-proto property names (the compiler checks them all). */
export interface MessageCodec<T> {
  readonly typeName: string;
  readonly fields: { readonly [K in keyof T]-?: FieldSpec };
}

/** Build a message's field table (generated code calls this). */
export function message<T>(typeName: string, fields: { readonly [K in keyof T]-?: FieldSpec }): MessageCodec<T> {
  return { typeName, fields };
}

/** Build one field spec (generated code calls this). */
export function field(name: string, type: ValueType, kind: FieldSpec['kind'] = 'single', key?: FieldSpec['key']): FieldSpec {
  return key === undefined ? { name, type, kind } : { name, type, kind, key };
}

/** proto3 JSON of a message (defaults omitted, proto field names). */
export function toJson<T>(codec: MessageCodec<T>, value: unknown): JsonObject {
  const out: JsonObject = {};
  const object = value as Record<string, unknown>;
  const fields = codec.fields as Record<string, FieldSpec>;
  for (const local of Object.keys(fields)) {
    const spec = fields[local];
    const x = object[local];
    if (x === undefined || (x === null && spec.type !== 'json')) continue;
    if (spec.kind === 'list') {
      const list = x as unknown[];
      if (list.length > 0) out[spec.name] = list.map((e) => encodeValue(spec.type, e));
    } else if (spec.kind === 'map') {
      const entries = Object.entries(x as Record<string, unknown>);
      if (entries.length > 0) out[spec.name] = Object.fromEntries(entries.map(([k, e]) => [k, encodeValue(spec.type, e)]));
    } else if (spec.kind !== 'single' || !isDefault(spec.type, x)) {
      out[spec.name] = encodeValue(spec.type, x);
    }
  }
  return out;
}

/** A ts-proto object from proto3 JSON; unknown keys are ignored (a newer server may send more). */
export function fromJson<T>(codec: MessageCodec<T>, json: unknown, path: string = codec.typeName): T {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new TypeError(`${path}: expected a JSON object`);
  const object = json as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const fields = codec.fields as Record<string, FieldSpec>;
  for (const local of Object.keys(fields)) {
    const spec = fields[local];
    const x = object[spec.name];
    const at = `${path}.${spec.name}`;
    if (spec.kind === 'list') {
      if (x != null && !Array.isArray(x)) throw new TypeError(`${at}: expected an array`);
      out[local] = x == null ? [] : x.map((e, i) => decodeValue(spec.type, e, `${at}[${i}]`));
    } else if (spec.kind === 'map') {
      if (x != null && (typeof x !== 'object' || Array.isArray(x))) throw new TypeError(`${at}: expected an object`);
      const entries = x == null ? [] : Object.entries(x as Record<string, unknown>);
      out[local] = Object.fromEntries(entries.map(([k, e]) => [spec.key === 'int32' ? Number(k) : k, decodeValue(spec.type, e, `${at}.${k}`)]));
    } else if (x === undefined || (x === null && spec.type !== 'json')) {
      out[local] = spec.kind === 'optional' ? undefined : defaultOf(spec.type);
    } else {
      out[local] = decodeValue(spec.type, x, at);
    }
  }
  return out as T;
}

function isDefault(type: ValueType, x: unknown): boolean {
  switch (type) {
    case 'string':
      return x === '';
    case 'bool':
      return x === false;
    case 'int32':
    case 'double':
      return x === 0;
    case 'int64':
      return String(x) === '0';
    case 'bytes':
      return (x as Uint8Array).length === 0;
    case 'json':
    case 'raw':
      return false;
    default:
      return typeof type === 'function' ? false : x === 0;
  }
}

function defaultOf(type: ValueType): unknown {
  switch (type) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int32':
    case 'double':
      return 0;
    case 'int64':
      return '0';
    case 'bytes':
      return new Uint8Array(0);
    case 'json':
    case 'raw':
      return undefined;
    default:
      return typeof type === 'function' ? undefined : 0;
  }
}

function encodeValue(type: ValueType, x: unknown): JsonValue {
  switch (type) {
    case 'string':
    case 'bool':
    case 'int32':
      return x as JsonValue;
    case 'int64':
      return String(x);
    case 'double':
      return Number.isFinite(x) ? (x as number) : String(x);
    case 'json':
      return x as JsonValue;
    case 'raw':
      throw new TypeError('a google.api.HttpBody is not sent as JSON');
    case 'bytes': {
      let binary = '';
      for (const b of x as Uint8Array) binary += String.fromCharCode(b);
      return btoa(binary);
    }
    default:
      if (typeof type === 'function') return toJson(type(), x);
      return type.names[x as number] ?? (x as number);
  }
}

function decodeValue(type: ValueType, x: unknown, at: string): unknown {
  const fail = (what: string) => new TypeError(`${at}: expected ${what}, got ${JSON.stringify(x)?.slice(0, 40)}`);
  switch (type) {
    case 'string':
      if (typeof x !== 'string') throw fail('a string');
      return x;
    case 'bool':
      if (typeof x !== 'boolean') throw fail('true or false');
      return x;
    case 'int32': {
      const n = typeof x === 'string' && /^-?\d+$/.test(x) ? Number(x) : x;
      if (typeof n !== 'number' || !Number.isInteger(n)) throw fail('an integer');
      return n;
    }
    case 'int64':
      if (typeof x === 'number' && Number.isInteger(x)) return String(x);
      if (typeof x !== 'string' || !/^-?\d+$/.test(x)) throw fail('an integer');
      return x;
    case 'double': {
      if (typeof x === 'number') return x;
      if (x === 'NaN' || x === 'Infinity' || x === '-Infinity' || (typeof x === 'string' && /^-?\d/.test(x))) return Number(x);
      throw fail('a number');
    }
    case 'json':
      return x;
    case 'raw':
      throw fail('no JSON (a google.api.HttpBody is the raw body)');
    case 'bytes': {
      if (typeof x !== 'string') throw fail('base64 text');
      const binary = atob(x.replace(/-/g, '+').replace(/_/g, '/'));
      return Uint8Array.from(binary, (c) => c.charCodeAt(0));
    }
    default:
      if (typeof type === 'function') return fromJson(type(), x, at);
      if (typeof x === 'number') return x;
      if (typeof x !== 'string') throw fail(`a ${type.enumName} name`);
      for (const [n, name] of Object.entries(type.names)) if (name === x) return Number(n);
      return -1; // ts-proto's UNRECOGNIZED
  }
}

// ---- the call

/** A piece of a path template: literal text, or a request field (a proto field path, `a.b`). */
export type PathPart = string | { readonly field: string; readonly multi: boolean };

/** One REST binding of an RPC, from its `google.api.http` rule (generated). */
export interface MethodSpec<I = any, O = any> {
  /** The RPC's name, e.g. `GetEntity`. */
  readonly name: string;
  /** The client's method for it, e.g. `getEntity`. */
  readonly method: string;
  /** HTTP method. */
  readonly verb: string;
  /** The path template as written in the proto. */
  readonly template: string;
  readonly path: readonly PathPart[];
  /** `*` (the whole request but path fields), a proto field name, or empty (no body: query). */
  readonly body: string;
  /** Empty (the whole response) or the response field sent as the body. */
  readonly responseBody: string;
  readonly input: MessageCodec<I>;
  readonly output: MessageCodec<O>;
  /** A client stream: the requests are sent as one NDJSON body. */
  readonly stream?: boolean;
  /** The answer is a google.api.HttpBody (whole, or as `responseBody`): the raw body and its content type. */
  readonly rawBody?: boolean;
  /** A paginated list: the output's repeated field of items, and the cursor fields (ts-proto names). */
  readonly page?: { readonly items: string; readonly cursor: string; readonly nextCursor: string };
}

/** Options of a client (every call). */
export interface ClientOptions {
  /** Where the REST gateway is, e.g. `http://127.0.0.1:8080` (paths start with `/v1/`). */
  readonly baseUrl: string;
  /** API key sent as `Authorization: Bearer …`. */
  readonly apiKey?: string;
  /** Headers for every call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default timeout of every call in milliseconds (none by default). */
  readonly timeoutMs?: number;
  /** The fetch to use (default: the global one), e.g. to add logging or a proxy agent. */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/** Options of one call; they override the client's. */
export interface CallOptions {
  readonly apiKey?: string;
  /** `Idempotency-Key`: retrying a POST with the same key replays the first answer (24 hours). */
  readonly idempotencyKey?: string;
  /** Cancels the call; the promise then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Gives up after this many milliseconds (ApiError `deadline_exceeded`, status 0); the service
   * is told the deadline too (`Grpc-Timeout`), so it stops working on the call.
   */
  readonly timeoutMs?: number;
  /** Extra headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Codes of failures that happen before or without an answer of the service. */
const STATUS_CODES: Readonly<Record<number, string>> = {
  400: 'invalid_argument', 401: 'unauthenticated', 403: 'permission_denied', 404: 'not_found',
  405: 'method_not_allowed', 409: 'already_exists', 413: 'payload_too_large', 415: 'unsupported_media_type',
  422: 'failed_precondition', 429: 'quota_exceeded', 503: 'unavailable', 504: 'deadline_exceeded',
};

/** What an ApiError carries. */
export interface ApiErrorInit {
  readonly code: string;
  readonly message: string;
  /** HTTP status of the answer; 0 when there was none (timeout, network failure, bad request built). */
  readonly status: number;
  readonly requestId?: string;
  /** Seconds to wait before retrying (`Retry-After`), when the service said. */
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;
  /** Headers of the answer, when there was one. */
  readonly headers?: Headers;
  readonly cause?: unknown;
}

/** Every failure of a call: the service's error body (`code`, `message`, `request_id`) and more. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: string;
  readonly status: number;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Headers | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
    this.headers = init.headers;
  }

  /** The error of a non-2xx answer (the service's JSON error body, or a stand-in for a foreign one). */
  static fromResponse(res: Response, text: string): ApiError {
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      // not our error body (e.g. a proxy's HTML page): described by its status below
    }
    const retry = res.headers.get('retry-after');
    const seconds = retry === null ? undefined : /^\d+$/.test(retry) ? Number(retry) : Math.max(0, Math.ceil((Date.parse(retry) - Date.now()) / 1000));
    return new ApiError({
      code: typeof body.code === 'string' ? body.code : (STATUS_CODES[res.status] ?? (res.status >= 500 ? 'internal' : 'invalid_argument')),
      message: typeof body.message === 'string' ? body.message : `HTTP ${res.status} ${res.statusText}`.trim(),
      status: res.status,
      requestId: typeof body.request_id === 'string' ? body.request_id : (res.headers.get('request-id') ?? undefined),
      retryAfter: Number.isFinite(seconds) ? seconds : undefined,
      details: body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : undefined,
      headers: res.headers,
    });
  }
}

/** Base class of the generated service clients. */
export class RestClient {
  private readonly baseUrl: string;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** A unary call. */
  protected async unary<I, O>(spec: MethodSpec<I, O>, request: unknown, call: CallOptions = {}): Promise<O> {
    const json = toJson(spec.input, request);
    const path = expandPath(spec, json);
    const query = new URLSearchParams();
    let body: JsonValue | undefined;
    if (spec.body === '*') body = json;
    else {
      if (spec.body !== '') body = json[spec.body];
      addQuery(query, spec.input, json, '', spec.body);
    }
    const qs = query.toString();
    return this.send(spec, path + (qs ? `?${qs}` : ''), body === undefined ? undefined : JSON.stringify(body), 'application/json', call);
  }

  /** A client stream: every request becomes one line of an NDJSON body. */
  protected async clientStream<I, O>(spec: MethodSpec<I, O>, requests: Iterable<unknown> | AsyncIterable<unknown>, call: CallOptions = {}): Promise<O> {
    const lines: string[] = [];
    for await (const request of requests) lines.push(`${JSON.stringify(toJson(spec.input, request))}\n`);
    return this.send(spec, expandPath(spec, {}), lines.join(''), 'application/x-ndjson', call);
  }

  /** Every item of a paginated list, page by page (following `next_cursor`). */
  protected async *paginate<I, O, T>(spec: MethodSpec<I, O>, request: unknown, call: CallOptions = {}): AsyncGenerator<T, void, undefined> {
    const page = spec.page!;
    let next = { ...(request as object) } as Record<string, unknown>;
    for (;;) {
      const response = (await this.unary(spec, next, call)) as Record<string, unknown>;
      yield* response[page.items] as T[];
      const cursor = response[page.nextCursor];
      if (!cursor) return;
      next = { ...next, [page.cursor]: cursor };
    }
  }

  private async send<O>(spec: MethodSpec<unknown, O>, path: string, body: string | undefined, contentType: string, call: CallOptions): Promise<O> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...call.headers };
    if (body !== undefined) headers['content-type'] = contentType;
    const apiKey = call.apiKey ?? this.options.apiKey;
    if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    const timeoutMs = call.timeoutMs ?? this.options.timeoutMs;
    const signals = call.signal ? [call.signal] : [];
    let timeout: AbortSignal | undefined;
    if (timeoutMs !== undefined) {
      headers['grpc-timeout'] = `${Math.min(99_999_999, Math.max(1, Math.ceil(timeoutMs)))}m`;
      signals.push((timeout = AbortSignal.timeout(timeoutMs)));
    }
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const fetchFn = this.options.fetch ?? ((url: string, init: RequestInit) => globalThis.fetch(url, init));
    let res: Response;
    let bytes: Uint8Array;
    try {
      res = await fetchFn(this.baseUrl + path, { method: spec.verb, headers, body, signal });
      bytes = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      if (timeout?.aborted && !call.signal?.aborted) {
        throw new ApiError({ code: 'deadline_exceeded', message: `${spec.name}: no answer within ${timeoutMs} ms`, status: 0, cause: err });
      }
      if (call.signal?.aborted) throw err;
      throw new ApiError({ code: 'unavailable', message: `${spec.name}: ${(err as Error)?.message ?? 'network failure'}`, status: 0, cause: err });
    }
    const text = new TextDecoder().decode(bytes);
    if (res.status < 200 || res.status > 299) throw ApiError.fromResponse(res, text);
    if (spec.rawBody) {
      const raw = { contentType: res.headers.get('content-type') ?? '', data: bytes, extensions: [] };
      if (!spec.responseBody) return raw as O;
      const fields = spec.output.fields as Record<string, FieldSpec>;
      const local = Object.keys(fields).find((k) => fields[k].name === spec.responseBody)!;
      return { ...(fromJson(spec.output, {}) as object), [local]: raw } as O;
    }
    const fail = (cause: unknown) =>
      new ApiError({ code: 'internal', message: `${spec.name}: undecodable response (${(cause as Error)?.message})`, status: res.status, requestId: res.headers.get('request-id') ?? undefined, headers: res.headers, cause });
    try {
      const json: unknown = JSON.parse(text);
      if (!spec.responseBody) return fromJson(spec.output, json);
      const fields = spec.output.fields as Record<string, FieldSpec>;
      const local = Object.keys(fields).find((k) => fields[k].name === spec.responseBody)!;
      return { ...(fromJson(spec.output, {}) as object), [local]: decodeValue(fields[local].type, json, `${spec.output.typeName}.${spec.responseBody}`) } as O;
    } catch (err) {
      throw fail(err);
    }
  }
}

/** A request that cannot be sent as asked (status 0: nothing went over the network). */
function badRequest(message: string): ApiError {
  return new ApiError({ code: 'invalid_argument', message, status: 0 });
}

/** Fill the template from the request JSON, removing the fields it used (they are not sent twice). */
function expandPath(spec: MethodSpec, json: JsonObject): string {
  let out = '';
  for (const part of spec.path) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const names = part.field.split('.');
    let holder: JsonObject | undefined = json;
    for (const name of names.slice(0, -1)) holder = holder?.[name] as JsonObject | undefined;
    const last = names[names.length - 1];
    const value = holder?.[last];
    if (value === undefined || value === '' || (typeof value === 'object' && value !== null)) {
      throw badRequest(`${part.field}: required (it is part of the URL path ${spec.template})`);
    }
    delete holder![last];
    const text = String(value);
    const encode = (segment: string) => encodeSegment(segment, part.field, spec.template);
    out += part.multi ? text.split('/').map(encode).join('/') : encode(text);
  }
  return out;
}

/**
 * One segment of a path parameter: everything but `[-_.~0-9A-Za-z]` percent-encoded (http.proto's
 * rule for a path segment), so `/`, `?`, `#` and `%` stay inside the value. A segment `.` or `..`
 * is refused, because no spelling of it survives the trip: URL parsers (WHATWG URL, so every
 * `fetch`) resolve `.`, `..`, `%2E` and `%2E%2E` alike as dot-segments, and the call would reach
 * another resource (`deleteRelation({ kind: '..', parent: 'entities', child: 'sku:a' })` would
 * become `DELETE /v1/entities/sku:a`). No identifier of this API is `.` or `..`.
 */
function encodeSegment(segment: string, field: string, template: string): string {
  if (segment === '.' || segment === '..') {
    throw badRequest(`${field}: ${JSON.stringify(segment)} cannot be part of the URL path ${template} (URL parsers resolve a "." or ".." segment, encoded or not, so the call would reach another resource)`);
  }
  try {
    return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  } catch {
    throw badRequest(`${field}: the value is not well-formed UTF-16 (a lone surrogate), so it cannot be part of the URL path ${template}`);
  }
}

/** The fields not in the path or body, as query parameters (`a.b=1`, repeated keys for lists). */
function addQuery(query: URLSearchParams, codec: MessageCodec<unknown>, json: JsonObject, prefix: string, bodyField: string): void {
  for (const spec of Object.values(codec.fields as Record<string, FieldSpec>)) {
    const key = prefix + spec.name;
    const x = json[spec.name];
    if (x === undefined || key === bodyField) continue;
    if (spec.kind === 'map') throw badRequest(`${key}: a map cannot be sent in the query string`);
    if (typeof spec.type === 'function') {
      if (spec.kind === 'list') throw badRequest(`${key}: a list of messages cannot be sent in the query string`);
      addQuery(query, spec.type(), x as JsonObject, `${key}.`, bodyField);
    } else if (Array.isArray(x)) {
      for (const e of x) query.append(key, String(e));
    } else {
      query.append(key, String(x));
    }
  }
}
