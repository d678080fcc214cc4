/**
 * Oracle queries over both protocols (API.md section 5): a valid calibrated distribution, the
 * request's knobs honoured, every bad input answered as the contract says, the API equal to the
 * engine's direct output, caching without refits, and the query recorded for audit.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { forecastSeries } from '../../src/engine/index';
import { Rng } from '../../src/engine/rng';
import { seasonalInfo } from '../../src/oracle/engine-info';
import { ForecastPool } from '../../src/oracle/forecast-pool';
import { summarise } from '../../src/oracle/summary';
import { startTestService, type TestService } from '../helpers/service';
import { rest, type Outcome } from '../helpers/dual';
import { oracleQuery, type OracleQueryBody } from '../helpers/oracle-data';

let t: TestService;
let key: string;
let accountId: string;
const DAY = 86_400_000;
const START = Date.UTC(2025, 0, 6); // a Monday

beforeAll(async () => {
  t = await startTestService();
  ({ key, accountId } = await t.account('enterprise'));
  const rng = new Rng(3);
  // predictable: a clean weekly pattern with small noise; noisy: white noise of the same level
  await defineEntity('store:steady', (i) => 100 + [0, 5, 10, 5, 0, 40, 60][i % 7] + rng.normal(), (i) => 50 + 10 * Math.sin(i / 3) + rng.normal());
  await defineEntity('store:wild', () => 100 + 40 * rng.normal(), () => 50 + 20 * rng.normal());
  await defineEntity('store:short', (i) => i + 1, () => 1, 1);
});
afterAll(() => t.close());

async function defineEntity(entity: string, demand: (i: number) => number, price: (i: number) => number, days = 140): Promise<void> {
  const c = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }, { name: 'price' }] } });
  assert.equal(c.code, 'ok', c.message);
  const observations = [];
  for (let i = 0; i < days; i++) {
    const time = new Date(START + i * DAY).toISOString().replace('.000Z', 'Z');
    observations.push({ axis: 'demand', time, value: Math.max(0, Math.round(demand(i))) });
    observations.push({ axis: 'price', time, value: price(i) });
  }
  const ing = await rest(t, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations } });
  assert.equal(ing.code, 'ok', ing.message);
}

function query(protocol: 'rest' | 'grpc', body: OracleQueryBody, k = key): Promise<Outcome> {
  return oracleQuery(t, k, protocol, body);
}

/** The forecast part, with REST's snake_case names. */
function forecastOf(o: Outcome): any {
  if (o.protocol === 'rest') return o.data.forecast;
  const f = o.data.forecast;
  return { ...f, axes_resolved: f.axesResolved, target_time: f.targetTime };
}

