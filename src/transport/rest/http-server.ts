/**
 * The HTTP server the REST app runs in, with the limits that keep clients from holding it: a cap
 * on connections, time limits for headers and for a connection that sends nothing, and none on a
 * whole request (the gateway reads a body with an idle limit instead, request-intake.ts). Found by
 * QA (on a1f0179): 1,500 connections, each holding all of a 1 MiB body but its last bytes, took
 * the process to 1.8 GB; nothing limited their number or let them go before Node's 300 s.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../../clock';
import type { Logger } from '../../log';
import { ConnectionCap } from '../connection-cap';
import { handleClientErrors } from './app';

export interface HttpServerOptions {
  /** Most open connections (`Config.maxConnections`), shared between clients (connection-cap.ts). */
  readonly maxConnections: number;
  /**
   * `Config.requestIdleTimeoutMs`, here the longest a client may take over a request's headers
   * (Node's default: 60 s) and to start sending on a new connection: headers are a few hundred
   * bytes, sent at once.
   */
  readonly idleTimeoutMs: number;
  readonly clock: Clock;
  readonly log: Logger;
}

/** How often, at most, Node looks for requests whose headers are late (its default, 30 s, would let one run to 60 s). */
const TIMEOUT_CHECK_MS = 5_000;
/**
 * How long an idle keep-alive connection stays open: longer than the 60 s idle timeout of common
 * load balancers, so that they close first (else one may send a request on a connection the
 * server is closing, and answer its client 502).
 */
const KEEP_ALIVE_MS = 65_000;

/** An HTTP server for `app`, not yet listening. */
export function createHttpServer(app: RequestListener, options: HttpServerOptions): Server {
  const server = createServer(
    {
      headersTimeout: options.idleTimeoutMs,
      // Off: a total limit (Node's default, 300 s) would cut a long but steady bulk ingest, which
      // streams. The gateway fails a body that stops arriving instead (REQUEST_IDLE_TIMEOUT_MS),
      // and the app closes the connection of a request whose body nobody reads (app.ts).
      requestTimeout: 0,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, options.idleTimeoutMs),
      keepAliveTimeout: KEEP_ALIVE_MS,
    },
    app,
  );
  // The cap makes a connection something one client could hold, so none is kept for nothing.
  const cap = new ConnectionCap(options.maxConnections, 'REST', options.log);
  server.on('connection', (socket: Socket) => cap.admit(socket));
  // (A connection with a request in flight is the last a newcomer's takes the place of.)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => res.once('close', cap.callStarted(req.socket)));
  // Node's headersTimeout starts with a request's first byte: a connection that never sends one
  // would stay open for good. It gets as long to start (an idle timeout on its socket, lifted
  // when its request comes: a call may compute for longer without a byte either way, and Node
  // sets its own keep-alive timeout after each answer).
  server.on('connection', (socket: Socket) => socket.setTimeout(options.idleTimeoutMs));
  // (Before the app runs: the app sets a limit again while it reads a body no API route reads, app.ts.)
  server.prependListener('request', (req) => req.socket.setTimeout(0));
  handleClientErrors(server, options.clock, options.idleTimeoutMs);
  return server;
}
