/**
 * A recent gap in a cycle: the seasonal AR's lags read the missing stretch, which is filled from
 * a cycle back (not a straight line across it) and whose fill error is added to the intervals,
 * with a warning in the answer (found by QA: 15-minute data with most of the last day missing, 95%
 * coverage 0.29 and a mean that lost the day's cycle). Over both protocols.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ok, rest } from '../helpers/dual';
import { oracleQuery } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

const PERIOD = 96; // 15-minute slots a day
const N = 8 * PERIOD;
const HORIZON = 48;
const START = Date.UTC(2025, 0, 6);
/** The series: a daily cycle (100 ± 50) with a deterministic wiggle; defined beyond the history for checking. */
const value = (i: number): number => 100 + 50 * Math.sin((2 * Math.PI * i) / PERIOD) + ((i * 37) % 11) - 5;
const time = (i: number): string => new Date(START + i * 900_000).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'gap:quarter-hours', frequency: 'PT15M', axes: [{ name: 'load' }] } }));
  // most of the last day missing: 84 slots, ending 10 slots before the last observation
  const observations = Array.from({ length: N }, (_, i) => i)
    .filter((i) => i < N - 94 || i >= N - 10)
    .map((i) => ({ axis: 'load', time: time(i), value: value(i) }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/gap:quarter-hours/observations', body: { observations } }));
  // a complete sibling under a parent, for the depth query
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'gap:complete', frequency: 'PT15M', axes: [{ name: 'load' }] } }));
  const complete = Array.from({ length: N }, (_, i) => ({ axis: 'load', time: time(i), value: value(i + 7) }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/gap:complete/observations', body: { observations: complete } }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'gap:total', frequency: 'PT15M', axes: [{ name: 'load' }] } }));
  for (const child of ['gap:quarter-hours', 'gap:complete']) await ok(rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'gap:total', child } }));
});
afterAll(() => t.close());

test('a cycle with most of its last day missing is forecast along the cycle, with wider intervals that say why', async () => {
  const answers: Record<string, number>[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    // 12 hours ahead: the slot a day before it is in the gap, and the lags read its fill
    const o = await oracleQuery(t, key, protocol, { entity: 'gap:quarter-hours', horizon: HORIZON, quantiles: [0.025, 0.5, 0.975] });
    assert.equal(o.code, 'ok', o.message);
    const f = o.data.forecast;
    const warnings = f.warnings as string[];
    assert.ok(warnings.some((w) => w.startsWith('load: intervals widened for the interpolated values')), `${protocol}: ${warnings.join('; ')}`);
    const q = (p: number): number => f.quantiles[String(p)];
    const truth = value(N + HORIZON - 1);
    assert.ok(q(0.025) <= truth && truth <= q(0.975), `${protocol}: [${q(0.025)}, ${q(0.975)}] vs ${truth}`);
    assert.ok(Math.abs(q(0.5) - truth) < 15, `${protocol}: median ${q(0.5)} vs ${truth}`);
    answers.push(f.quantiles);
  }
  assert.deepEqual(answers[0], answers[1], 'REST and gRPC give the same answer');
});

// found by QA: at depth ≥ 1 a descendant's answer carried none of its own forecast's warnings
test('at depth 1 the gapped leaf’s answer keeps its own warnings', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await oracleQuery(t, key, protocol, { entity: 'gap:total', depth: 1, horizon: HORIZON });
    assert.equal(o.code, 'ok', o.message);
    const leaf = (o.data.descendants as Array<{ entity: string; forecast: { warnings: string[] } }>).find((d) => d.entity === 'gap:quarter-hours');
    assert.ok(leaf, protocol);
    assert.ok(leaf.forecast.warnings.some((w) => w.startsWith('load: intervals widened for the interpolated values')), `${protocol}: ${leaf.forecast.warnings.join('; ')}`);
    const sibling = (o.data.descendants as Array<{ entity: string; forecast: { warnings: string[] } }>).find((d) => d.entity === 'gap:complete');
    assert.ok(sibling && !sibling.forecast.warnings.some((w) => w.includes('interpolated')), `${protocol}: ${sibling?.forecast.warnings.join('; ')}`);
  }
});
