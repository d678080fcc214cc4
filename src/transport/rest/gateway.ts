/**
 * The REST gateway as one Express middleware: it matches the route table compiled from the
 * `google.api.http` annotations (its own matcher: no API path is written by hand), turns the HTTP
 * request into a call (JSON ↔ generated messages via the descriptor image) and hands it to the
 * same pipeline the gRPC server uses. A request no route matches goes on to the next middleware
 * (the site). Mounted by `createRestApp` (app.ts) behind the operator's Express middleware.
 *
 * The hot path works on the bare Node request and response (why: Express's response helpers
 * cost as much as a cached API call); Express contributes the middleware chain around it.
 * Bodies are read only after authentication (inside the pipeline's `decode`), so a caller
 * without a valid key gets 401 before a byte of its upload is buffered.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Principal } from '../../accounts/auth';
import type { Clock } from '../../clock';
import { newId } from '../../ids';
import type { Logger } from '../../log';
import type { IncomingCall } from '../../rpc/context';
import { ServiceError } from '../../rpc/errors';
import { API_VERSION, type CallOutcome, type Pipeline } from '../../rpc/pipeline';
import type { Arrival, RequestIntake } from '../request-intake';
import { checkContentEncoding, hasBody, mediaType, ndjsonLines, parseJson, readBody, type NdjsonLine } from './body';
import { decodeRequest, encodeJson, encodeResponse, rawResponse } from './json-codec';
import { PathDecodeError } from './path-template';
import type { Route, RouteTable } from './route-table';

export interface GatewayOptions {
  readonly maxBodyBytes: number;
  /** Most bytes of a newline-delimited client stream (`Config.maxStreamBytes`). */
  readonly maxStreamBytes: number;
  /** Most bytes of one line of such a stream: one message, as large as a gRPC message may be (`Config.maxGrpcMessageBytes`). */
  readonly maxLineBytes: number;
  /** The process's budget of request bytes still arriving, shared with the gRPC server. */
  readonly intake: RequestIntake;
  readonly clock: Clock;
  readonly log: Logger;
}

const JSON_TYPES = new Set(['application/json']);
const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/jsonl', 'application/json-seq']);
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** Headers of which Node's `req.headers` keeps only the first line (Node's `message.headers` documentation). */
const FIRST_LINE_ONLY = new Set(['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent']);

/** The API: every route of the table through the pipeline; anything else goes to `next`. */
export function apiMiddleware(pipeline: Pipeline, routes: RouteTable, options: GatewayOptions): RequestHandler {
  const fail = (res: ServerResponse, err: unknown) => {
    const error = ServiceError.from(err);
    if (error.code === 'internal') options.log.error('gateway error', { error: err });
    sendError(res, error, callHeaders(options.clock));
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const url = req.url;
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    // HEAD answers as GET without a body (Node sends no body for HEAD).
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    let match;
    try {
      match = routes.match(method, rawPath);
    } catch (err) {
      if (err instanceof PathDecodeError) return sendError(res, new ServiceError('invalid_argument', `path: ${err.message}`), callHeaders(options.clock));
      return fail(res, err);
    }
    if (match.kind === 'not_found') return next();
    if (match.kind === 'method_not_allowed') {
      const allowed = match.allowed.includes('GET') ? [...match.allowed, 'HEAD'].sort() : match.allowed;
      return sendError(res, new ServiceError('method_not_allowed', `${req.method} is not allowed on ${rawPath.slice(0, 200)}; allowed: ${allowed.join(', ')}`), {
        ...callHeaders(options.clock),
        allow: allowed.join(', '),
      });
    }
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    // The body's bytes count against the process's budget while it arrives; an answer given
    // before it ended, or a failed read, lets them go once the call is over.
    const arrival = options.intake.open('request body');
    serve(pipeline, match.route, match.vars, query, options, req, res, arrival)
      .catch((err) => fail(res, err))
      .finally(() => arrival.close());
  };
}

/** Headers of an answer the pipeline did not produce (it sets the same two on its own). */
export function callHeaders(clock: Clock): Record<string, string> {
  return { 'request-id': newId('req', clock), 'api-version': API_VERSION };
}

