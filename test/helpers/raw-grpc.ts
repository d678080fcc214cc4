/**
 * gRPC by hand over node:http2, for what a generated client will not send: malformed protobuf
 * bytes, an expired `grpc-timeout`, odd metadata. One session per helper, reused across calls.
 */
import * as http2 from 'node:http2';
import { connect as connectTcp } from 'node:net';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';

export interface RawGrpcReply {
  /** gRPC status (0 = OK); -1 when the stream failed without one. */
  readonly status: number;
  readonly message: string;
  /** Our error code (google.rpc.ErrorInfo.reason), if the status carried details. */
  readonly reason: string | undefined;
  /** `request-id` from headers or trailers. */
  readonly requestId: string | undefined;
  /** Response messages' payloads (without the 5-byte frame header). */
  readonly messages: Buffer[];
  /** Initial headers and trailers, merged (lower-case names). */
  readonly metadata: Record<string, string>;
}

/** Frame `messages` as a gRPC request body (uncompressed, length-prefixed). */
export function frame(...messages: Buffer[]): Buffer {
  return Buffer.concat(
    messages.flatMap((m) => {
      const head = Buffer.alloc(5);
      head.writeUInt32BE(m.length, 1);
      return [head, m];
    }),
  );
}

export class RawGrpc {
  private session: http2.ClientHttp2Session | undefined;

  /** `localAddress`: the address to connect from (any of 127.0.0.0/8 on Linux), to be another client. */
  constructor(
    private readonly address: string,
    private readonly localAddress?: string,
  ) {}

  /** Whether the connection (once made) has been closed, by either side. */
  get closed(): boolean {
    return this.session !== undefined && (this.session.closed || this.session.destroyed);
  }

  private connect(): http2.ClientHttp2Session {
    if (!this.session || this.session.closed || this.session.destroyed) {
      const [host, port] = [this.address.slice(0, this.address.lastIndexOf(':')), Number(this.address.slice(this.address.lastIndexOf(':') + 1))];
      const local = this.localAddress;
      this.session = http2.connect(`http://${this.address}`, local ? { createConnection: () => connectTcp({ host, port, localAddress: local }) } : {});
      this.session.on('error', () => undefined);
    }
    return this.session;
  }

  /** Send `body` (already framed) to `path` with `metadata`; resolves with the reply. */
  call(path: string, body: Buffer, metadata: Record<string, string> = {}, timeoutMs = 30_000): Promise<RawGrpcReply> {
    return new Promise((resolve) => {
      const headers: Record<string, string> = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...metadata };
      let req: http2.ClientHttp2Stream;
      try {
        req = this.connect().request(headers);
      } catch (err) {
        resolve({ status: -1, message: String(err), reason: undefined, requestId: undefined, messages: [], metadata: {} });
        return;
      }
      const meta: Record<string, string> = {};
      const chunks: Buffer[] = [];
      const take = (h: http2.IncomingHttpHeaders) => {
        for (const [k, v] of Object.entries(h)) if (typeof v === 'string') meta[k] = v;
      };
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        const data = Buffer.concat(chunks);
        const messages: Buffer[] = [];
        for (let at = 0; at + 5 <= data.length; ) {
          const n = data.readUInt32BE(at + 1);
          messages.push(data.subarray(at + 5, at + 5 + n));
          at += 5 + n;
        }
        const details = meta['grpc-status-details-bin'];
        const info = details ? decodeErrorInfo(Buffer.from(details, 'base64')) : undefined;
        resolve({
          status: meta['grpc-status'] === undefined ? -1 : Number(meta['grpc-status']),
          message: decodeURIComponent(meta['grpc-message'] ?? ''),
          reason: info?.reason,
          requestId: meta['request-id'],
          messages,
          metadata: meta,
        });
      };
      const timer = setTimeout(() => {
        req.close(http2.constants.NGHTTP2_CANCEL);
        finish();
      }, timeoutMs);
      req.on('response', take);
      req.on('trailers', take);
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', finish);
      req.on('close', finish);
      req.on('error', finish);
      req.end(body);
    });
  }

  close(): void {
    this.session?.close();
  }

  /** Close the connection now, calls in flight with it. */
  destroy(): void {
    this.session?.destroy();
  }
}
