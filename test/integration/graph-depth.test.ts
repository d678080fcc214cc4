/**
 * Oracle queries with `depth` ≥ 1 over both protocols, on a grouped hierarchy (the region splits
 * both into stores and into categories; every SKU has two parents): coherent descendants at
 * depth 1 and 2, every method, count axes never negative, aggregates forecast from their leaves,
 * own data checked against them, the fit cache shared with depth-0 queries, the query record
 * holding every input, tenancy, scopes and bad input.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { Rng } from '../../src/engine/rng';
import { ok, rest, type Outcome } from '../helpers/dual';
import { oracleQuery, type OracleQueryBody } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;
let accountId: string;
let otherKey: string;
let noReadKey: string;

/**
 * region:r ─┬─ store:a ── sku:a1, sku:a2        category:c1 ── sku:a1, sku:b1
 *           ├─ store:b ── sku:b1, sku:b2        category:c2 ── sku:a2, sku:b2
 *           ├─ category:c1
 *           └─ category:c2
 * Only the SKUs have observations (demand: small counts, some zeros; revenue: continuous).
 */
const SKUS = ['sku:a1', 'sku:a2', 'sku:b1', 'sku:b2'];
const EDGES: [string, string][] = [
  ['region:r', 'store:a'],
  ['region:r', 'store:b'],
  ['region:r', 'category:c1'],
  ['region:r', 'category:c2'],
  ['store:a', 'sku:a1'],
  ['store:a', 'sku:a2'],
  ['store:b', 'sku:b1'],
  ['store:b', 'sku:b2'],
  ['category:c1', 'sku:a1'],
  ['category:c1', 'sku:b1'],
  ['category:c2', 'sku:a2'],
  ['category:c2', 'sku:b2'],
];
const DAYS = 140;
const day = (d: number) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  t = await startTestService();
  ({ key, accountId } = await t.account('enterprise'));
  otherKey = (await t.account('enterprise')).key;
  noReadKey = (await t.account('enterprise', ['data:write'])).key;
  const axes = [
    { name: 'demand', kind: 'count' },
    { name: 'revenue', unit: 'EUR' },
  ];
  const entities = [...new Set(EDGES.flat())];
  for (const e of entities) await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: e, frequency: 'P1D', axes } }));
  for (const [parent, child] of EDGES) await ok(rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent, child } }));
  const rng = new Rng(7);
  for (const [k, e] of SKUS.entries()) {
    const observations = [];
    for (let d = 0; d < DAYS; d++) {
      const weekly = [1, 0.6, 0.8, 1, 1.3, 1.8, 1.5][d % 7];
      // sku:a2 sells rarely: many zeros, so reconciliation has negatives to avoid
      const level = k === 1 ? 0.4 : 6 + 3 * k;
      observations.push({ axis: 'demand', time: day(d), value: Math.max(0, Math.round(level * weekly + (k === 1 ? 0.5 : 1.5) * rng.normal())) });
      observations.push({ axis: 'revenue', time: day(d), value: 100 * (k + 1) * weekly + 0.1 * d + 5 * rng.normal() });
    }
    await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${e}/observations`, body: { observations } }));
  }
});
afterAll(() => t.close());

function query(protocol: 'rest' | 'grpc', body: OracleQueryBody, k = key): Promise<Outcome> {
  return oracleQuery(t, k, protocol, body);
}

/** Entity → its forecast (the queried one and every descendant), protocol-neutral field names. */
function forecasts(o: Outcome): Map<string, { means: Record<string, number>; f: any; level: number }> {
  const rest = o.protocol === 'rest';
  const norm = (f: any) => ({ means: rest ? f.axes_resolved : f.axesResolved, f });
  const out = new Map([[o.data.entity as string, { ...norm(o.data.forecast), level: 0 }]]);
  for (const d of o.data.descendants) out.set(d.entity, { ...norm(d.forecast), level: d.level });
  return out;
}

const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)), `${what}: ${a} vs ${b}`);

for (const protocol of ['rest', 'grpc'] as const) {
  describe(`depth queries over ${protocol}`, () => {
    test('depth 1: the region equals the sum of its stores and of its categories (no SKU counted twice)', async () => {
      const o = await ok(query(protocol, { entity: 'region:r', depth: 1, axes: ['revenue', 'demand'], horizon: 3 }));
      assert.equal(o.data.depth, 1);
      assert.equal(o.data.reconciliation, 'mint_shrink');
      const f = forecasts(o);
      assert.deepEqual([...f.keys()].sort(), ['category:c1', 'category:c2', 'region:r', 'store:a', 'store:b']);
      for (const e of ['store:a', 'store:b', 'category:c1', 'category:c2']) assert.equal(f.get(e)!.level, 1);
      for (const axis of ['revenue', 'demand']) {
        const m = (e: string) => f.get(e)!.means[axis];
        near(m('region:r'), m('store:a') + m('store:b'), `${axis} region = stores`);
        near(m('region:r'), m('category:c1') + m('category:c2'), `${axis} region = categories`);
      }
      // the same shape for every node: distribution, thresholds, quantiles, confidence
      for (const { f: fc } of f.values()) {
        assert.equal(fc.distribution.length, 10);
        assert.ok(Math.abs(fc.distribution.reduce((a: number, b: number) => a + b, 0) - 1) < 1e-9);
        assert.equal(Object.keys(fc.quantiles).length, 7);
        assert.ok(fc.confidence >= 0 && fc.confidence <= 1);
      }
    });

    test('depth 2 with every method: each node equals the sum of the SKUs beneath it; count axes never negative', async () => {
      for (const reconciliation of ['mint_shrink', 'wls_struct', 'ols', 'bottom_up']) {
        const o = await ok(query(protocol, { entity: 'region:r', depth: 2, axes: ['demand', 'revenue'], horizon: 2, reconciliation, thresholds: [-1, 0, 1, 10, 40] }));
        assert.equal(o.data.reconciliation, reconciliation);
        const f = forecasts(o);
        assert.equal(f.size, 9);
        for (const s of SKUS) assert.equal(f.get(s)!.level, 2);
        for (const axis of ['demand', 'revenue']) {
          const m = (e: string) => f.get(e)!.means[axis];
          const sum = (...es: string[]) => es.reduce((a, e) => a + m(e), 0);
          near(m('region:r'), sum(...SKUS), `${reconciliation} ${axis} region`);
          near(m('store:a'), sum('sku:a1', 'sku:a2'), `${reconciliation} ${axis} store:a`);
          near(m('store:b'), sum('sku:b1', 'sku:b2'), `${reconciliation} ${axis} store:b`);
          near(m('category:c1'), sum('sku:a1', 'sku:b1'), `${reconciliation} ${axis} category:c1`);
          near(m('category:c2'), sum('sku:a2', 'sku:b2'), `${reconciliation} ${axis} category:c2`);
        }
        // demand counts: no mass below zero, integer non-negative quantiles, non-negative means
        for (const [e, { means, f: fc }] of f) {
          assert.ok(means.demand >= 0, `${e} demand mean ${means.demand}`);
          for (const q of Object.values(fc.quantiles) as number[]) assert.ok(Number.isInteger(q) && q >= 0, `${e} quantile ${q}`);
        }
        const root = f.get('region:r')!.f;
        assert.deepEqual(root.thresholds, [-1, 0, 1, 10, 40]);
        assert.equal(root.distribution[0], 0);
        assert.equal(root.distribution[1], 0);
      }
    });

    test('tenancy 404, 403 without forecast:read, bad input named', async () => {
      assert.equal((await query(protocol, { entity: 'region:r', depth: 1 }, otherKey)).code, 'not_found');
      assert.equal((await query(protocol, { entity: 'region:r', depth: 1 }, noReadKey)).code, 'permission_denied');
      const cases: [OracleQueryBody, string][] = [
        [{ entity: 'region:r', depth: 1, reconciliation: 'magic' }, 'reconciliation'],
        [{ entity: 'region:r', depth: 9 }, 'depth'],
        [{ entity: 'region:r', depth: -1 }, 'depth'],
        [{ entity: 'region:r', depth: 1, axes: ['nope'] }, 'axes[0]'],
      ];
      for (const [body, field] of cases) {
        const o = await query(protocol, body);
        assert.equal(o.code, 'invalid_argument', `${field}: ${o.code} ${o.message}`);
        assert.ok(o.message.startsWith(`${field}: `), o.message);
      }
    });
  });
}

test('a depth beyond the graph uses what exists; a leaf alone is its own forecast', async () => {
  const deep = await ok(query('rest', { entity: 'store:a', depth: 8, axes: ['revenue'] }));
  assert.deepEqual(deep.data.descendants.map((d: any) => d.entity).sort(), ['sku:a1', 'sku:a2']);
  const leaf = await ok(query('grpc', { entity: 'sku:a1', depth: 3, axes: ['revenue'] }));
  assert.deepEqual(leaf.data.descendants, []);
  const plain = await ok(query('grpc', { entity: 'sku:a1', axes: ['revenue'] }));
  // exactly its depth-0 answer (count axes too: not a one-node reconciliation of draws), nothing reconciled
  for (const axes of [['revenue'], ['demand']]) {
    const [d3, d0] = await Promise.all([ok(query('rest', { entity: 'sku:a1', depth: 3, axes })), ok(query('rest', { entity: 'sku:a1', axes }))]);
    assert.deepEqual(d3.data.forecast, d0.data.forecast, `${axes}`);
    assert.equal(d3.data.depth, 3);
    assert.equal(d3.data.reconciliation, '');
    const again = await ok(rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: d3.data.query_id } }));
    assert.equal(again.data.reproduced, true, JSON.stringify(again.data));
  }
  near(leaf.data.forecast.axesResolved.revenue, plain.data.forecast.axesResolved.revenue, 'a lone leaf keeps its own forecast');
});

test('the fit cache is shared with depth-0 queries, and the query manifest holds every input and node model', async () => {
  const { stats } = t.service.ctx.pool;
  const o = await ok(query('rest', { entity: 'region:r', depth: 2, axes: ['revenue'], horizon: 5 }));
  const fitsAfterDepth = stats.fits;
  for (const s of SKUS) await ok(query('rest', { entity: s, axes: ['revenue'], horizon: 5 }));
  assert.equal(stats.fits, fitsAfterDepth, 'depth-0 queries of the leaves refit nothing');
  const stored = await t.service.ctx.manifests.get(accountId, o.data.query_id);
  assert.ok(stored);
  const manifest = JSON.parse(stored.json);
  assert.deepEqual(manifest.inputs.map((e: any) => e.entity).sort(), [...SKUS].sort());
  assert.deepEqual(manifest.models.filter((e: any) => !e.aggregated).map((e: any) => e.entity).sort(), [...SKUS].sort());
  assert.deepEqual(manifest.models.filter((e: any) => e.aggregated).map((e: any) => e.entity).sort(), ['category:c1', 'category:c2', 'region:r', 'store:a', 'store:b']);
  for (const e of [...manifest.inputs, ...manifest.models]) assert.match(e.series_digest, /^[0-9a-f]{64}$/);
  assert.equal(manifest.request.reconciliation, 'mint_shrink');
  assert.equal(JSON.parse(stored.output).descendants.length, 8);
  // the same query again is answered from the cache: same forecast
  const again = await ok(query('rest', { entity: 'region:r', depth: 2, axes: ['revenue'], horizon: 5 }));
  assert.deepEqual(again.data.forecast, o.data.forecast);
  assert.deepEqual(again.data.descendants, o.data.descendants);
});

test('own data are checked against the leaves: when they disagree the node is forecast from the sum (warned), and the leaves keep their own forecasts', async () => {
  // the leaves alone, as a depth-0 query forecasts each
  const alone = new Map<string, number>();
  for (const s of ['sku:a1', 'sku:a2']) alone.set(s, forecasts(await ok(query('rest', { entity: s, axes: ['revenue'] }))).get(s)!.means.revenue);
  const leaves = await Promise.all(['sku:a1', 'sku:a2'].map((s) => rest(t, key, { method: 'GET', path: `/v1/entities/${s}/observations?axis=revenue&page_size=200` })));
  // a parent 10% off, one reported in thousands, and one a thousand times larger
  for (const [name, factor, gap] of [['store:own', 1.1, /9\.\d+%/], ['store:kilo', 0.001, /99\.9%/], ['store:mega', 1000, /99\.9%/]] as const) {
    await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: name, frequency: 'P1D', axes: [{ name: 'revenue' }], parents: [] } }));
    for (const s of ['sku:a1', 'sku:a2']) await ok(rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: name, child: s } }));
    const own = leaves[0].data.observations.map((o: any, i: number) => ({ axis: 'revenue', time: o.time, value: factor * (o.value + leaves[1].data.observations[i].value) }));
    await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${name}/observations`, body: { observations: own } }));
    for (const reconciliation of ['mint_shrink', 'wls_struct', 'ols']) {
      const o = await ok(query('rest', { entity: name, depth: 1, axes: ['revenue'], reconciliation }));
      const warning = o.data.forecast.warnings.find((w: string) => w.startsWith(`revenue: ${name}'s own data differ from the sum of its 2 leaves by up to `));
      assert.ok(warning && gap.test(warning) && warning.endsWith('; it is forecast from that sum'), JSON.stringify(o.data.forecast.warnings));
      const f = forecasts(o);
      near(f.get(name)!.means.revenue, f.get('sku:a1')!.means.revenue + f.get('sku:a2')!.means.revenue, `${name} ${reconciliation}: the sum`);
      // reconciling the leaves with their own sum moves them little (it dragged them to negative or ×1000 before)
      for (const [s, mean] of alone) {
        const got = f.get(s)!.means.revenue;
        assert.ok(Math.abs(got - mean) <= 0.25 * Math.abs(mean), `${name} ${reconciliation}: ${s} ${got} against ${mean} alone`);
      }
    }
  }
});