for (const protocol of ['rest', 'grpc'] as const) {
  describe(`oracle over ${protocol}`, () => {
    test('a valid distribution: sums to 1, quantiles monotone, exactly the requested axes, confidence in [0, 1]', async () => {
      const o = await query(protocol, { entity: 'store:steady', axes: ['price', 'demand'], horizon: 3 });
      assert.equal(o.code, 'ok', o.message);
      const f = forecastOf(o);
      assert.match(o.protocol === 'rest' ? o.data.query_id : o.data.queryId, /^q_[0-9A-Z]{26}$/);
      assert.equal(f.distribution.length, 10);
      assert.ok(Math.abs(f.distribution.reduce((a: number, b: number) => a + b, 0) - 1) < 1e-9);
      assert.ok(f.distribution.every((p: number) => p >= 0));
      const levels = Object.keys(f.quantiles).map(Number).sort((a, b) => a - b);
      assert.deepEqual(levels, [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]);
      const values = levels.map((l) => f.quantiles[String(l)]);
      for (let i = 1; i < values.length; i++) assert.ok(values[i] >= values[i - 1]);
      assert.deepEqual(Object.keys(f.axes_resolved).sort(), ['demand', 'price']);
      assert.ok(f.confidence >= 0 && f.confidence <= 1);
      assert.equal(f.horizon, 3);
      assert.equal(f.target_time, new Date(START + (139 + 3) * DAY).toISOString().replace('.000Z', 'Z'));
      assert.equal(typeof f.model, 'string');
      assert.ok(f.model.length > 0);
    });

    test('confidence differs between a predictable and a noisy series', async () => {
      // price: a smooth cycle (steady) against white noise (wild)
      const steady = forecastOf(await query(protocol, { entity: 'store:steady', axes: ['price'] })).confidence;
      const wild = forecastOf(await query(protocol, { entity: 'store:wild', axes: ['price'] })).confidence;
      assert.notEqual(steady, wild);
      assert.ok(steady > wild, `steady ${steady} should beat wild ${wild}`);
    });

    test('thresholds and quantile levels are honoured; count axes put nothing below zero', async () => {
      const thresholds = [-10, -1, 0, 100, 150, 200];
      const f = forecastOf(await query(protocol, { entity: 'store:steady', axes: ['demand'], thresholds, quantiles: [0.5, 0.99] }));
      assert.deepEqual(f.thresholds, thresholds);
      assert.equal(f.distribution.length, 7);
      assert.equal(f.distribution[0], 0);
      assert.equal(f.distribution[1], 0);
      assert.equal(f.distribution[2], 0, 'P(Y < 0) is 0 for a count axis');
      assert.deepEqual(Object.keys(f.quantiles).sort(), ['0.5', '0.99']);
      for (const v of Object.values(f.quantiles) as number[]) assert.ok(Number.isInteger(v) && v >= 0);
    });

    // found by QA: thresholds spaced between non-integers made bins no count can fall in
    test('a count axis gets whole-number default thresholds: every bin can hold a count', async () => {
      const f = forecastOf(await query(protocol, { entity: 'store:steady', axes: ['demand'], horizon: 3 }));
      const t = f.thresholds as number[];
      assert.equal(t.length, 9);
      assert.ok(t.every((x, i) => Number.isInteger(x) && x >= 1 && (i === 0 || x > t[i - 1])), JSON.stringify(t));
      const sum = (f.distribution as number[]).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-9, `${sum}`);
    });

    test('every bad input is answered as the contract says', async () => {
      const cases: [OracleQueryBody, string, string][] = [
        [{}, 'invalid_argument', 'entity'],
        [{ entity: 'steady' }, 'invalid_argument', 'entity'],
        [{ entity: 'store:steady', depth: 9 }, 'invalid_argument', 'depth'],
        [{ entity: 'store:steady', horizon: 1001 }, 'invalid_argument', 'horizon'],
        [{ entity: 'store:steady', horizon: -1 }, 'invalid_argument', 'horizon'],
        [{ entity: 'store:steady', thresholds: [1, 1] }, 'invalid_argument', 'thresholds[1]'],
        [{ entity: 'store:steady', thresholds: Array.from({ length: 100 }, (_, i) => i) }, 'invalid_argument', 'thresholds'],
        [{ entity: 'store:steady', quantiles: [0.5, 1] }, 'invalid_argument', 'quantiles[1]'],
        [{ entity: 'store:steady', quantiles: [0.5, 0.5] }, 'invalid_argument', 'quantiles[1]'],
        [{ entity: 'store:steady', axes: ['demand', 'visits'] }, 'invalid_argument', 'axes[1]'],
        [{ entity: 'store:steady', axes: ['demand', 'demand'] }, 'invalid_argument', 'axes[1]'],
        [{ entity: 'store:nowhere' }, 'not_found', 'store:nowhere'],
        [{ entity: 'store:short', axes: ['demand'] }, 'insufficient_data', 'has 1 observations'],
      ];
      for (const [body, code, mentions] of cases) {
        const o = await query(protocol, body);
        assert.equal(o.code, code, `${JSON.stringify(body).slice(0, 80)} → ${o.message}`);
        assert.ok(o.message.includes(mentions), `"${o.message}" should mention ${mentions}`);
      }
      const short = await query(protocol, { entity: 'store:short', axes: ['demand'] });
      assert.equal(short.status, protocol === 'rest' ? 422 : 9);
      assert.match(short.message, /at least \d+ are needed/);
      const other = (await t.account('enterprise')).key;
      assert.equal((await query(protocol, { entity: 'store:steady' }, other)).code, 'not_found');
    });
  });
}

test('the API answer equals the engine’s direct output for the same data', async () => {
  const o = await query('rest', { entity: 'store:steady', axes: ['price'], horizon: 5, thresholds: [40, 50, 60], quantiles: [0.1, 0.5, 0.9], include_manifest: true });
  assert.equal(o.code, 'ok', o.message);
  const manifest = o.data.manifest;
  const revision = Number(manifest.data_revision);
  assert.equal(revision, Number(o.data.data_as_of));
  const entity = (await t.service.ctx.entities.get(accountId, 'store:steady'))!;
  const rows = await t.service.ctx.observations.series(accountId, 'store:steady', 'price', revision);
  const direct = forecastSeries(Float64Array.from(rows.map((r) => r.value)), { ...seasonalInfo(entity), kind: 'continuous' }, { horizon: 5, seed: manifest.models[0].seed, model: 'auto' });
  const s = summarise(direct.distribution, 5, [40, 50, 60], [0.1, 0.5, 0.9], 'continuous');
  const f = o.data.forecast;
  assert.deepEqual(f.distribution, s.distribution);
  assert.deepEqual([f.quantiles['0.1'], f.quantiles['0.5'], f.quantiles['0.9']], s.quantiles);
  assert.equal(f.axes_resolved.price, s.mean);
  assert.equal(f.confidence, direct.confidence ?? 0);
  assert.equal(f.model, direct.model);
  assert.deepEqual(manifest.models[0].params, JSON.parse(JSON.stringify(direct.params)));
  assert.equal(manifest.models[0].model, direct.model);
  assert.equal(manifest.models[0].spec, direct.requestedModel);
  assert.equal(manifest.inputs[0].observations, rows.length);
});

