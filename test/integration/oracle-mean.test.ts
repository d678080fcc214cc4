/**
 * `axes_resolved` is the mean of the predictive law the answer's quantiles and bins describe
 * (found by QA: for a model fitted in logs it was the median, 18% under the mean of a wide
 * forecast; for a forecast censored at 0 it was the point forecast clamped to 0 while a quarter of
 * the law lay far above). Over both protocols.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ok, rest } from '../helpers/dual';
import { dailyEntity, oracleQuery } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  // a positive daily series whose level wanders by a few percent a day: the seasonal AR in logs, a right-skewed law
  let level = 100;
  const values = Array.from({ length: 400 }, (_, i) => {
    level *= Math.exp(0.08 * Math.sin(i * 12.9898) * Math.cos(i * 78.233));
    return level * [1, 1.1, 1.2, 1.1, 1, 0.7, 0.6][i % 7];
  });
  await dailyEntity(t, key, 'mean:skewed', (i) => values[i], values.length);
  // a yearly series falling steeply: forecast far enough ahead, its point forecast is below 0 and the law is censored there
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'mean:falling', frequency: 'P1Y', axes: [{ name: 'sales' }] } }));
  const falling = [5200, 4900, 4700, 4300, 4100, 3600, 3500, 3100, 2800, 2600, 2100, 1900, 1500, 1300, 900];
  const observations = falling.map((value, i) => ({ axis: 'sales', time: `${2000 + i}-01-01T00:00:00Z`, value }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/mean:falling/observations', body: { observations } }));
  // four values above 0 whose trend reaches 0 well within 100 steps
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'mean:few', frequency: 'P1Y', axes: [{ name: 'sales' }] } }));
  const few = [103.46, 108.22, 103.3, 86.97].map((value, i) => ({ axis: 'sales', time: `${2020 + i}-01-01T00:00:00Z`, value }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/mean:few/observations', body: { observations: few } }));
});
afterAll(() => t.close());

/** The mean of the answer's law from its own quantiles at the 99 levels 0.01..0.99 (a coarse check of the reported mean). */
async function answer(protocol: 'rest' | 'grpc', entity: string, horizon: number) {
  const levels = Array.from({ length: 99 }, (_, i) => (i + 1) / 100);
  const o = await oracleQuery(t, key, protocol, { entity, horizon, quantiles: levels });
  assert.equal(o.code, 'ok', o.message);
  const f = o.data.forecast;
  const q = (p: number): number => f.quantiles[String(p)];
  const mean = Object.values((protocol === 'rest' ? f.axes_resolved : f.axesResolved) as Record<string, number>)[0];
  return { mean, q, coarse: levels.reduce((s, p) => s + q(p), 0) / levels.length };
}

test('a right-skewed forecast reports its mean, above its median', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    const a = await answer(protocol, 'mean:skewed', 60);
    assert.ok(a.mean > a.q(0.5), `${protocol}: mean ${a.mean} vs median ${a.q(0.5)}`);
    assert.ok(Math.abs(a.mean - a.coarse) < 0.03 * a.coarse, `${protocol}: mean ${a.mean} vs ${a.coarse} from the quantiles`);
  }
});

test('a forecast censored at 0 reports the censored law’s mean, above 0 while part of the law is', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    const a = await answer(protocol, 'mean:falling', 12);
    assert.equal(a.q(0.05), 0, `${protocol}: censored at 0`);
    assert.ok(a.q(0.95) > 0);
    assert.ok(a.mean > 0, `${protocol}: mean ${a.mean} with a 95% quantile of ${a.q(0.95)}`);
    assert.ok(Math.abs(a.mean - a.coarse) < 0.05 * a.q(0.95), `${protocol}: mean ${a.mean} vs ${a.coarse} from the quantiles`);
  }
});

test('a history above 0 forecast as (almost) certainly 0 says so in the answer’s warnings', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await oracleQuery(t, key, protocol, { entity: 'mean:few', horizon: 100 });
    assert.equal(o.code, 'ok', o.message);
    const warnings = o.data.forecast.warnings as string[];
    assert.ok(warnings.some((w) => /^sales: from step \d+ at least 97\.5% of the forecast lies at or below 0/.test(w)), `${protocol}: ${warnings.join('; ')}`);
    assert.equal(o.data.forecast.quantiles['0.95'], 0, protocol);
  }
});