test('no data anywhere beneath: 422 insufficient_data', async () => {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'region:empty', frequency: 'P1D', axes: [{ name: 'revenue' }] } }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:empty', frequency: 'P1D', axes: [{ name: 'revenue' }], parents: ['region:empty'] } }));
  const o = await query('grpc', { entity: 'region:empty', depth: 2 });
  assert.equal(o.code, 'insufficient_data');
  assert.match(o.message, /no observations, and no leaf beneath it has any/);
});

/** A daily region over stores whose `units` run from 2026-01-01 for the given numbers of days. */
async function storesWithDays(region: string, stores: readonly (readonly [string, number])[]): Promise<void> {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: region, frequency: 'P1D', axes: [{ name: 'units' }] } }));
  for (const [e, days] of stores) {
    await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: e, frequency: 'P1D', axes: [{ name: 'units' }], parents: [region] } }));
    const rows = Array.from({ length: days }, (_, i) => ({ axis: 'units', time: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(), value: 10 + (i % 7) }));
    await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${e}/observations`, body: { observations: rows } }));
  }
}

test('a leaf that ends early cuts the sum beneath its parent short, and a warning names it, on both protocols', async () => {
  await storesWithDays('region:ends', [['store:long', 40], ['store:shorter', 30]]);
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await ok(query(protocol, { entity: 'region:ends', depth: 1, axes: ['units'] }));
    assert.ok(
      o.data.forecast.warnings.includes('units: the sum beneath region:ends ends at 2026-01-30T00:00:00Z, where the data of store:shorter end (other leaves run to 2026-02-09T00:00:00Z)'),
      `${protocol}: ${JSON.stringify(o.data.forecast.warnings)}`,
    );
  }
});

test('a leaf whose data end so early that the sum beneath its parent is too short: 422 naming the leaf, on both protocols', async () => {
  await storesWithDays('region:cut', [['store:open', 40], ['store:closed', 3]]);
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await query(protocol, { entity: 'region:cut', depth: 1, axes: ['units'] });
    assert.equal(o.code, 'insufficient_data', `${protocol}: ${o.message}`);
    assert.match(o.message, /^axis units of region:cut: 3 observations; at least \d+ are needed; the sum beneath region:cut ends at 2026-01-03T00:00:00Z, where the data of store:closed end \(other leaves run to 2026-02-09T00:00:00Z\)$/);
  }
});

test('leaves whose sum overflows a double (two at 1e308): 422 saying so, on both protocols, and a path query warns the same (found by QA: "y[0] is Infinity, not a finite number")', async () => {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'region:huge', frequency: 'P1D', axes: [{ name: 'units' }] } }));
  for (const e of ['store:huge1', 'store:huge2']) {
    await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: e, frequency: 'P1D', axes: [{ name: 'units' }], parents: ['region:huge'] } }));
    const rows = Array.from({ length: 30 }, (_, i) => ({ axis: 'units', time: day(i), value: 1e308 - (i % 7) * 1e306 }));
    await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${e}/observations`, body: { observations: rows } }));
  }
  const reason = /the sum of its leaves overflows \(beyond ±1\.80e\+308\) at 30 of its steps; the engine forecasts series whose largest absolute value lies between 1e-8 and 1e\+100: store the leaves in another unit/;
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await query(protocol, { entity: 'region:huge', depth: 1, axes: ['units'] });
    assert.equal(o.code, 'insufficient_data', `${protocol}: ${o.message}`);
    assert.match(o.message, /^axis units of region:huge: /);
    assert.match(o.message, reason);
  }
  const paths = await ok(rest(t, key, { method: 'POST', path: '/v1/paths/query', body: { from: 'region:huge', axes: ['units'] } }));
  const root = paths.data.paths[0].nodes[0];
  assert.deepEqual(root.axes_resolved, {});
  assert.match(root.warnings.join('\n'), reason);
});

