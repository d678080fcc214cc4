/**
 * Run the same case over REST and gRPC and see one normalised outcome, so tests state their
 * expectations once for both protocols (STYLE 14). REST calls go through the generated REST
 * client whenever it can express them (see `rest`).
 */
import { isDeepStrictEqual } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { REST_SERVICES } from '../../gen/rest_clients';
import { ApiError, type CallOptions, type ClientOptions, type MethodSpec, type RestClient } from '../../gen/rest_runtime';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';
import { mediaType, parseJson } from '../../src/transport/rest/body';
import { decodeRequest, encodeJson, encodeResponse, rawResponse } from '../../src/transport/rest/json-codec';
import { openApiDocument } from '../../src/transport/rest/openapi';
import type { Route, RouteMatch } from '../../src/transport/rest/route-table';
import { REST_SERVICES as TEST_REST_SERVICES } from '../gen/rest_clients';
import type { TestService } from './service';

/** The protocol-neutral outcome of a call. */
export interface Outcome {
  readonly protocol: 'rest' | 'grpc';
  /** `ok` or the error code (REST body `code`, gRPC ErrorInfo reason). */
  readonly code: string;
  readonly message: string;
  readonly requestId: string | undefined;
  /** REST: the JSON body; gRPC: the response object (camelCase fields). */
  readonly data: any;
  /** Lower-case response headers (REST) or initial metadata + trailers (gRPC). */
  readonly headers: Record<string, string>;
  /** HTTP status (REST) or gRPC status code. */
  readonly status: number;
}

export interface RestRequest {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  /** Raw body text (overrides `body`). */
  readonly rawBody?: string;
  readonly headers?: Record<string, string>;
}

/**
 * A REST call. A request the generated REST client can express (a route of the table, bound by
 * the method's primary rule, with a body that is a valid request) goes through that client
 * (gen/rest_clients.ts): the body becomes the ts-proto message, the client's method sends it,
 * and its answer must be what the gateway sent (read back, written again, equal to the wire
 * JSON), or its ApiError must carry the wire's code, message, request id and status. So every
 * REST expectation of the tests also tests the client. Anything else (malformed or raw bodies,
 * paths that match no route, foreign credentials) is sent as written with fetch: that tests the
 * gateway, not the client. Either way the outcome is the wire's: `data` is the JSON body.
 */
export async function rest(t: TestService, key: string | undefined, req: RestRequest): Promise<Outcome> {
  const plan = clientPlan(t, req);
  restCalls[plan ? 'client' : 'fetch']++;
  const outcome = await (plan ? viaClient(t, key, plan) : viaFetch(t, key, req));
  checkDocumented(t, req, outcome.status, outcome.headers);
  return outcome;
}

/** The outcome of a call that must succeed (its message when it did not). */
export async function ok(call: Promise<Outcome>): Promise<Outcome> {
  const r = await call;
  if (r.code !== 'ok') throw new Error(`expected ok, got ${r.code}: ${r.message}`);
  return r;
}

const documents = new WeakMap<TestService, any>();

/** The protocol headers (API.md sections 2, 4, 11, 12) the OpenAPI document declares where they are sent. */
const PROTOCOL_HEADERS = ['request-id', 'api-version', 'ratelimit', 'ratelimit-policy', 'retry-after', 'idempotent-replayed', 'www-authenticate'];

/**
 * Every status an operation answers in any test must be listed in its OpenAPI operation, and
 * every protocol header sent with it declared on that response.
 */
function checkDocumented(t: TestService, req: RestRequest, status: number, headers: Record<string, string>): void {
  let match: RouteMatch;
  try {
    match = t.service.routes.match(req.method === 'HEAD' ? 'GET' : req.method, req.path.split('?')[0]);
  } catch {
    return;
  }
  if (match.kind !== 'found') return;
  if (!documents.has(t)) documents.set(t, openApiDocument(t.service.routes));
  const template = match.route.template.template;
  const op = documents.get(t).paths[template]?.[match.route.httpMethod.toLowerCase()];
  if (!op?.responses[String(status)]) {
    throw new Error(`${match.route.httpMethod} ${template} answered ${status}, which its OpenAPI operation does not list (${Object.keys(op?.responses ?? {}).join(', ')}): name the error in the method's proto comment (see src/transport/rest/openapi.ts)`);
  }
  const declared = Object.keys(op.responses[String(status)].headers ?? {}).map((h) => h.toLowerCase());
  const undeclared = PROTOCOL_HEADERS.filter((h) => h in headers && !declared.includes(h));
  if (undeclared.length > 0) throw new Error(`${match.route.httpMethod} ${template} answered ${status} with ${undeclared.join(', ')}, which its OpenAPI response does not declare (see responseHeaders in src/transport/rest/openapi.ts)`);
}

