/**
 * Graph benchmark (issue 13). The Australian tourism hierarchy (shared/data/hierarchy) is loaded
 * through the REST API into the real service in its own process: 425 entities in one `contains`
 * graph (Total → States and Purposes → Regions and State × Purpose → 304 bottom series, each with
 * two parents), 304 × 80 quarterly observations. Then, over REST:
 *  - traversal: a 3-level page of 200 paths down from the total (first page and the next, by
 *    cursor), timed warm;
 *  - the oracle query with `depth` 3 on the total (425 nodes forecast and reconciled, MinT-shrink):
 *    cold latency (every fit new), then warm latency (p50 of repeated identical queries), warm
 *    with `include_manifest`, ForensicsService.Reproduce of the cold query (every node fitted
 *    afresh), and a warm query with another method (fits cached, reconciliation new).
 * Targets on the 2-core machine: cold ≤ 10 s, warm p50 ≤ 100 ms.
 * Also, in this process: the longest page of path walks whose work per page is bounded
 * (`MAX_STEPS_PER_PAGE` in src/graph/traversal.ts): the QA's bottleneck graph, and a random graph
 * of 1,000 entities and 10,000 relations walked 8 steps both ways (200 pages of 200 paths).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../src/rpc/descriptors';
import { pagePaths, type Adjacency, type PathStep } from '../src/graph/traversal';
import { printTable, processCpuSeconds, startServerProcess, summary, type LoadResult } from './load';

interface Tourism {
  readonly start: [number, number];
  readonly series: { id: string; path: string[]; attributes: Record<string, string>; values: number[] }[];
}

/** An entity id part from a name: `[A-Za-z0-9._~-]` only. */
const slug = (s: string) => s.replace(/[^A-Za-z0-9._~-]+/g, '-');

/** One line of the table from latencies (requests/s over their sum: one request at a time). */
const serial = (name: string, latencies: number[]) => summary(name, latencies, latencies.reduce((a, b) => a + b, 0) / 1000);