test('an entity with data whose children have none still counts in its ancestors (coherent at every depth); the answer is not served stale from the cache, and reproduces', async () => {
  await storesWithDays('region:fed', [['store:fa', 40], ['store:fb', 40]]);
  const regionOf = async (protocol: 'rest' | 'grpc', depth: number) => {
    const o = await ok(query(protocol, { entity: 'region:fed', depth, axes: ['units'] }));
    const f = forecasts(o);
    near(f.get('region:fed')!.means.units, f.get('store:fa')!.means.units + f.get('store:fb')!.means.units, `${protocol} depth ${depth}: region = stores`);
    return o;
  };
  const before = await regionOf('rest', 2); // cached
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:unfed', frequency: 'P1D', axes: [{ name: 'units' }], parents: ['store:fa'] } }));
  for (const protocol of ['rest', 'grpc'] as const) {
    for (const depth of [1, 2]) {
      const o = await regionOf(protocol, depth);
      near(forecasts(o).get('region:fed')!.means.units, forecasts(before).get('region:fed')!.means.units, 'the empty child changes nothing');
      const leftOut = 'units: sku:unfed has no observations and no leaf beneath it has any: left out';
      assert.equal(o.data.forecast.warnings.includes(leftOut), depth === 2, `${protocol} depth ${depth}: ${JSON.stringify(o.data.forecast.warnings)}`);
      const again = await ok(rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: o.protocol === 'rest' ? o.data.query_id : o.data.queryId } }));
      assert.equal(again.data.reproduced, true, JSON.stringify(again.data));
    }
  }
});

