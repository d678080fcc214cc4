/**
 * Oracle benchmark (issue: oracle query). Against the real service in its own process:
 *  - cold latency: first query of a fresh 1,000-point daily series with weekly seasonality
 *    (fit in the worker pool), one at a time;
 *  - warm latency at a fixed 200 requests/s (open loop) over REST and gRPC, without and with
 *    `include_manifest` (every query is signed either way; this adds returning it), and warm
 *    closed-loop throughput;
 *  - forensics: latency of reproducing the timed cold queries (each fits afresh), one at a time;
 *  - the server's CPU time per warm query (Linux: /proc), a figure a busy shared machine
 *    disturbs far less than latency;
 *  - event-loop responsiveness: gRPC health-check latency during a burst of cold queries.
 * Targets on the 2-core machine: warm p99 ≤ 10 ms at 200 req/s (with manifests too), cold
 * p50 ≤ 150 ms, health p99 ≤ 20 ms during cold load.
 */
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { QueryRequest } from '../gen/forecast/v1/oracle_service.pb';
import { closedLoop, grpcCaller, printTable, processCpuSeconds, startServerProcess, summary, type LoadResult } from './load';

/** Entities whose first query is timed one at a time (the first warms the pool up and is not counted). */
const COLD_ENTITIES = 41;
/** Entities queried cold, 4 at a time, while the health check is timed (enough for a p99 of a few hundred checks). */
const BURST_ENTITIES = 60;
const ENTITIES = COLD_ENTITIES + BURST_ENTITIES;
/** The warm-latency target's load: requests per second, in alternating rounds of this many seconds per protocol. */
const WARM_RATE = 200;
const WARM_ROUNDS = 3;
const WARM_SECONDS = 5;

/** A POST of a JSON body: resolves the parsed answer of a 200, undefined otherwise. */
function restCall(port: number, key: string, agent: http.Agent, path: string) {
  return (body: string) =>
    new Promise<any>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(res.statusCode === 200 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined));
        },
      );
      req.on('error', () => resolve(undefined));
      req.end(body);
    });
}

/** A POST that only reports success (the load loops: no parsing on the client's side). */
function restPost(port: number, key: string, agent: http.Agent) {
  return (body: string) =>
    new Promise<boolean>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port, path: '/v1/oracle/query', method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        },
      );
      req.on('error', () => resolve(false));
      req.end(body);
    });
}

/** The server's CPU time per request over `n` requests, 4 at a time, in µs. */
async function cpuPerRequest(pid: number, fire: () => Promise<boolean>, n: number): Promise<number> {
  const before = processCpuSeconds(pid);
  let left = n;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (left-- > 0) await fire();
  }));
  return ((processCpuSeconds(pid) - before) * 1e6) / n;
}

/**
 * Fire `fire` at a fixed rate for `seconds` (open loop: a slow answer does not delay the next
 * request) and return each request's latency in ms, from the moment it was sent.
 */
async function openLoop(fire: () => Promise<boolean>, rate: number, seconds: number): Promise<{ latencies: Float64Array; errors: number }> {
  const n = Math.round(rate * seconds);
  const latencies = new Float64Array(n);
  let errors = 0;
  let outstanding = n;
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    void fire().then((ok) => {
      latencies[i] = performance.now() - t0;
      if (!ok) errors++;
      if (--outstanding === 0) allDone();
    });
  }
  await done;
  return { latencies, errors };
}

/**
 * Warm latency at `rate` over each protocol: a 1-second warm-up each, then `rounds` rounds of
 * `seconds` alternating between the protocols (so slow drift of a shared machine hits both
 * alike). Each line pools every round's requests; the per-round p99s are returned too, to show
 * the spread between rounds.
 */
async function warmRounds(protocols: readonly [string, () => Promise<boolean>][], rate: number, rounds: number, seconds: number): Promise<{ results: LoadResult[]; perRound: string[] }> {
  for (const [, fire] of protocols) await openLoop(fire, rate, 1);
  const runs = protocols.map(() => [] as { latencies: Float64Array; errors: number }[]);
  for (let r = 0; r < rounds; r++) for (const [i, [, fire]] of protocols.entries()) runs[i].push(await openLoop(fire, rate, seconds));
  const results = protocols.map(([name], i) => {
    const all = runs[i].flatMap((x) => Array.from(x.latencies));
    return summary(name, all, rounds * seconds, runs[i].reduce((e, x) => e + x.errors, 0));
  });
  const perRound = protocols.map(([name], i) => `${name}: ${runs[i].map((x) => summary('', Array.from(x.latencies), seconds).p99.toFixed(2)).join(' / ')} ms`);
  return { results, perRound };
}

