/**
 * The 422 for too little data names the minimum the engine will require for that entity and
 * axis, whatever the current count (found by QA: "at least 2 are needed" with no observation,
 * then 3 — or 10 for daily and weekly data — once one or two had come). Over both protocols, at
 * depth 0 and for a hierarchy with no data at all.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import type { Frequency } from '../../src/entities/frequency';
import { ok, rest } from '../helpers/dual';
import { oracleQuery } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

/** Each frequency, its first observation times (on its grid), and the need `auto` has there. */
const CASES: [Frequency, string[], number][] = [
  ['P1Y', ['2020-01-01T00:00:00Z', '2021-01-01T00:00:00Z'], 3],
  ['P3M', ['2020-01-01T00:00:00Z', '2020-04-01T00:00:00Z'], 3],
  ['P1W', ['2020-01-06T00:00:00Z', '2020-01-13T00:00:00Z'], 10],
  ['P1D', ['2020-01-01T00:00:00Z', '2020-01-02T00:00:00Z'], 10],
  ['PT1H', ['2020-01-01T00:00:00Z', '2020-01-01T01:00:00Z'], 3],
  ['PT5M', ['2020-01-01T00:00:00Z', '2020-01-01T00:05:00Z'], 3],
];

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  for (const [frequency, times] of CASES) {
    for (let n = 0; n <= 2; n++) {
      const entity = `need_${frequency.toLowerCase()}:n${n}`;
      await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency, axes: [{ name: 'sales' }] } }));
      if (n > 0) await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations: times.slice(0, n).map((time, i) => ({ axis: 'sales', time, value: 5 + i })) } }));
    }
  }
});
afterAll(() => t.close());

test('with 0, 1 or 2 observations the 422 names the same need for a yearly, quarterly, weekly, daily, hourly and 5-minute entity', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    for (const [frequency, , need] of CASES) {
      for (let have = 0; have <= 2; have++) {
        const entity = `need_${frequency.toLowerCase()}:n${have}`;
        const o = await oracleQuery(t, key, protocol, { entity });
        assert.equal(o.code, 'insufficient_data', `${protocol} ${entity}: ${o.message}`);
        assert.equal(o.message, `axis sales of ${entity} has ${have} observations; at least ${need} are needed to forecast it`, protocol);
        if (protocol === 'rest') assert.deepEqual(o.data.details, { axis: 'sales', have, need });
      }
    }
  }
});

test('a hierarchy with no data anywhere names the need its entity will have', async () => {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'need_tree:root', frequency: 'P1D', axes: [{ name: 'sales' }] } }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'need_tree:leaf', frequency: 'P1D', axes: [{ name: 'sales' }], parents: ['need_tree:root'] } }));
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await oracleQuery(t, key, protocol, { entity: 'need_tree:root', depth: 1 });
    assert.equal(o.code, 'insufficient_data', o.message);
    assert.equal(o.message, 'axis sales of need_tree:root has no observations, and no leaf beneath it has any; at least 10 are needed to forecast it');
    if (protocol === 'rest') assert.deepEqual(o.data.details, { axis: 'sales', have: 0, need: 10 });
  }
});

// found by QA: an answer from a history too short to backtest said so twice, in two wordings
test('a history too short to backtest is said once in the answer', async () => {
  const entity = 'need_p1y:short';
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P1Y', axes: [{ name: 'sales' }] } }));
  const observations = ['2020', '2021', '2022', '2023'].map((y, i) => ({ axis: 'sales', time: `${y}-01-01T00:00:00Z`, value: 5 + i }));
  await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations } }));
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await oracleQuery(t, key, protocol, { entity, horizon: 3 });
    assert.equal(o.code, 'ok', o.message);
    const said = (o.data.forecast.warnings as string[]).filter((w) => /backtest/.test(w));
    assert.equal(said.length, 1, `${protocol}: ${said.join('; ')}`);
    assert.equal(o.data.forecast.confidence, 0);
  }
});