test('a descendant whose axis has another kind: 400 failed_precondition naming it, on both protocols', async () => {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'region:kinds', frequency: 'P1D', axes: [{ name: 'units', kind: 'count' }] } }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:counts', frequency: 'P1D', axes: [{ name: 'units', kind: 'count' }], parents: ['region:kinds'] } }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:reals', frequency: 'P1D', axes: [{ name: 'units', kind: 'continuous' }], parents: ['region:kinds'] } }));
  const rows = (v: (i: number) => number) => Array.from({ length: 40 }, (_, i) => ({ axis: 'units', time: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(), value: v(i) }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/store:counts/observations', body: { observations: rows((i) => 5 + (i % 7)) } }));
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities/store:reals/observations', body: { observations: rows((i) => 2.5 + (i % 5) / 3) } }));
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await query(protocol, { entity: 'region:kinds', depth: 1, axes: ['units'] });
    assert.equal(o.code, 'failed_precondition', `${protocol}: ${o.message}`);
    assert.match(o.message, /store:reals has axis units of kind continuous, the hierarchy under region:kinds has it as count/);
  }
});

/** `name` (an axis, no data) containing `spokes` daily entities `spoke:s0`…, written directly. */
async function hub(accountId: string, name: string, spokes: number): Promise<void> {
  const { entities, relations, database } = t.service.ctx;
  await database.transaction(async (trx) => {
    await entities.upsertRow(trx, accountId, { entity: name, type: 'hub', displayName: '', frequency: 'P1D', seasonLength: 7 }, 0);
    await entities.upsertAxes(trx, accountId, name, [{ name: 'revenue', unit: '', kind: 'continuous' }]);
    for (let i = 0; i < spokes; i++) {
      await entities.upsertRow(trx, accountId, { entity: `spoke:s${i}`, type: 'spoke', displayName: '', frequency: 'P1D', seasonLength: 7 }, 0);
      await relations.add(trx, accountId, name, `spoke:s${i}`, 'contains', 0);
    }
  });
}

