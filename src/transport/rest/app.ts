/**
 * The Express app serving HTTP. In order: the middleware in front of the API (security headers,
 * CORS from `CORS_ORIGINS`, compression when `COMPRESSION=on`, and any standard Express
 * middleware the operator passes in), the API (one middleware matching the route table compiled
 * from the annotations: gateway.ts), helmet and the site (sign-up page, OpenAPI document, docs),
 * then 404 for anything else. Every answer, API or not,
 * carries `Request-Id` and `API-Version`, and every error has the API's error body, including
 * the answers Node gives to requests it cannot parse (`clientError`).
 */
import { STATUS_CODES as REASON_PHRASES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import compression from 'compression';
import cors from 'cors';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import type { Clock } from '../../clock';
import { ServiceError, type ErrorCode } from '../../rpc/errors';
import type { Pipeline } from '../../rpc/pipeline';
import { hasBody } from './body';
import { apiMiddleware, callHeaders, draining, errorBody, sendError, type GatewayOptions } from './gateway';
import type { RouteTable } from './route-table';

export interface RestAppOptions extends GatewayOptions {
  /** Origins allowed to call the API from browsers (`CORS_ORIGINS`); `*` for any; none: no CORS. */
  readonly corsOrigins: readonly string[];
  /** gzip/deflate answers of 1 KiB and more when the client accepts them (`COMPRESSION`). */
  readonly compression: boolean;
  /** More Express middleware, run in front of the API after the built-in ones. */
  readonly middleware?: readonly RequestHandler[];
  /** The site's handlers (web/site.ts), tried when no API route matches. */
  readonly site?: readonly RequestHandler[];
}

/** Security headers of every answer (OWASP REST Security: no sniffing, no framing, nothing loaded). */
const API_SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['x-content-type-options', 'nosniff'],
  ['content-security-policy', "default-src 'none'; frame-ancestors 'none'"],
];

/** Response headers a browser script may read across origins (the client reads them). */
const EXPOSED_HEADERS = ['request-id', 'api-version', 'retry-after', 'ratelimit', 'ratelimit-policy', 'idempotent-replayed', 'deprecation', 'sunset', 'link', 'www-authenticate'];

/** HTTP status of an error raised by Express or a middleware → our code (closed set). */
const STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'not_found', // serve-static's "forbidden path" (e.g. `..`) is just a file that is not there
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** The app; hand it to `createHttpServer` (http-server.ts). */
export function createRestApp(pipeline: Pipeline, routes: RouteTable, options: RestAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // Every answer: the two security headers that matter for JSON (no MIME sniffing, never framed,
  // load nothing). Precomputed and set in one go: the API's hot path stays lean (helmet's full
  // set, meant for documents, costs a measurable share of a cached call; the site gets it below).
  app.use((_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of API_SECURITY_HEADERS) res.setHeader(name, value);
    next();
  });
  if (options.corsOrigins.length > 0) {
    const any = options.corsOrigins.includes('*');
    // Credentials (cookies) are never allowed: the API authenticates by bearer key, and a
    // wildcard origin with credentials would let any site act as the user.
    app.use(cors({ origin: any ? '*' : [...options.corsOrigins], credentials: false, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 }));
  }
  if (options.compression) app.use(compression());
  for (const m of options.middleware ?? []) app.use(m);
  app.use(apiMiddleware(pipeline, routes, options));
  app.use((req: Request, res: Response, next: NextFunction) => {
    for (const [k, v] of Object.entries(callHeaders(options.clock))) res.setHeader(k, v);
    // No API route took it: whatever answers (the site reads a small form at most) closes the
    // connection if a body came, so that Node does not wait, with no time limit, for the rest of
    // a body nobody reads before the next request (http-server.ts: requestTimeout is off). And
    // the body must keep arriving, as an API body must (request-intake.ts): a connection whose
    // body stops for the idle limit is closed (found by review: a sign-up form sent but for its
    // last byte held its connection for good, one of many one host could hold).
    if (hasBody(req)) {
      res.setHeader('connection', 'close');
      req.socket.setTimeout(options.intake.limits.idleTimeoutMs);
      req.once('end', () => req.socket.setTimeout(0));
    }
    next();
  });
  // The site serves documents: helmet's full set (pages replace the policy with their own, web/site.ts).
  // Referrer-Policy same-origin, not helmet's no-referrer: under no-referrer a browser sends the
  // sign-up form's post with `Origin: null`, which the form's cross-site check must refuse (found
  // by review: browsers without Sec-Fetch-Site, JavaScript off, got 403 from the site's own form).
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"] } },
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  for (const handler of options.site ?? []) app.use(handler);
  app.use((req: Request, res: Response) => {
    sendError(res, new ServiceError('not_found', `no route for ${req.method} ${req.path.slice(0, 200)}`), headersOf(res, options.clock));
  });
  // Anything thrown outside the pipeline becomes the standard error body.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown; statusCode?: unknown })?.status ?? (err as { statusCode?: unknown })?.statusCode;
    const code = typeof status === 'number' && status < 500 ? (STATUS_CODES[status] ?? 'invalid_argument') : undefined;
    const error = code ? new ServiceError(code, (err as Error).message || code) : ServiceError.from(err);
    if (error.code === 'internal') options.log.error('http error', { error: err });
    sendError(res, error, headersOf(res, options.clock));
  });
  return app;
}

/** The headers already set for this answer (its request id), or new ones. */
function headersOf(res: Response, clock: Clock): Record<string, string> {
  const id = res.getHeader('request-id');
  return typeof id === 'string' ? { ...callHeaders(clock), 'request-id': id } : callHeaders(clock);
}

/**
 * Answer what Node cannot parse (broken framing, an over-long request line or headers) or what did
 * not arrive in time (headers still incomplete `headersTimeoutMs` after their first byte) with the
 * API's error body instead of Node's bare reply, where the socket can still take it.
 */
export function handleClientErrors(server: Server, clock: Clock, headersTimeoutMs: number): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET' || draining.get(socket)?.complete === false) return socket.destroy();
    const error =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ServiceError('deadline_exceeded', `request headers: not complete ${headersTimeoutMs / 1000} s after their first byte; send the request line and headers without pausing`, { headers_timeout_ms: headersTimeoutMs })
        : new ServiceError('invalid_argument', err.code === 'HPE_HEADER_OVERFLOW' ? 'request line and headers exceed the 16 KiB limit' : `malformed HTTP request (${err.code ?? 'parse error'})`);
    const headers = callHeaders(clock);
    const body = errorBody(error, headers['request-id']);
    const head = [
      `HTTP/1.1 ${error.httpStatus} ${REASON_PHRASES[error.httpStatus]}`,
      `request-id: ${headers['request-id']}`,
      `api-version: ${headers['api-version']}`,
      'content-type: application/json; charset=utf-8',
      'cache-control: no-store',
      `content-length: ${Buffer.byteLength(body)}`,
      'connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
