/**
 * What a depth query may read and keep, over both protocols: a hierarchy whose series cover more
 * grid steps than a depth query reads (`MAX_DEPTH_QUERY_STEPS`, lowered here) is refused with 400
 * `invalid_argument` before any series is read, while the entities within it still answer; and a
 * depth query over series longer than the engine fits (20,000 steps) answers exactly what it
 * answered before the memory of such queries was bounded (fitted residuals cut to the stretch
 * fitted, answers cached without their series' values: `fixtures/depth-long-series.json`, recorded
 * with the code before that change), and reproduces bit for bit.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForensicsServiceClient } from '../../gen/forecast/v1/forensics_service.pb';
import { grpcCall, rest } from '../helpers/dual';
import { dailyEntity, oracleQuery, seriesEntity, weekly } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

describe('a hierarchy whose series cover more grid steps than a depth query reads', () => {
  let t: TestService;
  let key: string;
  /** store:s contains sku:x and sku:y, 120 daily values each: 240 grid steps, over the limit of 200. */
  beforeAll(async () => {
    t = await startTestService({ depthQuerySteps: 200 });
    ({ key } = await t.account('enterprise'));
    await dailyEntity(t, key, 'sku:x', weekly);
    await dailyEntity(t, key, 'sku:y', (i) => weekly(i) + 7);
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:s', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
    for (const child of ['sku:x', 'sku:y']) assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:s', child } })).code, 'ok');
  });
  afterAll(() => t.close());

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: is refused with 400 invalid_argument naming the steps and how to narrow the query, before any series is read`, async () => {
      const reads = t.service.ctx.series.stats.started;
      const o = await oracleQuery(t, key, protocol, { entity: 'store:s', depth: 1 });
      assert.deepEqual([o.code, o.status], ['invalid_argument', protocol === 'rest' ? 400 : 3], o.message);
      assert.equal(
        o.message,
        'depth: the series of the 3 entities of the contains hierarchy under store:s cover 240 grid points on the axes queried (demand 240); a reconciled answer (depth ≥ 1) reads at most 200 (query an entity lower in it, fewer axes, or at depth 0)',
      );
      assert.equal(t.service.ctx.series.stats.started, reads, 'no series read');
      // the entities within it answer
      for (const body of [{ entity: 'sku:x' }, { entity: 'sku:y', depth: 1 }]) {
        const narrower = await oracleQuery(t, key, protocol, body);
        assert.equal(narrower.code, 'ok', narrower.message);
      }
    });
  }

  test("a reproduce of a depth query answered within the limit, its hierarchy grown past it since, is told what changed before any series is read", async () => {
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:g', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:g', child: 'sku:x' } })).code, 'ok');
    const o = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:g', depth: 1 } });
    assert.equal(o.code, 'ok', o.message);
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:g', child: 'sku:y' } })).code, 'ok');
    assert.equal((await oracleQuery(t, key, 'rest', { entity: 'store:g', depth: 1 })).code, 'invalid_argument', 'a new query is refused');
    const forensics = t.client(ForensicsServiceClient);
    for (const protocol of ['rest', 'grpc'] as const) {
      const reads = t.service.ctx.series.stats.started;
      const r = protocol === 'rest' ? await rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: o.data.query_id } }) : await grpcCall(forensics, forensics.reproduce, key, { queryId: o.data.query_id });
      assert.equal(r.code, 'failed_precondition', r.message);
      assert.equal(r.message, 'the hierarchy under store:g is no longer the one the query read: its series now cover 240 grid points on the axes queried, where the query read 120 (contains relations changed)');
      assert.equal(t.service.ctx.series.stats.started, reads, 'no series read');
    }
    // and once it is the one the query read again, it reproduces
    assert.equal((await rest(t, key, { method: 'DELETE', path: '/v1/relations/contains/store:g/sku:y' })).code, 'ok');
    const again = await rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: o.data.query_id } });
    assert.equal(again.code, 'ok', again.message);
    assert.equal(again.data.reproduced, true);
  });
});

describe('a depth query over series longer than the engine fits', () => {
  const FIXTURE = join(__dirname, '..', 'fixtures', 'depth-long-series.json');
  const HOUR = 3_600_000;
  let t: TestService;
  let key: string;
  /**
   * rack:r contains server:a and server:b: hourly, an observation every 3rd hour over 24,000 hours
   * (8,000 each, one ingest request), so the engine fits their last 20,000 steps and says so.
   */
  beforeAll(async () => {
    t = await startTestService();
    ({ key } = await t.account('enterprise'));
    for (const [entity, level] of [['server:a', 40], ['server:b', 70]] as const) {
      await seriesEntity(t, key, entity, { frequency: 'PT1H', axis: 'cpu', step: 3 * HOUR, n: 8_000, value: (i) => level + 10 * Math.sin((2 * Math.PI * (3 * i)) / 24) + ((i * 37) % 11) / 4 });
    }
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'rack:r', frequency: 'PT1H', axes: [{ name: 'cpu' }] } })).code, 'ok');
    for (const child of ['server:a', 'server:b']) assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'rack:r', child } })).code, 'ok');
  });
  afterAll(() => t.close());

  test('answers and records what it did before its memory was bounded, and reproduces bit for bit on both protocols', async () => {
    const o = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'rack:r', depth: 1, horizon: 6, include_manifest: true } });
    assert.equal(o.code, 'ok', o.message);
    const m = o.data.manifest;
    const answer = {
      output: { forecast: o.data.forecast, descendants: o.data.descendants, reconciliation: o.data.reconciliation },
      outputDigest: m.output_digest,
      inputs: m.inputs,
      models: m.models.map((x: any) => ({ entity: x.entity, aggregated: x.aggregated, seed: x.seed, series_digest: x.series_digest, model: x.model })),
    };
    assert.ok(answer.output.forecast.warnings.some((w: string) => w.includes("fitted on the last 20000 of the series' 23998 steps")), answer.output.forecast.warnings.join('; '));
    if (process.env.WRITE_FIXTURE) writeFileSync(FIXTURE, `${JSON.stringify(answer, null, 2)}\n`);
    assert.deepEqual(answer, JSON.parse(readFileSync(FIXTURE, 'utf8')));
    const forensics = t.client(ForensicsServiceClient);
    for (const protocol of ['rest', 'grpc'] as const) {
      const r = protocol === 'rest' ? await rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: o.data.query_id } }) : await grpcCall(forensics, forensics.reproduce, key, { queryId: o.data.query_id });
      assert.equal(r.code, 'ok', r.message);
      assert.equal(r.data.reproduced, true);
      assert.deepEqual(r.data.differences, []);
      assert.equal(protocol === 'rest' ? r.data.reproduced_output_digest : r.data.reproducedOutputDigest, m.output_digest);
    }
  });
});
