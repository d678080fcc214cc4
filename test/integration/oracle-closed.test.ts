/**
 * A shop closed on Sundays: asked for a Sunday, the answer is a certain 0 with a warning that says
 * why; asked for an open day, an ordinary forecast (found by QA: the closed day was forecast at
 * 9–18 with 95% upper ends of 70–98). Over both protocols.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ok, rest } from '../helpers/dual';
import { oracleQuery } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

const N = 20 * 7; // 20 weeks from a Monday: day i is a Sunday when i % 7 === 6
const START = Date.UTC(2025, 0, 6);
const WEEK = [85, 90, 95, 105, 125, 150, 0];
const value = (i: number): number => (i % 7 === 6 ? 0 : WEEK[i % 7] + ((i * 37) % 11) - 5);
const time = (i: number): string => new Date(START + i * 86_400_000).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'shop:closed-sundays', frequency: 'P1D', axes: [{ name: 'sales' }] } }));
  const observations = Array.from({ length: N }, (_, i) => ({ axis: 'sales', time: time(i), value: value(i) }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/shop:closed-sundays/observations', body: { observations } }));
  // the same shop, its Sundays left out of the data rather than sent as 0
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'shop:no-sundays', frequency: 'P1D', axes: [{ name: 'sales' }] } }));
  const reported = Array.from({ length: N }, (_, i) => i).filter((i) => i % 7 !== 6);
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/shop:no-sundays/observations', body: { observations: reported.map((i) => ({ axis: 'sales', time: time(i), value: value(i) })) } }));
  // a region of two shops closed on Sundays and two open every day
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'region:mixed', frequency: 'P1D', axes: [{ name: 'sales' }] } }));
  for (const [shop, closed] of [['shop:c1', true], ['shop:c2', true], ['shop:o1', false], ['shop:o2', false]] as const) {
    await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: shop, frequency: 'P1D', axes: [{ name: 'sales' }], parents: ['region:mixed'] } }));
    const rows = Array.from({ length: N }, (_, i) => ({ axis: 'sales', time: time(i), value: i % 7 === 6 ? (closed ? 0 : 60 + ((i * shop.length) % 7)) : value(i + shop.length) }));
    await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${shop}/observations`, body: { observations: rows } }));
  }
});
afterAll(() => t.close());

test('a Sunday of a shop closed on Sundays is a certain 0, said in the answer; a Wednesday is not', async () => {
  const answers: unknown[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    // day N is a Monday: horizon 7 is the next Sunday, horizon 3 a Wednesday
    const sunday = await oracleQuery(t, key, protocol, { entity: 'shop:closed-sundays', horizon: 7, quantiles: [0.025, 0.5, 0.975] });
    assert.equal(sunday.code, 'ok', sunday.message);
    const f = sunday.data.forecast;
    assert.deepEqual(Object.values(f.quantiles), [0, 0, 0], `${protocol}: ${JSON.stringify(f.quantiles)}`);
    assert.ok((f.warnings as string[]).some((w) => w.startsWith('sales: forecast as exactly 0 at steps 7 and every 7 steps after:')), `${protocol}: ${f.warnings.join('; ')}`);
    // the default bins of a certain 0 start at 0 (they ran from −0.05 before), all the mass in the first
    const thresholds = f.thresholds as number[];
    assert.equal(thresholds.length, 9);
    assert.equal(thresholds[0], 0, `${protocol}: ${JSON.stringify(thresholds)}`);
    assert.ok(thresholds.every((x, i) => i === 0 || x > thresholds[i - 1]));
    assert.deepEqual(f.distribution, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0], `${protocol}: ${JSON.stringify(f.distribution)}`);
    const wednesday = await oracleQuery(t, key, protocol, { entity: 'shop:closed-sundays', horizon: 3, quantiles: [0.025, 0.5, 0.975] });
    assert.equal(wednesday.code, 'ok', wednesday.message);
    const median = wednesday.data.forecast.quantiles['0.5'];
    assert.ok(Math.abs(median - 95) < 10, `${protocol}: Wednesday's median ${median}`);
    answers.push([f.quantiles, f.warnings, f.thresholds, f.distribution, wednesday.data.forecast.quantiles]);
  }
  assert.deepEqual(answers[0], answers[1], 'REST and gRPC give the same answers');
});

// found by QA: a shop that leaves its Sundays out got a confident Sunday forecast without a word
test('a Sunday the shop never reports is answered with a warning that says the forecast there is filled in', async () => {
  const answers: unknown[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    // its data end on a Saturday: step 1 is the next Sunday
    const sunday = await oracleQuery(t, key, protocol, { entity: 'shop:no-sundays', horizon: 1 });
    assert.equal(sunday.code, 'ok', sunday.message);
    const warnings = sunday.data.forecast.warnings as string[];
    assert.ok(warnings.includes('sales: steps 1 and every 7 steps after fall on positions of the cycle of 7 with no observation in the last 8 cycles: the forecast there rests on values filled in from the neighbouring positions'), `${protocol}: ${warnings.join('; ')}`);
    // the shop that reports its Sundays as 0 is closed there, not unobserved
    const closed = await oracleQuery(t, key, protocol, { entity: 'shop:closed-sundays', horizon: 7 });
    assert.ok(!(closed.data.forecast.warnings as string[]).some((w) => w.includes('no observation in the last')), `${protocol}: ${closed.data.forecast.warnings.join('; ')}`);
    answers.push([sunday.data.forecast.quantiles, warnings]);
  }
  assert.deepEqual(answers[0], answers[1], 'REST and gRPC give the same answers');
});

/** A forecast as either protocol spells it (descendants come in the message's field names). */
type Forecast = { quantiles: Record<string, number>; axes_resolved?: Record<string, number>; axesResolved?: Record<string, number>; warnings: string[] };
const resolved = (f: Forecast): number => (f.axes_resolved ?? f.axesResolved)!.sales;

// found by QA: at depth 1, MinT spread the region's mismatch onto the closed shops (97.5% quantile
// 1.0–1.7 on a Sunday) while their answers said "exactly 0"
test('at depth 1 a closed shop stays a certain 0 on its Sunday, and the region is the sum of its shops', async () => {
  const answers: unknown[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    for (const reconciliation of ['', 'ols']) {
      const o = await oracleQuery(t, key, protocol, { entity: 'region:mixed', depth: 1, horizon: 7, quantiles: [0.025, 0.5, 0.975], reconciliation });
      assert.equal(o.code, 'ok', o.message);
      const shops = o.data.descendants as Array<{ entity: string; forecast: Forecast }>;
      let sum = 0;
      for (const d of shops) {
        sum += resolved(d.forecast);
        if (d.entity === 'shop:c1' || d.entity === 'shop:c2') {
          assert.deepEqual(Object.values(d.forecast.quantiles), [0, 0, 0], `${protocol} ${reconciliation}: ${d.entity} ${JSON.stringify(d.forecast.quantiles)}`);
          assert.ok(d.forecast.warnings.some((w) => w.includes('forecast as exactly 0')), d.forecast.warnings.join('; '));
        } else assert.ok(d.forecast.quantiles['0.5'] > 50, `${protocol} ${reconciliation}: ${d.entity} ${JSON.stringify(d.forecast.quantiles)}`);
      }
      assert.ok(Math.abs(resolved(o.data.forecast) - sum) < 1e-9 * sum, `${protocol} ${reconciliation}: region ${resolved(o.data.forecast)} against the shops' ${sum}`);
      answers.push(o.data.forecast.quantiles);
    }
  }
  assert.deepEqual(answers.slice(0, 2), answers.slice(2), 'REST and gRPC give the same answers');
});