async function serve(
  pipeline: Pipeline,
  route: Route,
  vars: Record<string, string>,
  query: URLSearchParams,
  options: GatewayOptions,
  req: IncomingMessage,
  res: ServerResponse,
  arrival: Arrival,
): Promise<void> {
  const incoming = new RestIncoming(req, res, arrival);
  // No cache, browser's or proxy's, keeps an API answer (OWASP REST Security): they are one
  // account's data, some carry secrets shown once (a new API key, a webhook secret) and an error
  // is of its moment. An endpoint may say otherwise (the public JWKS: `public, max-age`).
  res.setHeader('cache-control', 'no-store');
  // A misspelt deadline must not silently mean none: refused as the request is read (after
  // authentication, as any malformed request, so the answer carries what the others carry).
  const checkTimeout = () => {
    const timeout = req.headers['grpc-timeout'];
    if (timeout === undefined || parseGrpcTimeout(timeout) !== undefined) return;
    const shown = JSON.stringify(String(timeout).slice(0, 40));
    throw new ServiceError('invalid_argument', `Grpc-Timeout: expected 1 to 8 digits and a unit (H, M, S, m, u or n), e.g. 30S or 500m, got ${shown}`, { field: 'Grpc-Timeout' });
  };
  let outcome: CallOutcome<unknown>;
  if (route.entry.definition.requestStream) {
    // Read lazily, as the endpoint iterates: after authentication, never buffered whole.
    async function* messages(): AsyncGenerator<unknown> {
      checkTimeout();
      const type = mediaType(req.headers['content-type']);
      if (hasBody(req) && (!type || !NDJSON_TYPES.has(type))) {
        throw new ServiceError('unsupported_media_type', `${route.entry.name} takes newline-delimited JSON: Content-Type must be application/x-ndjson, got ${type ?? 'none'}`);
      }
      checkContentEncoding(req);
      let i = 0;
      for await (const line of ndjsonLines(req, { body: options.maxStreamBytes, line: options.maxLineBytes }, arrival)) yield decodeLine(route, line, i++);
    }
    outcome = await pipeline.clientStream(route.entry, messages(), incoming);
  } else {
    outcome = await pipeline.unary(
      route.entry,
      async () => {
        checkTimeout();
        const body = route.body ? await readJsonBody(req, options.maxBodyBytes, arrival) : undefined;
        return route.entry.definition.requestDeserialize(decodeRequest(route, vars, query, body));
      },
      incoming,
    );
  }
  if (!req.readableEnded && hasBody(req)) leaveBody(req, res, outcome, arrival, options);
  if (!outcome.ok) return sendError(res, outcome.error, outcome.headers);
  const bytes = route.entry.definition.responseSerialize(outcome.response);
  if (route.rawBody) {
    const { contentType, data } = rawResponse(route, bytes);
    return sendBody(res, 200, outcome.headers, contentType, data);
  }
  sendJson(res, 200, outcome.headers, JSON.stringify(encodeResponse(route, bytes)));
}

/**
 * How long, at most, the rest of a body answered early is read and dropped (`leaveBody`): a
 * client sending at 1 MB/s gets 60 MB through, more than a stream may hold.
 */
const DRAIN_MS = 60_000;

/**
 * Connections reading the rest of a body answered early (`leaveBody`), with that request: a parse
 * error before the request is complete gets no answer of its own (one after it, in the next
 * request, does: Node marks the request complete before it parses the next).
 */
export const draining = new WeakMap<Socket, IncomingMessage>();

/**
 * A call answered before its body was read to its end (a 401 or 404 before any of it was read, a
 * bad NDJSON line): the rest is read and dropped, within `maxStreamBytes` and `DRAIN_MS`, and the
 * connection kept. Closing it at once instead would reset it under a client still sending (the
 * kernel answers bytes that arrive after the close, or that were never read, with a reset), and
 * a client that sends its whole body before reading the answer (Python's http.client) then lost
 * the answer to a broken pipe: a wrong key on an 8 MB bulk ingest gave no 401 but a broken pipe. Closed at once still, as before: a body refused for its
 * size (413: more would come than is worth reading) or for the intake (503 over the budget,
 * 504 stalled); one declared larger than a stream may be. The connection of a body whose rest
 * has not arrived within `DRAIN_MS` is closed (stalled or trickling alike). While the rest is
 * read, a malformed one (broken chunked framing) closes the connection without a second answer
 * (`draining`: found by review, app.ts answered 400 after the 401).
 */