async function runOracleBench(): Promise<void> {
  // the server goes with the bench however it ends (a failed step exits the process)
  const server = await startServerProcess('oracle', String(ENTITIES));
  const { info } = server;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const post = restPost(info.http, info.key, agent);
  const queryJson = restCall(info.http, info.key, agent, '/v1/oracle/query');
  const body = (e: number, horizon = 7, includeManifest = false) => JSON.stringify({ entity: `sku:b${e}`, horizon, ...(includeManifest ? { include_manifest: true } : {}) });
  const results: LoadResult[] = [];

  // cold: each entity's first query fits; the first worker start is excluded by a warm-up on entity 0
  await post(body(0));
  const cold: number[] = [];
  const coldQueries: string[] = [];
  for (let e = 1; e < COLD_ENTITIES; e++) {
    const t0 = performance.now();
    const answer = await queryJson(body(e));
    if (!answer) throw new Error(`cold query sku:b${e} failed`);
    cold.push(performance.now() - t0);
    coldQueries.push(answer.query_id);
  }
  results.push(summary('cold query (1,000-pt daily, REST)', cold, cold.reduce((a, b) => a + b, 0) / 1000));

  // warm, fixed rate
  const md = { authorization: `Bearer ${info.key}` };
  const request = Buffer.from(QueryRequest.encode({ entity: 'sku:b1', depth: 0, includeManifest: false, axes: [], horizon: 7, thresholds: [], quantiles: [], reconciliation: '' }).finish());
  const caller = grpcCaller(`127.0.0.1:${info.grpc}`, '/forecast.v1.OracleService/Query', request, md);
  const withManifest = Buffer.from(QueryRequest.encode({ entity: 'sku:b1', depth: 0, includeManifest: true, axes: [], horizon: 7, thresholds: [], quantiles: [], reconciliation: '' }).finish());
  const manifestCaller = grpcCaller(`127.0.0.1:${info.grpc}`, '/forecast.v1.OracleService/Query', withManifest, md);
  const warm = await warmRounds(
    [
      [`warm query REST @${WARM_RATE}/s`, () => post(body(1))],
      [`warm query gRPC @${WARM_RATE}/s`, caller.fire],
      [`+manifest REST @${WARM_RATE}/s`, () => post(body(1, 7, true))],
      [`+manifest gRPC @${WARM_RATE}/s`, manifestCaller.fire],
    ],
    WARM_RATE,
    WARM_ROUNDS,
    WARM_SECONDS,
  );
  results.push(...warm.results);
  // server CPU per warm query, alternating blocks of each kind
  const cpuKinds: [string, () => Promise<boolean>][] = [
    ['REST', () => post(body(1))],
    ['REST +manifest', () => post(body(1, 7, true))],
    ['gRPC', caller.fire],
    ['gRPC +manifest', manifestCaller.fire],
  ];
  const cpu = cpuKinds.map(() => [] as number[]);
  for (let r = 0; r < 3; r++) for (const [i, [, fire]] of cpuKinds.entries()) cpu[i].push(await cpuPerRequest(server.pid, fire, 500));
  const cpuLine = cpuKinds.map(([name], i) => `${name} ${Math.round(cpu[i].reduce((a, b) => a + b, 0) / cpu[i].length)} µs`).join(', ');
  results.push(await closedLoop('warm query REST, max (16 conc.)', () => post(body(1)), { concurrency: 16, seconds: 4 }));
  results.push(await closedLoop('warm query gRPC, max (16 conc.)', caller.fire, { concurrency: 16, seconds: 4 }));

  // forensics: reproduce each timed cold query (a fresh fit each), one at a time
  const reproduce = restCall(info.http, info.key, agent, '/v1/forensics/reproduce');
  const replays: number[] = [];
  for (const queryId of coldQueries) {
    const t0 = performance.now();
    const answer = await reproduce(JSON.stringify({ query_id: queryId }));
    if (!answer?.reproduced) throw new Error(`reproducing ${queryId} failed: ${JSON.stringify(answer)?.slice(0, 200)}`);
    replays.push(performance.now() - t0);
  }
  results.push(summary('reproduce (fresh fit, REST)', replays, replays.reduce((a, b) => a + b, 0) / 1000));

  // health during a burst of cold queries (the remaining entities, 4 at a time)
  const healthClient = new grpc.Client(`127.0.0.1:${info.grpc}`, grpc.credentials.createInsecure());
  const id = (b: Buffer) => b;
  const health: number[] = [];
  let burstDone = false;
  const burst = (async () => {
    const queue = Array.from({ length: BURST_ENTITIES }, (_, i) => COLD_ENTITIES + i);
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let e = queue.shift(); e !== undefined; e = queue.shift()) await post(body(e, 14));
    }));
    burstDone = true;
  })();
  const healthStart = performance.now();
  while (!burstDone) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => healthClient.makeUnaryRequest('/grpc.health.v1.Health/Check', id, id, Buffer.alloc(0), () => resolve()));
    health.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  await burst;
  results.push(summary('health check during cold burst', health, (performance.now() - healthStart) / 1000));
  healthClient.close();
  caller.close();
  manifestCaller.close();

  console.log(`\nOracle: ${ENTITIES} entities, 1,000-point daily series with weekly seasonality, horizon 7 (burst: 14)`);
  printTable(results);
  console.log(`samples: ${results.map((r) => `${r.name} ${r.requests}`).join(', ')}`);
  console.log(`server CPU per warm query (3 × 500 each, 4 at a time, /proc utime+stime): ${cpuLine}`);
  console.log(`warm p99 per ${WARM_SECONDS}-s round (${WARM_ROUNDS} alternating rounds pooled above): ${warm.perRound.join('   ')}`);
  agent.destroy();
  await server.stop();
}

if (require.main === module) {
  runOracleBench().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