/** How many `rest` calls of this test file went through the generated client, and how many not. */
export const restCalls = { client: 0, fetch: 0 };

type Services = Record<string, { readonly client: new (options: ClientOptions) => RestClient; readonly methods: Record<string, MethodSpec> }>;
const SERVICES: Services = { ...(REST_SERVICES as unknown as Services), ...(TEST_REST_SERVICES as unknown as Services) };

/** How the client would send a request: its method, the message(s) and the call options. */
interface ClientPlan {
  readonly route: Route;
  readonly spec: MethodSpec;
  readonly client: new (options: ClientOptions) => RestClient;
  readonly messages: unknown[];
  readonly idempotencyKey?: string;
  readonly headers: Record<string, string>;
}

function clientPlan(t: TestService, req: RestRequest): ClientPlan | undefined {
  const q = req.path.indexOf('?');
  const rawPath = q === -1 ? req.path : req.path.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : req.path.slice(q + 1));
  let match: RouteMatch;
  try {
    match = t.service.routes.match(req.method, rawPath);
  } catch {
    return undefined; // a malformed path: the gateway's answer is under test
  }
  if (match.kind !== 'found') return undefined;
  const { route, vars } = match;
  const service = SERVICES[route.entry.service];
  const spec = service?.methods[route.entry.name];
  // Another binding of the method (additional_bindings) is not what the client sends.
  if (!spec || spec.verb !== route.httpMethod || spec.template !== route.template.template) return undefined;
  const headers = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const contentType = mediaType(headers['content-type']);
  const idempotencyKey = headers['idempotency-key'];
  delete headers['content-type'];
  delete headers['idempotency-key'];
  if ('authorization' in headers) return undefined; // the test's own credentials
  const def = route.entry.definition;
  try {
    if (spec.stream) {
      if (req.rawBody === undefined || contentType !== 'application/x-ndjson' || [...query.keys()].length > 0) return undefined;
      const lines = req.rawBody.split('\n').filter((l) => l.trim() !== '');
      return { route, spec, client: service.client, messages: lines.map((l) => def.requestDeserialize(encodeJson(route.input, parseJson(l)))), idempotencyKey, headers };
    }
    if (req.rawBody !== undefined || (contentType !== undefined && contentType !== 'application/json') || (req.body !== undefined && !route.body)) return undefined;
    return { route, spec, client: service.client, messages: [def.requestDeserialize(decodeRequest(route, vars, query, req.body))], idempotencyKey, headers };
  } catch {
    return undefined; // not a valid request: sent as written, so the gateway's judgement is tested
  }
}

