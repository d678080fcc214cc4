/**
 * Weekly sales with 4 years of history (3 to under 5 yearly cycles): `auto` answers with the seasonal
 * AR pair quantile-averaged with MSTL + ETS in logs (engine 1.14.0), and the yearly cycle stays in
 * the answer at its full size (engine 1.13.0's non-seasonal ETS half flattened it, found by QA).
 * Over both protocols.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { DAY, oracleQuery, seriesEntity } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

const WEEKS = 52 * 4;
/** A yearly cycle of ±30% around 200, peaking 13 weeks into the year, with a little deterministic noise. */
const sales = (i: number): number => Math.round(200 * (1 + 0.3 * Math.sin((2 * Math.PI * i) / 52)) + 4 * Math.sin(1.7 * i));

/** The mean of the `sales` axis (REST names the field `axes_resolved`, gRPC's stubs `axesResolved`). */
const mean = (f: { axes_resolved?: Record<string, number>; axesResolved?: Record<string, number> }): number => (f.axes_resolved ?? f.axesResolved)!.sales;

beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  await seriesEntity(t, key, 'store:weekly', { frequency: 'P1W', axis: 'sales', step: 7 * DAY, n: WEEKS, value: sales });
});
afterAll(() => t.close());

test('4 years of weekly sales: the AR pair with MSTL + ETS in logs, and the yearly peak and trough kept', async () => {
  const answers: unknown[] = [];
  for (const protocol of ['rest', 'grpc'] as const) {
    // the history ends at a year's end: step 13 is the yearly peak (about 260), step 39 the trough (about 140)
    const peak = await oracleQuery(t, key, protocol, { entity: 'store:weekly', horizon: 13, quantiles: [0.5] });
    const trough = await oracleQuery(t, key, protocol, { entity: 'store:weekly', horizon: 39, quantiles: [0.5] });
    for (const a of [peak, trough]) assert.equal(a.code, 'ok', a.message);
    const [p, q] = [peak.data.forecast, trough.data.forecast];
    assert.match(p.model, /^autoreg\+autoreg-raw\+mstl-ets-log\*2\(.*MSTL\(ETS\(.*\)\)\[log\]\)$/, `${protocol}: ${p.model}`);
    // the cycle's full swing is 120; half of it (1.13.0) would leave about 60
    assert.ok(mean(p) - mean(q) > 90, `${protocol}: peak ${mean(p)}, trough ${mean(q)}`);
    answers.push([p.quantiles, q.quantiles, mean(p), mean(q), p.model]);
  }
  assert.deepEqual(answers[0], answers[1], 'REST and gRPC give the same answers');
});
