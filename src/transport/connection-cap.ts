/**
 * The open connections of one port: at most `Config.maxConnections`, shared between the clients
 * that hold them. Found by review (on feeae21): with the cap alone, one host could hold every
 * connection (gRPC ones kept busy by a public `Health/Watch` call, REST ones by a request whose
 * body never ends) and everyone else was refused.
 *
 * Below the cap a connection is taken in. At the cap, a connection from a client holding fewer
 * than the biggest holder less one is still taken in, and one of the biggest holder's connections
 * is closed for it: its oldest without a call in flight, else its oldest (found by review: always
 * the oldest cut a client's long bulk ingest while its idle keep-alive connections stayed). Any
 * other connection is closed at once, as the cap alone did. One address holding them all (a
 * reverse proxy in front of the service) keeps the cap to itself as before; a client cannot keep
 * another out by opening more, only make the two meet halfway.
 *
 * A client is an IPv4 address, or an IPv6 /64 network: one host is usually given a whole /64,
 * so its addresses count as one. Who holds most is kept by count (`byCount`), so that a
 * connection refused at the cap costs no scan of every client (found by review: 52 µs each with
 * 4,096 clients, on the main thread, for as many as a flood sends).
 */
import type { Socket } from 'node:net';
import { clientOf } from '../client-address';
import type { Logger } from '../log';

/** How often, at most, a port logs that it closed a connection for a newcomer. */
const LOG_EVERY_MS = 60_000;

interface Connection {
  readonly client: string;
  /** `remoteAddress|remotePort`: how a transport that does not see the socket names it. */
  readonly peer: string;
  /** Calls in flight on it (REST requests, gRPC streams). */
  calls: number;
}

export class ConnectionCap {
  private readonly byClient = new Map<string, Set<Socket>>();
  private readonly connections = new Map<Socket, Connection>();
  private readonly byPeer = new Map<string, Socket>();
  /** Clients by the number of connections they hold (a client of n in `byCount.get(n)`). */
  private readonly byCount = new Map<number, Set<string>>();
  private most = 0;
  private lastLogged = -Infinity;

  /** `what` names the port in the log (`REST`, `gRPC`). */
  constructor(
    private readonly max: number,
    private readonly what: string,
    private readonly log: Logger,
  ) {}

  /** Connections open now. */
  get size(): number {
    return this.connections.size;
  }

  /** Take a new connection in, or close it (see above). */
  admit(socket: Socket): void {
    const client = clientOf(socket.remoteAddress);
    const own = this.byClient.get(client)?.size ?? 0;
    if (this.connections.size >= this.max) {
      const biggest = this.biggest();
      if (!biggest || own + 1 >= biggest.sockets.size) {
        socket.destroy();
        return;
      }
      const victim = this.victimOf(biggest.sockets);
      this.forget(victim);
      victim.destroy();
      this.tell(biggest.client, biggest.sockets.size + 1);
    }
    let sockets = this.byClient.get(client);
    if (!sockets) this.byClient.set(client, (sockets = new Set()));
    sockets.add(socket);
    this.move(client, sockets.size - 1, sockets.size);
    const peer = `${socket.remoteAddress}|${socket.remotePort}`;
    this.connections.set(socket, { client, peer, calls: 0 });
    this.byPeer.set(peer, socket);
    socket.once('close', () => this.forget(socket));
  }

  /** A call began on `socket`: the connection is not idle until the returned function is called. */
  callStarted(socket: Socket): () => void {
    const connection = this.connections.get(socket);
    if (!connection) return () => undefined;
    connection.calls++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      connection.calls--;
    };
  }

  /** `callStarted` for a transport that does not see the socket, only its peer's address and port. */
  callStartedAt(address: string | undefined, port: number | undefined): () => void {
    const socket = this.byPeer.get(`${address}|${port}`);
    return socket ? this.callStarted(socket) : () => undefined;
  }

  /** The connection to close for a newcomer: the oldest without a call in flight, else the oldest. */
  private victimOf(sockets: Set<Socket>): Socket {
    for (const socket of sockets) if (this.connections.get(socket)!.calls === 0) return socket;
    return sockets.values().next().value as Socket;
  }

  private forget(socket: Socket): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    this.connections.delete(socket);
    if (this.byPeer.get(connection.peer) === socket) this.byPeer.delete(connection.peer);
    const sockets = this.byClient.get(connection.client)!;
    sockets.delete(socket);
    this.move(connection.client, sockets.size + 1, sockets.size);
    if (sockets.size === 0) this.byClient.delete(connection.client);
  }

  /** `client` went from holding `from` connections to `to`. */
  private move(client: string, from: number, to: number): void {
    const left = this.byCount.get(from);
    left?.delete(client);
    if (left?.size === 0) this.byCount.delete(from);
    if (to > 0) {
      let bucket = this.byCount.get(to);
      if (!bucket) this.byCount.set(to, (bucket = new Set()));
      bucket.add(client);
    }
    if (to > this.most) this.most = to;
    while (this.most > 0 && !this.byCount.has(this.most)) this.most--;
  }

  /** The client holding most connections (of several, the one that got there first). */
  private biggest(): { client: string; sockets: Set<Socket> } | undefined {
    const client = this.byCount.get(this.most)?.values().next().value;
    return client === undefined ? undefined : { client, sockets: this.byClient.get(client)! };
  }

  private tell(client: string, held: number): void {
    const now = Date.now();
    if (now - this.lastLogged < LOG_EVERY_MS) return;
    this.lastLogged = now;
    this.log.warn(`${this.what} port at its connection limit: closed a connection of the client holding most to take in another client's`, {
      maxConnections: this.max,
      client,
      held,
    });
  }
}
