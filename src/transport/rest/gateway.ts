/**
 * The REST transport: a Node HTTP request listener that matches the compiled route table, turns
 * the HTTP request into a call (JSON ↔ generated messages via the descriptor image) and hands it
 * to the same pipeline the gRPC server uses. No API path is hand-written. API calls are served on
 * the bare Node request and response (why: Express's router and response helpers cost as much
 * as the whole API call on a cached read); Express hosts only the site (sign-up page, OpenAPI)
 * and answers what matches no API route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Request, type Response, type NextFunction } from 'express';
import type { Clock } from '../../clock';
import { newId } from '../../ids';
import type { Logger } from '../../log';
import type { IncomingCall } from '../../rpc/context';
import { ServiceError } from '../../rpc/errors';
import { API_VERSION, type CallOutcome, type Pipeline } from '../../rpc/pipeline';
import { mediaType, parseJson, readBody } from './body';
import { decodeRequest, encodeJson, encodeResponse, rawResponse } from './json-codec';
import { PathDecodeError } from './path-template';
import type { Route, RouteTable } from './route-table';

export interface GatewayOptions {
  readonly maxBodyBytes: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** Non-API handlers (e.g. the sign-up page at `/`), tried when no API route matches. */
  readonly site?: readonly express.RequestHandler[];
}

/** What `http.createServer` takes. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

const JSON_TYPES = new Set(['application/json']);
const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/jsonl', 'application/json-seq']);
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A request listener serving every route of the table through the pipeline, and the site beside it. */
export function createGateway(pipeline: Pipeline, routes: RouteTable, options: GatewayOptions): RequestListener {
  const gatewayHeaders = () => callHeaders(options.clock);
  const fail = (res: ServerResponse, err: unknown) => {
    const error = ServiceError.from(err);
    if (error.code === 'internal') options.log.error('gateway error', { error: err });
    sendError(res, error, gatewayHeaders());
  };
  const site = express();
  site.disable('x-powered-by');
  site.disable('etag');
  for (const handler of options.site ?? []) site.use(handler);
  site.use((req: Request, res: Response) => {
    sendError(res, new ServiceError('not_found', `no route for ${req.method} ${pathOf(req.originalUrl).slice(0, 200)}`), gatewayHeaders());
  });
  // Last resort: anything thrown outside the pipeline becomes the standard error body.
  site.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => fail(res, err));

  return (req, res) => {
    const url = req.url ?? '/';
    const rawPath = pathOf(url);
    let match;
    try {
      match = routes.match(req.method ?? 'GET', rawPath);
    } catch (err) {
      if (err instanceof PathDecodeError) return sendError(res, new ServiceError('invalid_argument', `path: ${err.message}`), gatewayHeaders());
      return fail(res, err);
    }
    if (match.kind === 'not_found') return site(req, res);
    if (match.kind === 'method_not_allowed') {
      return sendError(res, new ServiceError('method_not_allowed', `${req.method} is not allowed on ${rawPath.slice(0, 200)}; allowed: ${match.allowed.join(', ')}`), {
        ...gatewayHeaders(),
        allow: match.allowed.join(', '),
      });
    }
    const q = url.indexOf('?');
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    serve(pipeline, match.route, match.vars, query, options, req, res).catch((err) => fail(res, err));
  };
}

/** Headers of an answer the pipeline did not produce (it sets the same two on its own). */
function callHeaders(clock: Clock): Record<string, string> {
  return { 'request-id': newId('req', clock), 'api-version': API_VERSION };
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

async function serve(
  pipeline: Pipeline,
  route: Route,
  vars: Record<string, string>,
  query: URLSearchParams,
  options: GatewayOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const incoming = incomingOf(req, res);
  let outcome: CallOutcome<unknown>;
  try {
    if (route.entry.definition.requestStream) {
      const lines = await readNdjson(req, route, options.maxBodyBytes);
      outcome = await pipeline.clientStream(route.entry, decodeLines(route, lines), incoming);
    } else {
      const body = route.body ? await readJsonBody(req, options.maxBodyBytes) : undefined;
      outcome = await pipeline.unary(route.entry, () => route.entry.definition.requestDeserialize(decodeRequest(route, vars, query, body)), incoming);
    }
  } catch (err) {
    // Body-level failures (413, 415, malformed JSON) are judged before the pipeline runs.
    return sendError(res, ServiceError.from(err), callHeaders(options.clock));
  }
  if (!outcome.ok) return sendError(res, outcome.error, outcome.headers);
  const bytes = route.entry.definition.responseSerialize(outcome.response);
  if (route.rawBody) {
    const { contentType, data } = rawResponse(route, bytes);
    return sendBody(res, 200, outcome.headers, contentType, data);
  }
  sendJson(res, 200, outcome.headers, JSON.stringify(encodeResponse(route, bytes)));
}

async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const bytes = await readBody(req, limit);
  if (bytes.length === 0) return undefined;
  const type = mediaType(req.headers['content-type']);
  if (!type || !JSON_TYPES.has(type)) {
    throw new ServiceError('unsupported_media_type', `Content-Type must be application/json, got ${type ?? 'none'}`);
  }
  return parseJson(bytes.toString('utf8'));
}

