/**
 * Drift alerts and webhooks benchmark (issue 14), against the real service in this process (its
 * drift worker and dispatcher are awaited directly, never slept on), over REST:
 *  1. drift on M4 Hourly (414 series): each series twice — as is, and with a level shift of +3
 *     standard deviations of its training part from a random test step on (uniform over the first
 *     36 of 48, so at least 12 shifted observations follow). Training parts are ingested in bulk,
 *     both groups subscribed (a parent entity with `include_descendants`), then the test parts one
 *     observation per request. Reported: share of unshifted series with a `drift.detected`
 *     (target ≤ 5%), share of shifted series detected at or after the shift (target ≥ 90%) and
 *     the median delay in observations, 1 = at the first shifted one (target ≤ 3). Events are
 *     counted at a local receiver that verifies every signature. The same shift measured in units
 *     of the one-step forecast's standard deviation instead is printed too (engine only).
 *  2. ingest latency, one observation per request from one client, for an account whose entities
 *     are subscribed and one without subscriptions, in alternating rounds (the subscribed round
 *     includes the background scoring it causes; the other starts after it has finished): p50
 *     (target: the outbox adds ≤ 10%) and p99.
 *  3. webhook throughput: 3,000 events queued at once, delivered to a local receiver (events/s).
 */
import { createServer, Agent, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBenchmark, sharedDataDir, type BenchmarkSeries } from '../src/cli/evaluate-data';
import { loadConfig } from '../src/config';
import { scoreDrift, startDrift } from '../src/engine/drift/score';
import { fitDriftModel } from '../src/engine/drift/one-step';
import { newId } from '../src/ids';
import { startService, type RunningService } from '../src/service';
import { eventBody, TEST_EVENT } from '../src/subscriptions/events';
import { verifyWebhook } from '../src/subscriptions/webhook-signature';

const HOUR = 3600_000;
const T0 = Date.UTC(2020, 0, 6);
const CLIENTS = 8;
const LATENCY_ENTITIES = 25;
const LATENCY_ROUNDS = 3;
const THROUGHPUT_EVENTS = 3000;

/** A seeded uniform generator (the shift steps are the same every run). */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

const sd = (y: readonly number[]) => {
  const m = y.reduce((a, b) => a + b, 0) / y.length;
  return Math.sqrt(y.reduce((a, b) => a + (b - m) ** 2, 0) / y.length);
};

const iso = (i: number) => new Date(T0 + i * HOUR).toISOString().replace('.000Z', 'Z');

