/**
 * Child-process servers for the transport benchmark (run one at a time, each in its own
 * process, so the load generator does not share an event loop with the server):
 *   service  — the real service (fresh SQLite, one account, one entity); prints its ports and key
 *   express  — a bare Express handler returning fixed bytes (body and headers)
 *   node     — a bare node:http handler returning fixed bytes (the stricter baseline: the
 *              gateway runs inside Express, on the bare request and response)
 *   grpc     — a bare grpc-js handler returning fixed bytes (message, metadata and trailers)
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { join } from 'node:path';
import express from 'express';
import * as grpc from '@grpc/grpc-js';
import { loadConfig } from '../src/config';
import { startService } from '../src/service';
import { Rng } from '../src/engine/rng';

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
      { protocol: 'rest', peer: 'bench', header: (n) => (n === 'authorization' ? `Bearer ${created.apiKey}` : undefined), headerValues: () => [] },
    );
    if (!outcome.ok) throw outcome.error;
    process.stdout.write(JSON.stringify({ http: service.httpPort, grpc: service.grpcPort, key: created.apiKey }) + '\n');
  } else if (kind === 'oracle') {
    // The real service with N entities, each a 1,000-point daily series with weekly seasonality.
    const n = Number(bytesFile ?? 40);
    const dir = mkdtempSync(join(tmpdir(), 'forecast-bench-'));
    const config = loadConfig({ HTTP_PORT: '0', GRPC_PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'error' });
    const service = await startService(config);
    const { account, created } = await service.ctx.accounts.createAccount('enterprise', null);
    const { ctx } = service;
    const rng = new Rng(1);
    const start = Date.UTC(2023, 0, 2);
    for (let e = 0; e < n; e++) {
      const entity = `sku:b${e}`;
      await ctx.database.transaction(async (trx) => {
        await ctx.entities.upsertRow(trx, account.id, { entity, type: 'sku', displayName: '', frequency: 'P1D', seasonLength: 7 }, 0);
        await ctx.entities.upsertAxes(trx, account.id, entity, [{ name: 'demand', unit: '', kind: 'continuous' }]);
      });
      const rows = Array.from({ length: 1000 }, (_, i) => ({
        axis: 'demand',
        time: start + i * 86_400_000,
        value: 200 + 0.05 * i + [0, -10, -5, 0, 15, 40, 30][i % 7] + 8 * rng.normal(),
      }));
      await ctx.observations.ingest(account.id, [{ entity, rows }], 0);
    }
    process.stdout.write(JSON.stringify({ http: service.httpPort, grpc: service.grpcPort, key: created.apiKey, entities: n }) + '\n');
  } else if (kind === 'express') {
    const { json, headers } = JSON.parse(readFileSync(bytesFile, 'utf8')) as { json: string; headers: Record<string, string> };
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.get('/v1/entities/:entity', (_req, res) => {
      res.set(headers).send(json);
    });
    const server = app.listen(0, '127.0.0.1', () => {
      process.stdout.write(JSON.stringify({ http: (server.address() as { port: number }).port }) + '\n');
    });
  } else if (kind === 'node') {
    const { json, headers } = JSON.parse(readFileSync(bytesFile, 'utf8')) as { json: string; headers: Record<string, string> };
    const body = Buffer.from(json);
    const server = createServer((_req, res) => {
      res.writeHead(200, { ...headers, 'content-length': body.length });
      res.end(body);
    });
    server.listen(0, '127.0.0.1', () => {
      process.stdout.write(JSON.stringify({ http: (server.address() as { port: number }).port }) + '\n');
    });
  } else if (kind === 'grpc') {
    const { proto, metadata, trailers } = JSON.parse(readFileSync(bytesFile, 'utf8')) as { proto: string; metadata: Record<string, string>; trailers: Record<string, string> };
    const bytes = Buffer.from(proto, 'base64');
    const toMetadata = (fields: Record<string, string>) => {
      const md = new grpc.Metadata();
      for (const [k, v] of Object.entries(fields)) md.set(k, v);
      return md;
    };
    const server = new grpc.Server();
    const id = (b: Buffer) => b;
    server.addService(
      { getEntity: { path: '/forecast.v1.EntityService/GetEntity', requestStream: false, responseStream: false, requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id } },
      {
        getEntity: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
          call.sendMetadata(toMetadata(metadata));
          cb(null, bytes, toMetadata(trailers));
        },
      },
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