async function viaClient(t: TestService, key: string | undefined, plan: ClientPlan): Promise<Outcome> {
  let wire: { status: number; headers: Record<string, string>; text: string } | undefined;
  const capture = async (url: string, init: RequestInit): Promise<Response> => {
    const res = await fetch(url, init);
    const text = await res.text();
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    wire = { status: res.status, headers, text };
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const client = new plan.client({ baseUrl: t.baseUrl, apiKey: key, headers: plan.headers, fetch: capture }) as unknown as Record<string, (req: unknown, opts: CallOptions) => Promise<unknown>>;
  const call = client[plan.spec.method].bind(client);
  const options: CallOptions = { idempotencyKey: plan.idempotencyKey };
  const name = `${plan.route.httpMethod} ${plan.route.template.template}`;
  let result: unknown;
  let failure: ApiError | undefined;
  try {
    result = await call(plan.spec.stream ? plan.messages : plan.messages[0], options);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status === 0) throw err; // the client failed on its own
    failure = err;
  }
  if (!wire) throw new Error(`${name}: the REST client answered without a response`);
  const data = parseBody(wire.text);
  if (failure) {
    const seen = { code: failure.code, message: failure.message, request_id: failure.requestId, status: failure.status };
    const sent = { code: data?.code, message: data?.message, request_id: data?.request_id, status: wire.status };
    if (!isDeepStrictEqual(seen, sent)) throw new Error(`${name}: the REST client's ApiError ${JSON.stringify(seen)} differs from the answer ${JSON.stringify(sent)}`);
    const retry = wire.headers['retry-after'];
    if (retry !== undefined && failure.retryAfter !== Number(retry)) throw new Error(`${name}: ApiError.retryAfter ${failure.retryAfter} but Retry-After: ${retry}`);
  } else if (plan.route.rawBody) {
    // a google.api.HttpBody answer: the client hands over the raw body and its content type
    const raw = rawResponse(plan.route, plan.route.entry.definition.responseSerialize(result));
    const text = Buffer.from(raw.data).toString('utf8');
    if (text !== wire.text || raw.contentType !== wire.headers['content-type']) throw new Error(`${name}: the REST client's raw body (${raw.contentType}) differs from the answer (${wire.headers['content-type']})`);
  } else {
    const again = encodeResponse(plan.route, plan.route.entry.definition.responseSerialize(result));
    if (!isDeepStrictEqual(again, data)) throw new Error(`${name}: the REST client read ${JSON.stringify(data)} as something the gateway writes as ${JSON.stringify(again)}`);
  }
  return outcomeOf(wire.status, wire.headers, data);
}

/** A request sent as written. */
async function viaFetch(t: TestService, key: string | undefined, req: RestRequest): Promise<Outcome> {
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  let body: string | undefined = req.rawBody;
  if (body === undefined && req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(t.baseUrl + req.path, { method: req.method, headers, body });
  const data = parseBody(await res.text());
  const h: Record<string, string> = {};
  res.headers.forEach((v, k) => (h[k] = v));
  return outcomeOf(res.status, h, data);
}

function parseBody(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

function outcomeOf(status: number, headers: Record<string, string>, data: any): Outcome {
  const ok = status === 200;
  return {
    protocol: 'rest',
    code: ok ? 'ok' : String(data?.code),
    message: ok ? '' : String(data?.message),
    requestId: headers['request-id'],
    data,
    headers,
    status,
  };
}

/** A unary gRPC call through a generated client method. */
export function grpcCall<Req, Res>(
  client: grpc.Client,
  method: (req: Req, md: grpc.Metadata, opts: Partial<grpc.CallOptions>, cb: (err: grpc.ServiceError | null, res: Res) => void) => grpc.ClientUnaryCall,
  key: string | undefined,
  request: Req,
  extra: Record<string, string> = {},
): Promise<Outcome> {
  const md = new grpc.Metadata();
  if (key !== undefined) md.set('authorization', `Bearer ${key}`);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return new Promise((resolve) => {
    const headers: Record<string, string> = {};
    const call = method.call(client, request, md, {}, (err, res) => {
      if (err) {
        for (const [k, v] of Object.entries(err.metadata?.getMap() ?? {})) if (typeof v === 'string') headers[k] = v;
        const details = err.metadata?.get('grpc-status-details-bin')[0];
        const info = details ? decodeErrorInfo(details as Buffer) : undefined;
        resolve({ protocol: 'grpc', code: info?.reason ?? `grpc:${err.code}`, message: err.details, requestId: headers['request-id'], data: undefined, headers, status: err.code });
      } else {
        resolve({ protocol: 'grpc', code: 'ok', message: '', requestId: headers['request-id'], data: res, headers, status: 0 });
      }
    });
    call.on('metadata', (m: grpc.Metadata) => {
      for (const [k, v] of Object.entries(m.getMap())) if (typeof v === 'string') headers[k] = v;
    });
    call.on('status', (s: grpc.StatusObject) => {
      for (const [k, v] of Object.entries(s.metadata.getMap())) if (typeof v === 'string') headers[k] ??= v;
    });
  });
}