/** A local receiver that verifies every delivery and keeps the events by entity. */
async function receiver(): Promise<{ url: string; secrets: string[]; events: any[]; refused: number; count: () => number; close: () => Promise<void> }> {
  const state = { url: '', secrets: [] as string[], events: [] as any[], refused: 0, count: () => state.events.length, close: () => new Promise<void>((r) => server.close(() => r())) };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = req.headers as Record<string, string>;
      const now = Math.floor(Date.now() / 1000);
      if (state.secrets.some((s) => verifyWebhook(body, headers, s, now).ok)) {
        state.events.push(JSON.parse(body));
        res.writeHead(204).end();
      } else {
        state.refused++;
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return state;
}

function client(port: number, key: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS * 2 });
  return (method: string, path: string, body?: unknown) =>
    new Promise<any>((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        { host: '127.0.0.1', port, path, method, agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(text ? { 'content-length': Buffer.byteLength(text) } : {}) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const data = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
            if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(data)}`));
            else resolve(data);
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
}

type Call = ReturnType<typeof client>;

async function createSeries(call: Call, entity: string, parent: string | undefined, train: readonly number[]) {
  await call('POST', '/v1/entities', { entity, frequency: 'PT1H', axes: [{ name: 'value' }], parents: parent ? [parent] : [] });
  for (let i = 0; i < train.length; i += 10_000) {
    await call('POST', `/v1/entities/${entity}/observations`, { observations: train.slice(i, i + 10_000).map((value, k) => ({ axis: 'value', time: iso(i + k), value })) });
  }
}

async function settle(service: RunningService) {
  await service.ctx.webhooks.drift.settled();
  await service.ctx.webhooks.dispatcher.settled();
}

/** Part 1: false alarms and detection on M4 Hourly, through the service. */
async function driftAccuracy(service: RunningService, call: Call, series: readonly BenchmarkSeries[]) {
  const rx = await receiver();
  await call('POST', '/v1/entities', { entity: 'group:clean', frequency: 'PT1H', axes: [] });
  await call('POST', '/v1/entities', { entity: 'group:shifted', frequency: 'PT1H', axes: [] });
  const random = uniform(20260314);
  const plan = series.map((s) => ({ s, shiftAt: Math.floor(random() * 36), delta: 3 * sd(s.train) }));
  let t0 = performance.now();
  const queue = [...plan];
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        await createSeries(call, `m4:${p.s.id}`, 'group:clean', p.s.train);
        await createSeries(call, `m4s:${p.s.id}`, 'group:shifted', p.s.train);
      }
    }),
  );
  console.log(`  training parts of ${series.length} × 2 series ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  for (const group of ['group:clean', 'group:shifted']) {
    const sub = await call('POST', '/v1/subscriptions', { entity: group, include_descendants: true, url: rx.url });
    rx.secrets.push(sub.secret);
  }
  t0 = performance.now();
  const work = [...plan];
  let ingests = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let p = work.shift(); p; p = work.shift()) {
        const n = p.s.train.length;
        for (let k = 0; k < p.s.test.length; k++) {
          const time = iso(n + k);
          await call('POST', `/v1/entities/m4:${p.s.id}/observations`, { observations: [{ axis: 'value', time, value: p.s.test[k] }] });
          const shifted = p.s.test[k] + (k >= p.shiftAt ? p.delta : 0);
          await call('POST', `/v1/entities/m4s:${p.s.id}/observations`, { observations: [{ axis: 'value', time, value: shifted }] });
          ingests += 2;
        }
      }
    }),
  );
  const ingestSeconds = (performance.now() - t0) / 1000;
  await settle(service);
  const scoredSeconds = (performance.now() - t0) / 1000;
  const detected = new Map<string, number[]>();
  for (const e of rx.events) {
    if (e.type !== 'drift.detected') continue;
    const list = detected.get(e.data.entity) ?? [];
    list.push(Date.parse(e.data.time));
    detected.set(e.data.entity, list);
  }
  const falseShare = plan.filter((p) => detected.has(`m4:${p.s.id}`)).length / plan.length;
  const delays: number[] = [];
  for (const p of plan) {
    const shiftTime = T0 + (p.s.train.length + p.shiftAt) * HOUR;
    const after = (detected.get(`m4s:${p.s.id}`) ?? []).filter((t) => t >= shiftTime).sort((a, b) => a - b);
    if (after.length > 0) delays.push(Math.round((after[0] - shiftTime) / HOUR) + 1);
  }
  delays.sort((a, b) => a - b);
  const falseBeforeShift = plan.filter((p) => (detected.get(`m4s:${p.s.id}`) ?? []).some((t) => t < T0 + (p.s.train.length + p.shiftAt) * HOUR)).length;
  console.log(`  ${ingests} single-observation ingests in ${ingestSeconds.toFixed(1)} s (${(ingests / ingestSeconds).toFixed(0)}/s, ${CLIENTS} clients); all scored and delivered after ${scoredSeconds.toFixed(1)} s; ${rx.events.length} events verified, ${rx.refused} refused`);
  console.log(`  false drift.detected (unshifted series)        ${(100 * falseShare).toFixed(1)}%   (target ≤ 5%)`);
  console.log(`  +3 sd level shift detected                     ${((100 * delays.length) / plan.length).toFixed(1)}%   (target ≥ 90%)`);
  console.log(`  median detection delay                         ${percentile(delays, 0.5)} observations (target ≤ 3; 1 = at the first shifted one; p90 ${percentile(delays, 0.9)})`);
  console.log(`  shifted series with a false alarm before the shift: ${falseBeforeShift}`);
  await rx.close();
}

/** The same shift in units of the one-step forecast's standard deviation (engine only, no service). */
function innovationScaleShift(series: readonly BenchmarkSeries[]) {
  const info = { period: 24, periods: [24, 168] };
  const random = uniform(20260314);
  const delays: number[] = [];
  for (const s of series) {
    const shiftAt = Math.floor(random() * 36);
    const model = fitDriftModel({ values: s.train, firstIndex: 0 }, info, s.train.length - 1)!;
    const level = s.train.slice(-24).reduce((a, b) => a + b, 0) / 24;
    const delta = 3 * (model.log ? level * (Math.exp(model.sigma) - 1) : model.sigma);
    const values = [...s.train];
    let state = startDrift({ values, firstIndex: 0 }, info, values.length - 1);
    for (let k = 0; k < s.test.length; k++) {
      values.push(s.test[k] + (k >= shiftAt ? delta : 0));
      const r = scoreDrift(state, { values, firstIndex: 0 }, info, 0.95);
      state = r.state;
      if (k >= shiftAt && r.transitions.some((t) => t.type === 'drift.detected')) {
        delays.push(k - shiftAt + 1);
        break;
      }
    }
  }
  delays.sort((a, b) => a - b);
  console.log(`  (engine only) +3 one-step sd shift detected     ${((100 * delays.length) / series.length).toFixed(1)}%, median delay ${percentile(delays, 0.5) ?? '-'}: a lasting shift of a few one-step`);
  console.log(`    standard deviations in a near-integrated series is one large innovation, not a drift (a random walk's every step is a level shift)`);
}

