/**
 * Hourly events at a low rate (about one an hour) with quiet nights and busy afternoons: the
 * answer follows the cycle, with its own law per hour (engine 1.12.0; before, the count route
 * forecast every hour with one law: the busy hours under-covered, the quiet ones too wide).
 * Over both protocols.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { Rng } from '../../src/engine/rng';
import { oracleQuery, seriesEntity } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';
import { hourlyRate, poisson } from '../helpers/poisson';

let t: TestService;
let key: string;

const HOURS = 24 * 42; // six weeks from a Monday, midnight UTC
/** The hour of `server:incident`'s 1,000 errors. */
const INCIDENT = HOURS - 24 * 35 + 3;
/** The hours of `server:spikes`' three bursts. */
const SPIKES = [200, 517, 901];

/** The mean of the `errors` axis (REST names the field `axes_resolved`, gRPC's stubs `axesResolved`). */
const mean = (f: { axes_resolved?: Record<string, number>; axesResolved?: Record<string, number> }): number => (f.axes_resolved ?? f.axesResolved)!.errors;

/**
 * `entity`'s forecasts at two steps ahead (the 50% and 97.5% quantiles), over REST and then gRPC,
 * each answer checked ok; the two protocols' quantiles, means and models are checked equal.
 */
async function twoSteps(entity: string, first: number, second: number): Promise<{ protocol: 'rest' | 'grpc'; a: any; b: any }[]> {
  const out: { protocol: 'rest' | 'grpc'; a: any; b: any }[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    const a = await oracleQuery(t, key, protocol, { entity, horizon: first, quantiles: [0.5, 0.975] });
    const b = await oracleQuery(t, key, protocol, { entity, horizon: second, quantiles: [0.5, 0.975] });
    for (const o of [a, b]) assert.equal(o.code, 'ok', o.message);
    out.push({ protocol, a: a.data.forecast, b: b.data.forecast });
  }
  const facts = ({ a, b }: { a: any; b: any }) => [a.quantiles, b.quantiles, mean(a), mean(b), a.model, b.model];
  assert.deepEqual(facts(out[0]), facts(out[1]), 'REST and gRPC give the same answers');
  return out;
}

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  const rng = new Rng(11);
  for (const [entity, shape] of [['server:errors', (i: number) => hourlyRate(i)], ['server:flat', () => 1]] as const) {
    await seriesEntity(t, key, entity, { frequency: 'PT1H', axis: 'errors', kind: 'count', step: 3_600_000, n: HOURS, value: (i) => poisson(rng, shape(i)) });
  }
  // about one error an hour, and three bursts of 40 at unrelated hours (08:00, 13:00 and 13:00 on three days)
  const bursts = new Set(SPIKES);
  await seriesEntity(t, key, 'server:spikes', { frequency: 'PT1H', axis: 'errors', kind: 'count', step: 3_600_000, n: HOURS, value: (i) => (bursts.has(i) ? 40 : poisson(rng, 1)) });
  // the same daily cycle, with one incident hour of 1,000 errors (03:00, five weeks before the end)
  await seriesEntity(t, key, 'server:incident', { frequency: 'PT1H', axis: 'errors', kind: 'count', step: 3_600_000, n: HOURS, value: (i) => (i === INCIDENT ? 1000 : poisson(rng, hourlyRate(i))) });
});
afterAll(() => t.close());

test('hourly low counts with a daily cycle: the night and the afternoon get their own laws; flat counts keep one', async () => {
  // the data end at midnight before a Monday: step 4 is 03:00, step 16 is 15:00
  for (const { protocol, a: n, b: d } of await twoSteps('server:errors', 4, 16)) {
    assert.match(d.model, /^count-cycle\(Seasonal counts\[24,168\]/, `${protocol}: ${d.model}`);
    assert.ok(d.quantiles['0.975'] >= n.quantiles['0.975'] + 2, `${protocol}: 97.5% at 03:00 ${n.quantiles['0.975']}, at 15:00 ${d.quantiles['0.975']}`);
    assert.ok(mean(d) > 3 * mean(n), `${protocol}: mean at 03:00 ${mean(n)}, at 15:00 ${mean(d)}`);
    for (const q of [...Object.values(n.quantiles), ...Object.values(d.quantiles)] as number[]) assert.ok(Number.isInteger(q) && q >= 0);
    const flat = await oracleQuery(t, key, protocol, { entity: 'server:flat', horizon: 16 });
    assert.equal(flat.code, 'ok', flat.message);
    assert.match(flat.data.forecast.model, /^count-pool\(/, `${protocol}: ${flat.data.forecast.model}`);
  }
});

// found by QA (engine 1.12.0): rare bursts made a "cycle" with peaks at their hours; since engine 1.15.0
// a cycle must replicate between the two halves of the window
test('hourly low counts with three bursts and no cycle keep one law (count-pool), over both protocols', async () => {
  // step 13 is 13:00, the hour of two of the bursts; step 4 is 03:00
  for (const { protocol, a: b, b: n } of await twoSteps('server:spikes', 13, 4)) {
    assert.match(b.model, /^count-pool\(/, `${protocol}: ${b.model}`);
    // no peak at the bursts' hour: one law for every hour (its mean drifts by well under 1% over the horizon)
    assert.ok(Math.abs(mean(b) / mean(n) - 1) < 0.01, `${protocol}: mean at 13:00 ${mean(b)}, at 03:00 ${mean(n)}`);
    assert.deepEqual(b.quantiles, n.quantiles);
  }
});

// found by QA (engine 1.15.0): one incident hour hid the cycle (the answer was count-pool's one law)
test('a daily cycle with one incident hour of 1,000 errors keeps its cycle, over both protocols', async () => {
  // step 6 is 05:00 (quiet), step 16 is 15:00 (busy); the incident's own hour, 03:00, is left out: the
  // profile still reads the 1,000 there (README, "Hourly counts": a phantom peak at that hour)
  for (const { protocol, a: n, b: d } of await twoSteps('server:incident', 6, 16)) {
    assert.match(d.model, /^count-cycle\(/, `${protocol}: ${d.model}`);
    assert.ok(d.quantiles['0.975'] >= n.quantiles['0.975'] + 2, `${protocol}: 97.5% at 05:00 ${n.quantiles['0.975']}, at 15:00 ${d.quantiles['0.975']}`);
  }
});