function client(port: number, key: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; data: any; ms: number }>((resolve, reject) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      const t0 = performance.now();
      const req = http.request(
        { host: '127.0.0.1', port, path, method, agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const ms = performance.now() - t0;
            const raw = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, data: raw ? JSON.parse(raw) : undefined, ms });
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  const ok = async (method: string, path: string, body?: unknown) => {
    let r = await call(method, path, body);
    // Why: on main, SQLite write transactions that read first can fail with "database is locked"
    // while the checkpoint thread restarts the WAL (fixed by BEGIN IMMEDIATE on another branch);
    // the bulk load retries such a 500 rather than measure nothing.
    for (let retry = 1; retry <= 10 && r.status === 500; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 20 * retry));
      r = await call(method, path, body);
    }
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.data).slice(0, 300)}`);
    return r;
  };
  return { ok, close: () => agent.destroy() };
}

/** Load the hierarchy through the API; returns the total's entity id. */
async function load(api: ReturnType<typeof client>, data: Tourism): Promise<string> {
  const axes = [{ name: 'trips', unit: 'thousands', kind: 'continuous' }];
  const create = (entity: string, parents: string[]) => api.ok('POST', '/v1/entities', { entity, display_name: '', frequency: 'P3M', axes, parents });
  const total = 'total:australia';
  await create(total, []);
  const states = [...new Set(data.series.map((s) => s.path[1]))];
  const purposes = [...new Set(data.series.map((s) => s.attributes.Purpose))];
  for (const st of states) await create(`state:${slug(st)}`, [total]);
  for (const p of purposes) await create(`purpose:${slug(p)}`, [total]);
  for (const st of states) for (const p of purposes) await create(`state_purpose:${slug(st)}.${slug(p)}`, [`state:${slug(st)}`, `purpose:${slug(p)}`]);
  const regions = [...new Set(data.series.map((s) => `${s.path[1]}\u0000${s.path[2]}`))].map((k) => k.split('\u0000'));
  for (const [st, r] of regions) await create(`region:${slug(st)}.${slug(r)}`, [`state:${slug(st)}`]);
  const [year, quarter] = data.start;
  const time = (t: number) => new Date(Date.UTC(year, 3 * (quarter - 1) + 3 * t, 1)).toISOString().replace('.000Z', 'Z');
  for (const s of data.series) {
    const [, st, r] = s.path;
    const p = s.attributes.Purpose;
    const entity = `series:${slug(st)}.${slug(r)}.${slug(p)}`;
    await create(entity, [`region:${slug(st)}.${slug(r)}`, `state_purpose:${slug(st)}.${slug(p)}`]);
    await api.ok('POST', `/v1/entities/${entity}/observations`, { observations: s.values.map((value, t) => ({ axis: 'trips', time: time(t), value })) });
  }
  return total;
}

/** Adjacency followed both ways from `edges` (parent, child), neighbours sorted. */
function bothWays(edges: readonly (readonly [string, string])[]): Adjacency {
  const adj = new Map<string, PathStep[]>();
  const add = (a: string, b: string, step: 'down' | 'up') => {
    const list = adj.get(a) ?? adj.set(a, []).get(a)!;
    if (!list.some((n) => n.entity === b)) list.push({ entity: b, step });
  };
  for (const [p, c] of edges) (add(p, c, 'down'), add(c, p, 'up'));
  for (const list of adj.values()) list.sort((a, b) => (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0));
  return adj;
}

/** Walk up to `maxPages` pages; the longest page in ms, pages walked, paths found. */
function walk(adj: Adjacency, from: string, to: string | undefined, maxPages: number): { worstMs: number; pages: number; found: number } {
  let after: string[] | undefined;
  let worstMs = 0;
  let found = 0;
  let pages = 0;
  while (pages < maxPages) {
    const t0 = performance.now();
    const { paths, resume } = pagePaths(adj, from, { depth: 8, to }, after, 200);
    worstMs = Math.max(worstMs, performance.now() - t0);
    pages++;
    found += paths.length;
    if (!resume) break;
    after = resume;
  }
  return { worstMs, pages, found };
}

function walkBudgetBench(): void {
  const pad = (i: number) => String(i).padStart(2, '0');
  // the QA's graph: from → z → to, z → a00..a31, every a → every b (none can reach `to` again)
  const qa: [string, string][] = [['g:from', 'g:z'], ['g:z', 'g:to']];
  for (let i = 0; i < 32; i++) {
    qa.push(['g:z', `g:a${pad(i)}`]);
    for (let j = 0; j < 32; j++) qa.push([`g:a${pad(i)}`, `g:b${pad(j)}`]);
  }
  let state = 7;
  const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 8) % 1000;
  const random: [string, string][] = [];
  for (let i = 0; i < 10_000; i++) random.push([`n${next()}`, `n${next()}`]);
  const dense = bothWays(random.filter(([a, b]) => a !== b));
  console.log('\nPath walks, depth 8 both ways, pages of 200 (in process):');
  for (const [name, adj, from, to] of [
    ['QA bottleneck graph (1,091 entities), to g:to', bothWays(qa), 'g:from', 'g:to'],
    ['random graph (1,000 entities), every path', dense, 'n0', undefined],
    ['random graph (1,000 entities), to n500', dense, 'n0', 'n500'],
  ] as const) {
    const r = walk(adj, from, to, 200);
    console.log(`  ${name}: longest page ${r.worstMs.toFixed(1)} ms over ${r.pages} pages, ${r.found} paths`);
  }
}

async function runGraphBench(): Promise<void> {
  walkBudgetBench();
  const file = join(process.env.SHARED_DATA_DIR ?? join(packageRoot(), '..', 'shared', 'data'), 'hierarchy', 'australian-tourism.json');
  const data = JSON.parse(readFileSync(file, 'utf8')) as Tourism;
  const server = await startServerProcess('service');
  const { info } = server;
  const api = client(info.http, info.key);
  const results: LoadResult[] = [];
  try {
    const t0 = performance.now();
    const total = await load(api, data);
    const loadSeconds = (performance.now() - t0) / 1000;

    // traversal: a 3-level page of 200 paths, and the page after it
    const paths = { from: total, depth: 3, page_size: 200 };
    const first = await api.ok('POST', '/v1/paths/query', paths);
    if (first.data.paths.length !== 200 || !first.data.next_cursor) throw new Error('expected a full first page of paths');
    const pageTimes: number[] = [];
    const nextTimes: number[] = [];
    for (let i = 0; i < 50; i++) {
      pageTimes.push((await api.ok('POST', '/v1/paths/query', paths)).ms);
      nextTimes.push((await api.ok('POST', '/v1/paths/query', { ...paths, cursor: first.data.next_cursor })).ms);
    }
    results.push(serial('paths, depth 3, first page of 200', pageTimes), serial('paths, depth 3, next page (cursor)', nextTimes));

    // the depth-3 query: cold (every fit new; the worker threads started and warmed by one
    // depth-0 query at another horizon, as the oracle bench excludes the pool's start), then warm
    const query = { entity: total, depth: 3, horizon: 4 };
    await api.ok('POST', '/v1/oracle/query', { entity: first.data.paths[2].nodes[3].entity, horizon: 1 });
    const cpu0 = processCpuSeconds(server.pid);
    const cold = await api.ok('POST', '/v1/oracle/query', query);
    const coldCpu = processCpuSeconds(server.pid) - cpu0;
    const nodes = 1 + cold.data.descendants.length;
    results.push(serial(`depth-3 query, cold (${nodes} nodes)`, [cold.ms]));
    const warm: number[] = [];
    const cpu1 = processCpuSeconds(server.pid);
    for (let i = 0; i < 40; i++) warm.push((await api.ok('POST', '/v1/oracle/query', query)).ms);
    const warmCpuMs = ((processCpuSeconds(server.pid) - cpu1) / warm.length) * 1000;
    results.push(serial('depth-3 query, warm', warm));
    // the same warm query returning its signed manifest (every query is signed either way)
    const signed: number[] = [];
    const cpu2 = processCpuSeconds(server.pid);
    for (let i = 0; i < 40; i++) signed.push((await api.ok('POST', '/v1/oracle/query', { ...query, include_manifest: true })).ms);
    const signedCpuMs = ((processCpuSeconds(server.pid) - cpu2) / signed.length) * 1000;
    results.push(serial('depth-3 query, warm, include_manifest', signed));
    // forensics: the cold query replayed (every node fitted afresh, reconciled again)
    const cpu3 = processCpuSeconds(server.pid);
    const replay = await api.ok('POST', '/v1/forensics/reproduce', { query_id: cold.data.query_id });
    const replayCpu = processCpuSeconds(server.pid) - cpu3;
    if (!replay.data.reproduced) throw new Error(`the depth-3 query was not reproduced: ${JSON.stringify(replay.data.differences).slice(0, 200)}`);
    results.push(serial('depth-3 query, reproduce (fresh fits)', [replay.ms]));
    const other = await api.ok('POST', '/v1/oracle/query', { ...query, reconciliation: 'wls_struct' });
    results.push(serial('depth-3 query, fits cached, new method', [other.ms]));

    console.log(`\nGraph: Australian tourism hierarchy through the API (${nodes} entities, 304 × 80 quarterly observations; loaded in ${loadSeconds.toFixed(1)} s; load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)`);
    printTable(results);
    console.log(`cold query: ${coldCpu.toFixed(1)} CPU-seconds in the server (all threads), i.e. ≥ ${(coldCpu / availableParallelism()).toFixed(1)} s of wall time on ${availableParallelism()} idle cores`);
    console.log(`warm query: ${warmCpuMs.toFixed(0)} ms of server CPU each, ${signedCpuMs.toFixed(0)} ms with include_manifest (means of ${warm.length}; 10 ms resolution per reading)`);
    console.log(`reproduce: ${replayCpu.toFixed(1)} CPU-seconds in the server (all threads)`);
    console.log(`targets: depth-3 cold ≤ 10,000 ms, warm p50 ≤ 100 ms`);
  } finally {
    api.close();
    await server.stop();
  }
}

if (require.main === module) {
  runGraphBench().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