test('a repeated query does no fitting; an ingest refits exactly the affected series; concurrent cold queries fit once', async () => {
  const pool = t.service.ctx.pool;
  await query('rest', { entity: 'store:wild', axes: ['price'], horizon: 2 });
  await query('rest', { entity: 'store:steady', axes: ['price'], horizon: 2 });
  const fits = pool.stats.fits;
  await query('grpc', { entity: 'store:wild', axes: ['price'], horizon: 2 });
  await query('rest', { entity: 'store:steady', axes: ['price'], horizon: 2, thresholds: [1, 2] });
  assert.equal(pool.stats.fits, fits, 'warm queries (and other thresholds) reuse the fit');
  const ing = await rest(t, key, { method: 'POST', path: '/v1/entities/store:wild/observations', body: { observations: [{ axis: 'price', time: new Date(START + 140 * DAY).toISOString(), value: 55 }] } });
  assert.equal(ing.code, 'ok', ing.message);
  await query('rest', { entity: 'store:wild', axes: ['price'], horizon: 2 });
  await query('rest', { entity: 'store:steady', axes: ['price'], horizon: 2 });
  assert.equal(pool.stats.fits, fits + 1, 'only the ingested series was refitted');
  const before = pool.stats.fits;
  const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => query(i % 2 ? 'grpc' : 'rest', { entity: 'store:wild', axes: ['price'], horizon: 9 })));
  assert.ok(outcomes.every((o) => o.code === 'ok'));
  assert.equal(pool.stats.fits, before + 1, '10 concurrent identical cold queries fit once');
});

test('a fresh pool warms its idle workers up and answers every job as the engine does', async () => {
  const pool = new ForecastPool(3);
  try {
    // the first job goes to one worker; the two others, idle, warm up meanwhile
    const first = Float64Array.from({ length: 60 }, (_, i) => 20 + (i % 7));
    await pool.run({ fitKey: 'warm-first', series: first, info: { period: 7 }, horizon: 1, seed: 0, model: 'auto', levels: [0.5] });
    for (let i = 0; pool.stats.warmups < 2 && i < 3000; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(pool.stats.warmups, 2, 'both idle workers warmed up, the busy one did not');
    const rng = new Rng(8);
    const jobs = Array.from({ length: 4 }, (_, k) => {
      const series = Float64Array.from({ length: 90 }, (_, i) => 50 + k + [0, 3, 6, 3, 0, -5, -8][i % 7] + rng.normal());
      return { fitKey: `warm-${k}`, series, info: { period: 7 }, horizon: 3, seed: 0, model: 'auto', levels: [0.5] };
    });
    const results = await Promise.all(jobs.map((j) => pool.run(j)));
    for (const [k, j] of jobs.entries()) {
      const direct = forecastSeries(j.series, j.info, { horizon: 3, seed: 0, model: 'auto' });
      assert.equal(results[k].summary.mean, summarise(direct.distribution, 3, undefined, [0.5], 'continuous').mean);
      assert.equal(results[k].model, direct.model);
    }
    assert.equal(pool.stats.fits, 5);
    assert.equal(pool.stats.warmups, 2, 'a warm-up happens once per worker');
  } finally {
    await pool.close();
  }
});

test('a few observations spread over 200,000 hours: the forecast fits the last 20,000 steps and says so; with too few there, 422 counts them (found by QA: 25 s of CPU)', async () => {
  const HOUR = 3_600_000;
  const T0 = Date.UTC(2000, 0, 1);
  const iso = (i: number) => new Date(T0 + i * HOUR).toISOString().replace('.000Z', 'Z');
  const make = async (entity: string, at: number[]) => {
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'PT1H', axes: [{ name: 'cpu' }] } })).code, 'ok');
    const r = await rest(t, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations: at.map((i, k) => ({ axis: 'cpu', time: iso(i), value: 100 + k })) } });
    assert.equal(r.code, 'ok', r.message);
  };
  await make('server:spread', Array.from({ length: 33 }, (_, k) => Math.round((k * 199_999) / 32)));
  await make('server:early', [...Array.from({ length: 32 }, (_, k) => k * 100), 199_999]);
  for (const protocol of ['rest', 'grpc'] as const) {
    const spread = await oracleQuery(t, key, protocol, { entity: 'server:spread' });
    assert.equal(spread.code, 'ok', spread.message);
    assert.ok(spread.data.forecast.warnings.some((w: string) => w.includes('fitted on the last 20000 of the series\' 200000 steps')), spread.data.forecast.warnings.join('; '));
    const early = await oracleQuery(t, key, protocol, { entity: 'server:early' });
    assert.deepEqual([early.code, early.status], ['insufficient_data', protocol === 'rest' ? 422 : 9]);
    assert.match(early.message, /^axis cpu of server:early has 1 observations in its last 20000 steps \(the longest history the engine fits\); at least \d+ are needed/);
  }
});
