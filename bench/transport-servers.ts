/**
 * Child-process servers for the transport benchmark (run one at a time, each in its own
 * process, so the load generator does not share an event loop with the server):
 *   service  — the real service (fresh SQLite, one account, one entity); prints its ports and key
 *   express  — a bare Express handler returning fixed bytes
 *   grpc     — a bare grpc-js handler returning fixed bytes
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import * as grpc from '@grpc/grpc-js';
import { loadConfig } from '../src/config';
import { startService } from '../src/service';

async function main(): Promise<void> {
  const [kind, bytesFile] = process.argv.slice(2);
  if (kind === 'service') {
    const dir = mkdtempSync(join(tmpdir(), 'forecast-bench-'));
    const config = loadConfig({ HTTP_PORT: '0', GRPC_PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'error' });
    const service = await startService(config);
    const { created } = await service.ctx.accounts.createAccount('enterprise', null);
    const endpoint = service.pipeline.methods.get('/forecast.v1.EntityService/CreateEntity')!;
    const outcome = await service.pipeline.unary(
      endpoint,
      () => ({ entity: 'store:berlin', displayName: 'Berlin Mitte', frequency: 'P1D', seasonLength: 0, axes: [{ name: 'demand', unit: 'units', kind: 'count' }, { name: 'revenue', unit: 'EUR', kind: '' }], parents: [] }),
      { protocol: 'rest', peer: 'bench', header: (n) => (n === 'authorization' ? `Bearer ${created.apiKey}` : undefined) },
    );
    if (!outcome.ok) throw outcome.error;
    process.stdout.write(JSON.stringify({ http: service.httpPort, grpc: service.grpcPort, key: created.apiKey }) + '\n');
  } else if (kind === 'express') {
    const { json } = JSON.parse(readFileSync(bytesFile, 'utf8')) as { json: string };
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.get('/v1/entities/:entity', (_req, res) => {
      res.type('application/json').send(json);
    });
    const server = app.listen(0, '127.0.0.1', () => {
      process.stdout.write(JSON.stringify({ http: (server.address() as { port: number }).port }) + '\n');
    });
  } else if (kind === 'grpc') {
    const { proto } = JSON.parse(readFileSync(bytesFile, 'utf8')) as { proto: string };
    const bytes = Buffer.from(proto, 'base64');
    const server = new grpc.Server();
    const id = (b: Buffer) => b;
    server.addService(
      { getEntity: { path: '/forecast.v1.EntityService/GetEntity', requestStream: false, responseStream: false, requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id } },
      { getEntity: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, bytes) },
    );
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) throw err;
      process.stdout.write(JSON.stringify({ grpc: port }) + '\n');
    });
  } else {
    throw new Error(`unknown server kind ${kind}`);
  }
}

// Exit cleanly on signals so --cpu-prof and friends can write their output.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
