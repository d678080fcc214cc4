/**
 * A TCP proxy on loopback in front of a server, to take the server away from one client without
 * stopping it for everyone: `cut()` drops every connection and refuses new ones (as a stopped
 * or unreachable server would), `restore()` accepts them again on the same port.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Drop every open connection and stop listening. */
  cut(): Promise<void>;
  /** Listen again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const port = await listen(0);
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  return {
    port,
    async cut() {
      const closed = stopListening();
      for (const s of sockets) s.destroy();
      await closed;
    },
    async restore() {
      await listen(port);
    },
    async close() {
      const closed = stopListening();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
