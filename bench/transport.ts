/**
 * Transport overhead benchmark (issue: foundation). GetEntity over the real REST gateway and
 * gRPC server, beside a bare Express handler and a bare grpc-js handler that return the same
 * bytes — the same body and the same response headers (REST) or initial metadata and trailers
 * (gRPC), captured from the service, so the ratio measures the service's work rather than how
 * many header bytes it sends; prints requests/s, p50/p99 and the ratio of each protocol to its
 * bare counterpart (target ≥ 0.70). Every server runs in its own process (idle while another
 * is measured); rounds alternate between them and each figure is the median over rounds; the
 * load generator is this one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { closedLoop, grpcCaller, httpGetter, printTable, processCpuSeconds, type LoadResult } from './load';
import { GetEntityRequest } from '../gen/forecast/v1/entity_service.pb';
import { SERVER_NODE_FLAGS } from '../src/server-flags';


const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** closedLoop's default warm-up, which the server's CPU time includes. */
const WARMUP_SECONDS = 1;

/** The median of each figure over rounds (rps, p50 and p99 each on their own). */
function medianResult(rounds: LoadResult[]): LoadResult {
  const median = (k: 'rps' | 'p50' | 'p99') => [...rounds].map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
  return { name: rounds[0].name, requests: rounds.reduce((n, r) => n + r.requests, 0), errors: rounds.reduce((n, r) => n + r.errors, 0), rps: median('rps'), p50: median('p50'), p99: median('p99') };
}

