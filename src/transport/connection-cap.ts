/**
 * The open connections of one port: at most `Config.maxConnections`, shared between the clients
 * that hold them. Found by review (on feeae21): with the cap alone, one host could hold every
 * connection (gRPC ones kept busy by a public `Health/Watch` call, REST ones by a request whose
 * body never ends) and everyone else was refused.
 *
 * Below the cap a connection is taken in. At the cap, a connection from a client holding fewer
 * than the biggest holder less one is still taken in, and the biggest holder's oldest connection
 * is closed for it (whatever it was doing: at the cap, the one holding most gives way); any other
 * connection is closed at once, as the cap alone did. One address holding them all (a reverse
 * proxy in front of the service) keeps the cap to itself as before; a client cannot keep another
 * out by opening more, only make the two meet halfway.
 *
 * A client is an IPv4 address, or an IPv6 /64 network: one host is usually given a whole /64,
 * so its addresses count as one.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../log';

/** How often, at most, a port logs that it closed a connection for a newcomer. */
const LOG_EVERY_MS = 60_000;

export class ConnectionCap {
  private readonly byClient = new Map<string, Set<Socket>>();
  private open = 0;
  private lastLogged = -Infinity;

  /** `what` names the port in the log (`REST`, `gRPC`). */
  constructor(
    private readonly max: number,
    private readonly what: string,
    private readonly log: Logger,
  ) {}

  /** Connections open now. */
  get size(): number {
    return this.open;
  }

  /** Take a new connection in, or close it (see above). */
  admit(socket: Socket): void {
    const client = clientOf(socket.remoteAddress);
    const own = this.byClient.get(client)?.size ?? 0;
    if (this.open >= this.max) {
      const biggest = this.biggest();
      if (!biggest || own + 1 >= biggest.sockets.size) {
        socket.destroy();
        return;
      }
      const oldest = biggest.sockets.values().next().value as Socket;
      this.forget(oldest, biggest.client);
      oldest.destroy();
      this.tell(biggest.client, biggest.sockets.size + 1);
    }
    let sockets = this.byClient.get(client);
    if (!sockets) this.byClient.set(client, (sockets = new Set()));
    sockets.add(socket);
    this.open++;
    socket.once('close', () => this.forget(socket, client));
  }

  private forget(socket: Socket, client: string): void {
    const sockets = this.byClient.get(client);
    if (!sockets?.delete(socket)) return;
    this.open--;
    if (sockets.size === 0) this.byClient.delete(client);
  }

  /** The client holding most connections (a scan: it runs only at the cap). */
  private biggest(): { client: string; sockets: Set<Socket> } | undefined {
    let best: { client: string; sockets: Set<Socket> } | undefined;
    for (const [client, sockets] of this.byClient) if (!best || sockets.size > best.sockets.size) best = { client, sockets };
    return best;
  }

  private tell(client: string, held: number): void {
    const now = Date.now();
    if (now - this.lastLogged < LOG_EVERY_MS) return;
    this.lastLogged = now;
    this.log.warn(`${this.what} port at its connection limit: closed the oldest connection of the client holding most to take in another client's`, {
      maxConnections: this.max,
      client,
      held,
    });
  }
}

/**
 * The client a connection is counted against: its IPv4 address (IPv4-mapped IPv6 folded to it),
 * or the /64 network of its IPv6 address (`2001:db8:1:2::/64`).
 */
export function clientOf(address: string | undefined): string {
  if (!address) return '';
  const bare = address.replace(/%.*$/, '');
  if (!bare.includes(':')) return bare;
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare)) return bare.slice(7);
  const [head, tail] = bare.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = tail === undefined ? front : [...front, ...new Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
