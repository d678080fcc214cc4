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
 *     are subscribed and one without subscriptions: p50 (target: the outbox adds ≤ 10%) and p99,
 *     (a) the ingest transaction alone, in process, the two accounts interleaved and scoring
 *     paused: what the outbox statement adds; over REST (b) the two accounts' requests interleaved,
 *     (c) in alternating rounds, the subscribed one with the scoring it causes running beside it.
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
import { ACCOUNT_CONCURRENCY } from '../src/subscriptions/dispatcher';
import { eventBody, TEST_EVENT } from '../src/subscriptions/events';
import { verifyWebhook } from '../src/subscriptions/webhook-signature';

const HOUR = 3600_000;
const T0 = Date.UTC(2020, 0, 6);
const CLIENTS = 8;
const LATENCY_ENTITIES = 25;
const LATENCY_ROUNDS = 4;
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
  let step = 0;
  const next = async (i: number, into: number[]) => {
    const k = Math.floor(step / chosen.length);
    const s = chosen[step % chosen.length];
    const t0 = performance.now();
    await calls[i]('POST', `/v1/entities/lat:${s.id}/observations`, { observations: [{ axis: 'value', time: iso(s.train.length + k), value: s.test[k % s.test.length] + k }] });
    into.push(performance.now() - t0);
  };
  // a) the outbox itself: requests of the two accounts interleaved, so both meet the same conditions
  //    (including the scoring the subscribed one causes)
  const paired: number[][] = [[], []];
  const per = Math.floor((chosen.length * 24) / 1);
  for (let j = 0; j < per; j++, step++) for (const i of j % 2 === 0 ? [0, 1] : [1, 0]) await next(i, paired[i]);
  await settle(service);
  // b) with scoring running: alternating rounds, each account alone, the scoring a subscribed
  //    round causes finished before the other's round
  const rounds: number[][] = [[], []];
  const perRound = Math.floor((chosen.length * 24) / LATENCY_ROUNDS);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const start = step;
      for (let j = 0; j < perRound; j++, step++) await next(i, rounds[i]);
      if (i === 0) step = start; // both accounts ingest the same hours
      await settle(service);
    }
    step += perRound;
  }
  const report = (label: string, [withSubs, without]: number[][]) => {
    const w = [...withSubs].sort((a, b) => a - b);
    const o = [...without].sort((a, b) => a - b);
    console.log(`  ${label}`);
    console.log(`    subscribed entities: p50 ${percentile(w, 0.5).toFixed(2)} ms, p99 ${percentile(w, 0.99).toFixed(2)} ms; no subscriptions: p50 ${percentile(o, 0.5).toFixed(2)} ms, p99 ${percentile(o, 0.99).toFixed(2)} ms (${w.length} + ${o.length} requests)`);
    console.log(`    added to p50: ${(100 * (percentile(w, 0.5) / percentile(o, 0.5) - 1)).toFixed(1)}% (target ≤ 10%)`);
  };
  // c) the ingest transaction alone (in process, the drift worker paused): what the outbox statement costs
  await service.ctx.webhooks.drift.stop();
  const ids = accounts.map((a) => a.account.id);
  const direct: number[][] = [[], []];
  for (let j = 0; j < 2000; j++, step++) {
    const s = chosen[step % chosen.length];
    const k = Math.floor(step / chosen.length);
    for (const i of j % 2 === 0 ? [0, 1] : [1, 0]) {
      const t0 = performance.now();
      await service.ctx.observations.ingest(ids[i], [{ entity: `lat:${s.id}`, rows: [{ axis: 'value', time: T0 + (s.train.length + k) * HOUR, value: k }] }], Date.now());
      direct[i].push(performance.now() - t0);
    }
  }
  service.ctx.webhooks.drift.start();
  await settle(service);
  report('ingest transaction alone (ObservationStore.ingest in process, scoring paused, interleaved):', direct);
  report('ingest over REST, one client, one observation per request, the two accounts interleaved (scoring running):', paired);
  report('ingest over REST in alternating rounds, the subscribed round with the scoring it causes beside it:', rounds);
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
  console.log(`  webhook throughput                       ${(rx.count() / seconds).toFixed(0)} events/s (${rx.count()} delivered and verified, ${rx.refused} refused; one account, so at most ${ACCOUNT_CONCURRENCY} in flight; receiver in the same process)`);
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
    // DRIFT_BENCH_PARTS=drift,latency,throughput (default all) runs some parts only
    const parts = new Set((process.env.DRIFT_BENCH_PARTS ?? 'drift,latency,throughput').split(','));
    if (parts.has('drift')) {
      await driftAccuracy(service, call, series);
      innovationScaleShift(series);
    }
    if (parts.has('latency')) await ingestLatency(service, service.httpPort, series);
    if (parts.has('throughput')) await throughput(service, call);
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