async function readNdjson(req: IncomingMessage, route: Route, limit: number): Promise<string[]> {
  // A stream may be larger than one JSON body: allow up to 64 of them.
  const bytes = await readBody(req, limit * 64);
  const type = mediaType(req.headers['content-type']);
  if (bytes.length > 0 && (!type || !NDJSON_TYPES.has(type))) {
    throw new ServiceError('unsupported_media_type', `${route.entry.name} takes newline-delimited JSON: Content-Type must be application/x-ndjson, got ${type ?? 'none'}`);
  }
  return bytes.toString('utf8').split('\n').filter((l) => l.trim() !== '');
}

async function* decodeLines(route: Route, lines: readonly string[]): AsyncGenerator<unknown> {
  for (const [i, line] of lines.entries()) {
    const object = parseJson(line, `line ${i + 1}`);
    let bytes: Buffer;
    try {
      bytes = encodeJson(route.input, object);
    } catch (err) {
      const e = ServiceError.from(err);
      throw new ServiceError(e.code, `line ${i + 1}: ${e.message}`, e.details);
    }
    yield route.entry.definition.requestDeserialize(bytes);
  }
}

function incomingOf(req: IncomingMessage, res: ServerResponse): IncomingCall {
  return new RestIncoming(req, res);
}

/** The HTTP side of a call. A class so its lazy signal lives on a shared prototype (see `Context` in rpc/pipeline.ts). */
class RestIncoming implements IncomingCall {
  readonly protocol = 'rest';
  readonly peer: string;
  readonly deadline: number | undefined;
  private abort: AbortController | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    const timeout = parseGrpcTimeout(req.headers['grpc-timeout']);
    this.peer = req.socket.remoteAddress ?? '';
    this.deadline = timeout === undefined ? undefined : Date.now() + timeout;
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  }

  // Made on first use: most calls never look at it.
  get signal(): AbortSignal {
    if (!this.abort) {
      const controller = (this.abort = new AbortController());
      const res = this.res;
      res.on('close', () => {
        if (!res.writableFinished) controller.abort();
      });
    }
    return this.abort.signal;
  }
}

/** `Grpc-Timeout` (as grpc-gateway accepts it): digits + unit H/M/S/m/u/n. */
function parseGrpcTimeout(value: string | string[] | undefined): number | undefined {
  const m = typeof value === 'string' ? /^(\d{1,8})([HMSmun])$/.exec(value) : null;
  if (!m) return undefined;
  const scale: Record<string, number> = { H: 3600e3, M: 60e3, S: 1e3, m: 1, u: 1e-3, n: 1e-6 };
  return Number(m[1]) * scale[m[2]];
}

/** Send a JSON body with its status and headers (Content-Length set, so keep-alive needs no chunking). */
function sendJson(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  sendBody(res, status, headers, JSON_CONTENT_TYPE, body);
}

/** Send a body of any content type with its status and headers. */
function sendBody(res: ServerResponse, status: number, headers: Record<string, string>, contentType: string, body: string | Uint8Array): void {
  res.statusCode = status;
  for (const k in headers) res.setHeader(k, headers[k]);
  res.setHeader('content-type', contentType);
  res.setHeader('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  res.end(body);
}

/** The error body of API.md section 4, with its status and headers. */
export function sendError(res: ServerResponse, error: ServiceError, headers: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body: Record<string, unknown> = { code: error.code, message: error.message, request_id: headers['request-id'] };
  if (error.details) body.details = error.details;
  sendJson(res, error.httpStatus, error.headers ? { ...headers, ...error.headers } : headers, JSON.stringify(body));
}