/** A depth-1 query of `entity` over REST and over gRPC, each answer checked by `check`. */
async function depthOneOnBoth(entity: string, key: string, check: (o: Outcome) => void): Promise<void> {
  for (const protocol of ['rest', 'grpc'] as const) check(await query(protocol, { entity, depth: 1 }, key));
}

test('a hierarchy of more than 1,000 entities: 400 naming the limit, on both protocols, before any series is read (found by QA: 4,950 reconciled for 11+ minutes)', async () => {
  const wide = await t.account('enterprise');
  await hub(wide.accountId, 'hub:w', 1000);
  await depthOneOnBoth('hub:w', wide.key, (o) => {
    assert.equal(o.code, 'invalid_argument');
    assert.equal(o.message, 'depth: the contains hierarchy under hub:w has 1001 entities; a reconciled answer (depth ≥ 1) covers at most 1000 (query an entity lower in it, or at depth 0)');
  });
  // one spoke fewer: within the limit (no data anywhere: the need is named instead)
  assert.ok(await t.service.ctx.relations.delete(wide.accountId, 'hub:w', 'spoke:s999', 'contains'));
  await depthOneOnBoth('hub:w', wide.key, (o) => assert.equal(o.code, 'insufficient_data', o.message));
});

test('a hierarchy of more than 5,000 entities: 400 naming the limit, on both protocols', async () => {
  const big = await t.account('enterprise');
  await hub(big.accountId, 'hub:h', 5000);
  await depthOneOnBoth('hub:h', big.key, (o) => {
    assert.equal(o.code, 'invalid_argument');
    assert.match(o.message, /^depth: .*more than 5000 entities; at most 5000/);
  });
});
