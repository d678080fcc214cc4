/**
 * One wild value among hourly counts of about 1, over both protocols (found by QA in engine 1.12.0):
 * - a 10^15: the demand sizes were too wide to tabulate and were rescaled as v·f, so the demands
 *   of 1–3 became about 0.001, which the count law rounds to 0: every quantile was 0 (engine 1.12.2
 *   rescales above 1, so each demand stays a whole count of at least 1);
 * - a value beyond 2^53: the series goes to continuous models, whose quantiles on a count axis were
 *   not whole (1.0000000006; engine 1.12.3 rounds them and censors them at 0).
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { oracleQuery, seriesEntity } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

const HOURS = 24 * 42;
const WILD = { 'server:wild': 1e15, 'server:beyond': 2 ** 53 + 2 } as const;

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  for (const [entity, wild] of Object.entries(WILD)) {
    await seriesEntity(t, key, entity, { frequency: 'PT1H', axis: 'errors', kind: 'count', step: 3_600_000, n: HOURS, value: (i) => (i === 500 ? wild : [0, 1, 2, 0, 0, 3, 1][i % 7]) });
  }
});
afterAll(() => t.close());

const QUANTILES = [0.025, 0.5, 0.9, 0.975];

test('counts of about 1 beside a 10^15: the demands keep whole counts of at least 1 (not every quantile 0)', async () => {
  const answers: unknown[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    const tops: number[] = [];
    for (const horizon of [1, 2, 3, 4, 5, 6, 7]) {
      const a = await oracleQuery(t, key, protocol, { entity: 'server:wild', horizon, quantiles: QUANTILES });
      assert.equal(a.code, 'ok', a.message);
      const f = a.data.forecast;
      assert.match(f.model, /^count-pool\(/, `${protocol}: ${f.model}`);
      for (const q of Object.values(f.quantiles) as number[]) assert.ok(Number.isInteger(q) && q >= 0, `${protocol}: quantile ${q}`);
      tops.push(f.quantiles['0.975']);
      answers.push([protocol === 'rest' ? 0 : 1, horizon, f.quantiles]);
    }
    // 4 hours in 7 see a demand: a 97.5% quantile of 0 at every one of 7 hours would deny them all
    assert.ok(tops.some((q) => q >= 1), `${protocol}: 97.5% quantiles ${tops}`);
  }
  const [restAnswers, grpcAnswers] = [answers.filter((a) => (a as unknown[])[0] === 0), answers.filter((a) => (a as unknown[])[0] === 1)];
  assert.deepEqual(restAnswers.map((a) => (a as unknown[]).slice(1)), grpcAnswers.map((a) => (a as unknown[]).slice(1)), 'REST and gRPC give the same answers');
});

test('a count beyond 2^53 (continuous models): the answer on the count axis is still whole counts', async () => {
  const answers: unknown[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    const a = await oracleQuery(t, key, protocol, { entity: 'server:beyond', horizon: 3, quantiles: QUANTILES });
    assert.equal(a.code, 'ok', a.message);
    const f = a.data.forecast;
    assert.ok(!/^count-/.test(f.model), `${protocol}: continuous models, got ${f.model}`);
    for (const q of Object.values(f.quantiles) as number[]) assert.ok(Number.isInteger(q) && q >= 0, `${protocol}: quantile ${q}`);
    answers.push(f.quantiles);
  }
  assert.deepEqual(answers[0], answers[1], 'REST and gRPC give the same answers');
});
