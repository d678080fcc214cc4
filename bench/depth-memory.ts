/**
 * Memory of one depth query over long series (not part of `make bench`: it takes minutes of fits).
 * A root entity with `NODES` hourly leaves, each spanning `SPAN` grid steps: observed every step in
 * the last `DENSE` steps, every 100th step before (so ingest stays quick while each series covers
 * the whole span, which is what a loaded series costs: 8 bytes a grid step, gaps included).
 * One cold depth-1 query runs in this process (the service built in it, SQLite, the worker threads
 * its own); printed: the process's peak RSS during the query above the RSS before it (sampled every
 * 10 ms, worker threads included), the main thread's peak `arrayBuffers` (the series' and the
 * workers' replies' typed arrays) and what the main thread still holds after the query, after a GC
 * (`--expose-gc`). Usage: node --expose-gc dist/bench/depth-memory.js [nodes=100] [span=200000] [limit].
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { startService } from '../src/service';

const NODES = Number(process.argv[2] ?? 100);
const SPAN = Number(process.argv[3] ?? 200_000);
/** The depth query's limit of grid steps (`depthQuerySteps`), to measure past the default. */
const LIMIT = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const DENSE = 25_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2000, 0, 1);
const MB = 1024 * 1024;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'depth-memory-'));
  const config = loadConfig({ HTTP_PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'silent' });
  // not a literal: the same file measures the code before `depthQuerySteps` existed
  const options = { depthQuerySteps: LIMIT, clock: undefined };
  const service = await startService(config, options);
  try {
    const { ctx } = service;
    const { account, created } = await ctx.accounts.createAccount('enterprise', null);
    const call = async (path: string, body: unknown) => {
      const r = await fetch(`http://127.0.0.1:${service.httpPort}${path}`, { method: 'POST', headers: { authorization: `Bearer ${created.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    const leaves = Array.from({ length: NODES }, (_, i) => `leaf:${i}`);
    for (const entity of ['root:r', ...leaves]) await call('/v1/entities', { entity, frequency: 'PT1H', axes: [{ name: 'load' }] });
    for (const child of leaves) await call('/v1/relations', { parent: 'root:r', child });
    let rows = 0;
    const ingestStart = performance.now();
    for (const [k, entity] of leaves.entries()) {
      const at: number[] = [];
      for (let i = 0; i < SPAN - DENSE; i += 100) at.push(i);
      for (let i = SPAN - DENSE; i < SPAN; i++) at.push(i);
      const values = at.map((i) => ({ axis: 'load', time: T0 + i * HOUR, value: 50 + 10 * k + 8 * Math.sin((2 * Math.PI * i) / 24) + ((i * 7919 + k * 104729) % 997) / 250 }));
      await ctx.observations.ingest(account.id, [{ entity, rows: values }], Date.now());
      rows += values.length;
    }
    console.log(`${NODES} leaves × ${SPAN} hourly steps (${rows} observations) ingested in ${((performance.now() - ingestStart) / 1000).toFixed(1)} s`);
    const root = (await ctx.entities.getMany(account.id, ['root:r']))[0];
    const asOf = await ctx.observations.latestRevision(account.id);
    gc();
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakBuffers = before.arrayBuffers;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakBuffers = Math.max(peakBuffers, m.arrayBuffers);
    }, 10);
    const started = performance.now();
    let outcome: string;
    try {
      const result = await ctx.depthQueries.run({ accountId: account.id, root, depth: 1, axes: ['load'], horizon: 24, thresholds: undefined, levels: [0.05, 0.5, 0.95], method: 'mint_shrink', asOf });
      outcome = `answered, ${result!.descendants.length} descendants`;
    } catch (err) {
      outcome = `refused: ${(err as Error).message}`;
    }
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    gc();
    const after = process.memoryUsage();
    console.log(`depth query: ${outcome} in ${seconds.toFixed(1)} s`);
    console.log(`  process RSS: ${mb(before.rss)} before, peak ${mb(peakRss)} (+${mb(peakRss - before.rss)})`);
    console.log(`  main thread arrayBuffers: ${mb(before.arrayBuffers)} before, peak ${mb(peakBuffers)}, held after the query (GC) ${mb(after.arrayBuffers)}`);
    console.log(`  process RSS after the query (GC): ${mb(after.rss)}`);
    console.log(`  main thread heap used after the query (GC): ${mb(after.heapUsed)} (${mb(before.heapUsed)} before)`);
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