/** Part 2: ingest latency with and without subscriptions. */
async function ingestLatency(service: RunningService, port: number, series: readonly BenchmarkSeries[]) {
  const accounts = await Promise.all([0, 1].map(() => service.ctx.accounts.createAccount('enterprise', null)));
  const calls = accounts.map((a) => client(port, a.created.apiKey));
  const rx = await receiver();
  const chosen = series.slice(0, LATENCY_ENTITIES);
  for (const [i, call] of calls.entries()) {
    await call('POST', '/v1/entities', { entity: 'group:all', frequency: 'PT1H', axes: [] });
    for (const s of chosen) await createSeries(call, `lat:${s.id}`, 'group:all', s.train);
    if (i === 0) rx.secrets.push((await call('POST', '/v1/subscriptions', { entity: 'group:all', include_descendants: true, url: rx.url })).secret);
  }
  await settle(service);
  const latencies: number[][] = [[], []];
  const per = Math.floor((chosen.length * 48) / LATENCY_ROUNDS);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    // alternate which account goes first; the scoring the subscribed one caused finishes before the other's turn
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const call = calls[i];
      for (let j = round * per; j < (round + 1) * per; j++) {
        const s = chosen[j % chosen.length];
        const k = Math.floor(j / chosen.length);
        const t0 = performance.now();
        await call('POST', `/v1/entities/lat:${s.id}/observations`, { observations: [{ axis: 'value', time: iso(s.train.length + k), value: s.test[k] }] });
        latencies[i].push(performance.now() - t0);
      }
      await settle(service);
    }
  }
  await settle(service);
  const [withSubs, without] = latencies.map((l) => [...l].sort((a, b) => a - b));
  const p50w = percentile(withSubs, 0.5);
  const p50o = percentile(without, 0.5);
  console.log(`  ingest latency, subscribed entities      p50 ${p50w.toFixed(2)} ms, p99 ${percentile(withSubs, 0.99).toFixed(2)} ms (${withSubs.length} requests)`);
  console.log(`  ingest latency, account without any      p50 ${p50o.toFixed(2)} ms, p99 ${percentile(without, 0.99).toFixed(2)} ms (${without.length} requests)`);
  console.log(`  outbox + background scoring add          ${(100 * (p50w / p50o - 1)).toFixed(1)}% to p50 (target ≤ 10%)`);
  await rx.close();
}

/** Part 3: delivery throughput. */
async function throughput(service: RunningService, call: Call) {
  const rx = await receiver();
  await call('POST', '/v1/entities', { entity: 'server:tp', frequency: 'PT1H', axes: [{ name: 'cpu' }] });
  const sub = await call('POST', '/v1/subscriptions', { entity: 'server:tp', url: rx.url });
  rx.secrets.push(sub.secret);
  const { clock, database, webhooks } = service.ctx;
  const now = clock.now();
  const accountId = (await webhooks.subscriptions.byId(sub.subscription.subscription_id))!.accountId;
  const events = Array.from({ length: THROUGHPUT_EVENTS }, () => {
    const id = newId('evt', clock);
    return { id, accountId, subscriptionId: sub.subscription.subscription_id, type: TEST_EVENT, payload: eventBody(id, TEST_EVENT, now, { subscription_id: sub.subscription.subscription_id, message: 'throughput' }) };
  });
  await database.transaction((trx) => webhooks.deliveries.enqueue(trx, events, events.map(() => newId('dlv', clock)), now));
  const t0 = performance.now();
  webhooks.dispatcher.poke();
  await webhooks.dispatcher.settled();
  const seconds = (performance.now() - t0) / 1000;
  console.log(`  webhook throughput                       ${(rx.count() / seconds).toFixed(0)} events/s (${rx.count()} delivered and verified, ${rx.refused} refused; 32 in flight, receiver in the same process)`);
  await rx.close();
}

async function main() {
  // DRIFT_BENCH_SERIES=n runs on the first n series only (a quick look; the figures are for all 414)
  const limit = process.env.DRIFT_BENCH_SERIES ? Number(process.env.DRIFT_BENCH_SERIES) : undefined;
  const series = loadBenchmark(join(sharedDataDir(), 'm4/m4-hourly.jsonl'), limit);
  const dir = mkdtempSync(join(tmpdir(), 'forecast-bench-drift-'));
  const config = loadConfig({
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  });
  const service = await startService(config);
  try {
    const { created } = await service.ctx.accounts.createAccount('enterprise', null);
    const call = client(service.httpPort, created.apiKey);
    console.log(`Drift alerts and webhooks (M4 Hourly, ${series.length} series, 48 test hours each)`);
    await driftAccuracy(service, call, series);
    innovationScaleShift(series);
    await ingestLatency(service, service.httpPort, series);
    await throughput(service, call);
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