async function spawnServer(kind: string, bytesFile?: string): Promise<{ child: ChildProcess; info: any }> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(__dirname, 'transport-servers.js'), kind, ...(bytesFile ? [bytesFile] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return { child, info: JSON.parse(line) };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

async function runTransportBench(): Promise<LoadResult[]> {
  const opts = { concurrency: CONCURRENCY, seconds: SECONDS };

  const request = Buffer.from(GetEntityRequest.encode({ entity: 'store:berlin' }).finish());

  const svc = await spawnServer('service');
  const auth = { authorization: `Bearer ${svc.info.key}` };
  const url = `http://127.0.0.1:${svc.info.http}/v1/entities/store:berlin`;
  const first = await fetch(url, { headers: auth });
  const json = await first.text();
  // Response headers the service sends on every call (transport-level ones are the server's own).
  const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const headers = Object.fromEntries([...first.headers].filter(([k]) => !TRANSPORT_HEADERS.has(k)));
  const caller = grpcCaller(`127.0.0.1:${svc.info.grpc}`, '/forecast.v1.EntityService/GetEntity', request, auth);
  const grpc = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
  const GRPC_TRANSPORT = new Set(['content-type', 'date', 'grpc-accept-encoding', 'grpc-encoding', 'grpc-status', 'grpc-message']);
  const plain = (md: import('@grpc/grpc-js').Metadata) => Object.fromEntries(Object.entries(md.getMap()).filter(([k]) => !GRPC_TRANSPORT.has(k)).map(([k, v]) => [k, String(v)]));
  const grpcReply = await new Promise<{ proto: Buffer; metadata: Record<string, string>; trailers: Record<string, string> }>((resolve, reject) => {
    const c = new grpc.Client(`127.0.0.1:${svc.info.grpc}`, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set('authorization', auth.authorization);
    let metadata: Record<string, string> = {};
    let proto: Buffer | undefined;
    const call = c.makeUnaryRequest('/forecast.v1.EntityService/GetEntity', (b: Buffer) => b, (b: Buffer) => b, request, md, (err, res) => {
      if (err || !res) reject(err ?? new Error('no response'));
      proto = res;
    });
    call.on('metadata', (m) => (metadata = plain(m)));
    // The status (with the trailers) comes after the callback.
    call.on('status', (st) => {
      c.close();
      if (proto) resolve({ proto, metadata, trailers: plain(st.metadata) });
    });
  });
  const protoBytes = grpcReply.proto;

  // Every server stays up (idle ones cost nothing); the rounds alternate between them so that slow
  // drift of the machine hits all alike, and each figure is the median over the rounds.
  const bytesFile = join(mkdtempSync(join(tmpdir(), 'forecast-bench-')), 'bytes.json');
  writeFileSync(bytesFile, JSON.stringify({ json, headers, proto: protoBytes.toString('base64'), metadata: grpcReply.metadata, trailers: grpcReply.trailers }));
  const bareHttp = await spawnServer('express', bytesFile);
  const bareNode = await spawnServer('node', bytesFile);
  const bareGrpc = await spawnServer('grpc', bytesFile);
  const bareCaller = grpcCaller(`127.0.0.1:${bareGrpc.info.grpc}`, '/forecast.v1.EntityService/GetEntity', request, auth);
  const contestants: [string, () => Promise<boolean>, ChildProcess][] = [
    ['REST  GetEntity (service)', httpGetter(url, auth, CONCURRENCY), svc.child],
    ['gRPC  GetEntity (service)', caller.fire, svc.child],
    ['REST  bare Express, same bytes', httpGetter(`http://127.0.0.1:${bareHttp.info.http}/v1/entities/store:berlin`, auth, CONCURRENCY), bareHttp.child],
    ['REST  bare node:http, same bytes', httpGetter(`http://127.0.0.1:${bareNode.info.http}/v1/entities/store:berlin`, auth, CONCURRENCY), bareNode.child],
    ['gRPC  bare grpc-js, same bytes', bareCaller.fire, bareGrpc.child],
  ];
  const rounds: LoadResult[][] = contestants.map(() => []);
  // Server CPU time per request (from /proc): unlike requests/s it hardly moves when other
  // processes compete for the cores, so it is the figure to trust on a busy machine.
  const cpuPerRequest: number[][] = contestants.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, [name, fire, child]] of contestants.entries()) {
      const before = processCpuSeconds(child.pid!);
      const result = await closedLoop(name, fire, opts);
      rounds[i].push(result);
      const used = (processCpuSeconds(child.pid!) - before) * 1e6;
      if (Number.isFinite(used)) cpuPerRequest[i].push(used / (result.requests + result.rps * WARMUP_SECONDS));
    }
  }
  caller.close();
  bareCaller.close();
  await Promise.all([svc, bareHttp, bareNode, bareGrpc].map((s) => stop(s.child)));
  const results = rounds.map(medianResult);

  console.log(
    `\nTransport: GetEntity, ${CONCURRENCY} concurrent clients, ${ROUNDS} alternating rounds of ${SECONDS} s per server (medians), ` +
      `response ${json.length} B JSON / ${protoBytes.length} B protobuf`,
  );
  printTable(results);
  const [restSvc, grpcSvc, restBare, restNode, grpcBare] = results;
  const ratios = (a: number, b: number) => rounds[a].map((x, i) => (x.rps / rounds[b][i].rps).toFixed(2)).join(' ');
  console.log(
    `ratio REST/bare Express: ${(restSvc.rps / restBare.rps).toFixed(2)}   ratio gRPC/bare grpc-js: ${(grpcSvc.rps / grpcBare.rps).toFixed(2)}   (target ≥ 0.70)` +
      `   REST/bare node:http: ${(restSvc.rps / restNode.rps).toFixed(2)}`,
  );
  console.log(`per round: REST/Express ${ratios(0, 2)}   gRPC/grpc-js ${ratios(1, 4)}`);
  if (cpuPerRequest.every((c) => c.length === ROUNDS)) {
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const cpu = cpuPerRequest.map(med);
    console.log(`server CPU per request (µs, medians): ${contestants.map(([name], i) => `${name.replace(/\s+/g, ' ').trim()} ${cpu[i].toFixed(0)}`).join(' · ')}`);
    console.log(
      `CPU ratio bare Express/REST: ${(cpu[2] / cpu[0]).toFixed(2)}   bare grpc-js/gRPC: ${(cpu[4] / cpu[1]).toFixed(2)}   bare node:http/REST: ${(cpu[3] / cpu[0]).toFixed(2)}   (throughput a server could reach per core, relative)`,
    );
  }
  return results;
}

if (require.main === module) {
  runTransportBench().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
