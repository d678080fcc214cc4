/**
 * Fairness and deadlines benchmark: what one account's big depth query costs the others, and what
 * a deadline saves. The real service in its own process (fresh SQLite). Account A (Enterprise)
 * builds a root over `LEAVES` daily leaves (a year each, a strong weekly cycle: the costlier daily
 * route, ~30 ms a fit); account B (a Free sign-up) one entity like them. Then, over REST:
 *  - A's cold depth-1 query (one fit per leaf, then reconciliation) while B asks a depth-0 query of
 *    its own entity every 250 ms, each at a new horizon (a new fit): B's latencies are what
 *    "another account waits" means (the worker pool serves accounts in turn: src/fair-queue.ts);
 *  - A's cold depth-1 query over a second such hierarchy with a 2 s deadline (`Grpc-Timeout: 2S`):
 *    when the 504 comes, and the server's CPU in the 5 s after it (fits not yet started are
 *    dropped; before the fair pool the query ran to its end and answered 504 then);
 *  - one cold depth-1 query over a third hierarchy, then `IDENTICAL` identical cold queries at once
 *    over a fourth: they share one computation (src/shared-runs.ts), so the last answers about when
 *    one would, at about one's CPU (before, each reconciled on its own, one after another).
 */
import http from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { percentile, processCpuSeconds, startServerProcess } from './load';

const LEAVES = Number(process.env.FAIRNESS_LEAVES ?? 400);
const IDENTICAL = 8;
const DAYS = 365;
const day = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 86_400_000).toISOString().replace('.000Z', 'Z');
const WEEK = [0, 8, 10, 12, 14, 30, 25];

type Reply = { status: number; data: any; ms: number };

function call(port: number, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const t0 = performance.now();
    const req = http.request(
      { host: '127.0.0.1', port, path, method, headers: { ...(key && { authorization: `Bearer ${key}` }), 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, data: raw ? JSON.parse(raw) : undefined, ms: performance.now() - t0 });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function ok(port: number, key: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const r = await call(port, key, method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.data).slice(0, 300)}`);
  return r;
}

/** A daily entity with a year of a shop's week (`shift` makes its values its own). */
async function shopEntity(port: number, key: string, entity: string, shift: number, parents: string[] = []): Promise<void> {
  await ok(port, key, 'POST', '/v1/entities', { entity, frequency: 'P1D', axes: [{ name: 'units' }], parents });
  const observations = Array.from({ length: DAYS }, (_, i) => ({ axis: 'units', time: day(i), value: 40 + shift + WEEK[i % 7] + ((i * (shift + 3)) % 7) }));
  await ok(port, key, 'POST', `/v1/entities/${entity}/observations`, { observations });
}

async function hierarchy(port: number, key: string, root: string, salt: number): Promise<void> {
  await ok(port, key, 'POST', '/v1/entities', { entity: root, frequency: 'P1D', axes: [{ name: 'units' }] });
  for (let k = 0; k < LEAVES; k++) await shopEntity(port, key, `${root.replace('region', 'store')}-${k}`, (k % 50) + salt / 1000, [root]);
}

async function main(): Promise<void> {
  const server = await startServerProcess('service');
  const { info } = server;
  const port: number = info.http;
  const a: string = info.key;
  try {
    const signup = await ok(port, '', 'POST', '/v1/signup', { email: 'fairness-bench@example.com' });
    const b: string = signup.data.api_key;
    const t0 = performance.now();
    await hierarchy(port, a, 'region:one', 1);
    await hierarchy(port, a, 'region:two', 2);
    await hierarchy(port, a, 'region:three', 3);
    await hierarchy(port, a, 'region:four', 4);
    await shopEntity(port, b, 'store:b', 7);
    const loaded = (performance.now() - t0) / 1000;
    // the workers started and warm (as the oracle bench excludes the pool's start)
    await ok(port, b, 'POST', '/v1/oracle/query', { entity: 'store:b', horizon: 500 });

    // 1. B's queries while A's cold depth query runs
    let done = false;
    const big = ok(port, a, 'POST', '/v1/oracle/query', { entity: 'region:one', depth: 1, horizon: 7 }).finally(() => (done = true));
    const waits: number[] = [];
    for (let h = 1; !done && h < 400; h++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      waits.push((await ok(port, b, 'POST', '/v1/oracle/query', { entity: 'store:b', horizon: h })).ms);
    }
    const bigMs = (await big).ms;
    waits.sort((x, y) => x - y);

    // 2. A's cold depth query over the second hierarchy with a 2 s deadline
    const cpu0 = processCpuSeconds(server.pid);
    const late = await call(port, a, 'POST', '/v1/oracle/query', { entity: 'region:two', depth: 1, horizon: 7 }, { 'grpc-timeout': '2S' });
    const cpuDuring = processCpuSeconds(server.pid) - cpu0;
    const cpu1 = processCpuSeconds(server.pid);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const cpuAfter = processCpuSeconds(server.pid) - cpu1;

    // 3. one cold depth query, then IDENTICAL identical cold ones at once (another hierarchy, as cold)
    const depthQuery = (root: string) => ok(port, a, 'POST', '/v1/oracle/query', { entity: root, depth: 1, horizon: 7 });
    const cpu2 = processCpuSeconds(server.pid);
    const one = await depthQuery('region:three');
    const cpuOne = processCpuSeconds(server.pid) - cpu2;
    const cpu3 = processCpuSeconds(server.pid);
    const many = (await Promise.all(Array.from({ length: IDENTICAL }, () => depthQuery('region:four')))).map((r) => r.ms).sort((x, y) => x - y);
    const cpuMany = processCpuSeconds(server.pid) - cpu3;

    console.log(`\nFairness and deadlines (${LEAVES} daily leaves a hierarchy, a year each; loaded in ${loaded.toFixed(1)} s; load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)`);
    console.log(`  account A's cold depth-1 query (${LEAVES + 1} fits, reconciled): ${(bigMs / 1000).toFixed(1)} s`);
    console.log(`  account B's depth-0 queries meanwhile (a new fit each, ${waits.length} of them): p50 ${percentile(waits, 0.5).toFixed(0)} ms, max ${waits[waits.length - 1].toFixed(0)} ms`);
    console.log(`  A's cold depth-1 query with a 2 s deadline: ${late.status} after ${(late.ms / 1000).toFixed(2)} s (${cpuDuring.toFixed(1)} CPU-s); server CPU in the 5 s after: ${cpuAfter.toFixed(1)} s`);
    console.log(`  one cold depth-1 query: ${(one.ms / 1000).toFixed(1)} s (${cpuOne.toFixed(1)} CPU-s); ${IDENTICAL} identical cold ones at once: first ${(many[0] / 1000).toFixed(1)} s, last ${(many[many.length - 1] / 1000).toFixed(1)} s (${cpuMany.toFixed(1)} CPU-s)`);
    console.log('  targets: B waits well under A\'s query (fair turns); the 504 comes at the deadline, and the work stops with it; identical queries cost about one');
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
