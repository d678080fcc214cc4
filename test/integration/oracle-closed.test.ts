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
    assert.ok((f.warnings as string[]).some((w) => w.startsWith('sales: forecast as exactly 0 every 7 steps from step 7:')), `${protocol}: ${f.warnings.join('; ')}`);
    const wednesday = await oracleQuery(t, key, protocol, { entity: 'shop:closed-sundays', horizon: 3, quantiles: [0.025, 0.5, 0.975] });
    assert.equal(wednesday.code, 'ok', wednesday.message);
    const median = wednesday.data.forecast.quantiles['0.5'];
    assert.ok(Math.abs(median - 95) < 10, `${protocol}: Wednesday's median ${median}`);
    answers.push([f.quantiles, f.warnings, wednesday.data.forecast.quantiles]);
  }
  assert.deepEqual(answers[0], answers[1], 'REST and gRPC give the same answers');
});