function leaveBody(req: IncomingMessage, res: ServerResponse, outcome: CallOutcome<unknown>, arrival: Arrival, options: GatewayOptions): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  const refusedForSize = !outcome.ok && outcome.error.code === 'payload_too_large';
  if (refusedForSize || arrival.failed || declared > options.maxStreamBytes) {
    res.setHeader('connection', 'close');
    return;
  }
  let dropped = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DRAIN_MS).unref();
  const done = () => clearTimeout(timer);
  draining.set(req.socket, req);
  req.once('end', () => {
    draining.delete(req.socket);
    done();
  });
  req.once('close', done);
  req.on('error', () => undefined);
  // A read the call began holds the body's 'readable' listener (the async iterator's): without
  // it, the body flows to the listener below.
  req.removeAllListeners('readable');
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > options.maxStreamBytes) cut();
  });
  req.resume();
}

async function readJsonBody(req: IncomingMessage, limit: number, arrival: Arrival): Promise<unknown> {
  const type = mediaType(req.headers['content-type']);
  const typeOk = type !== undefined && JSON_TYPES.has(type);
  // A body of the wrong type is refused before it is read; an empty one is no body at all.
  if (!typeOk && hasBody(req)) throw unsupported(type);
  checkContentEncoding(req);
  const bytes = await readBody(req, limit, arrival);
  if (bytes.length === 0) return undefined;
  if (!typeOk) throw unsupported(type);
  return parseJson(bytes.toString('utf8'));
}

function unsupported(type: string | undefined): ServiceError {
  return new ServiceError('unsupported_media_type', `Content-Type must be application/json, got ${type ?? 'none'}`);
}

/**
 * One NDJSON line as the stream's message `index`. Its errors name the field as the endpoint's
 * stream errors and gRPC do (`messages[1].observations[0].value`), and the line: `line 3: …` in
 * the message, `line` beside `field` in the details (line numbers count blank lines, indices not).
 */
function decodeLine(route: Route, { text, line }: NdjsonLine, index: number): unknown {
  const at = `messages[${index}]`;
  try {
    return route.entry.definition.requestDeserialize(encodeJson(route.input, parseJson(text, at), at));
  } catch (err) {
    const e = ServiceError.from(err);
    throw new ServiceError(e.code, `line ${line}: ${e.message}`, { ...e.details, line });
  }
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
    private readonly arrival: Arrival,
  ) {
    const timeout = parseGrpcTimeout(req.headers['grpc-timeout']);
    this.peer = req.socket.remoteAddress ?? '';
    this.deadline = timeout === undefined ? undefined : Date.now() + timeout;
  }

  /**
   * A header's value; a header sent on several lines gives its values joined by `, `, as HTTP
   * combines field lines (RFC 9110 5.3). Node keeps only the first line of some headers
   * (`Authorization` among them): those are read again from all lines, so that two
   * `Authorization` headers are one malformed credential, never the first one alone.
   */
  header(name: string): string | undefined {
    const v = this.req.headers[name];
    if (Array.isArray(v)) return v.join(', ');
    if (v === undefined || !FIRST_LINE_ONLY.has(name)) return v;
    return this.req.headersDistinct[name]!.join(', ');
  }

  headerValues(name: string): readonly string[] {
    // (Node builds `headersDistinct` for every header on first use: not for one that is absent.)
    return this.req.headers[name] === undefined ? [] : (this.req.headersDistinct[name] ?? []);
  }

  claim(caller: Principal): void {
    this.arrival.claim(caller);
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
  // An error is of its moment: no cache keeps it, whoever answers (a route, or the router's own
  // 404/405/bad path before any route runs, which `serve` never sees), whatever the endpoint said
  // for its answer (the public JWKS's max-age would keep a database outage, or a deadline one
  // client set, in a shared cache for everyone).
  sendJson(res, error.httpStatus, { ...headers, ...error.headers, 'cache-control': 'no-store' }, errorBody(error, headers['request-id']));
}

/** The JSON text of an error body. */
export function errorBody(error: ServiceError, requestId: string): string {
  const body: Record<string, unknown> = { code: error.code, message: error.message, request_id: requestId };
  if (error.details) body.details = error.details;
  return JSON.stringify(body);
}
