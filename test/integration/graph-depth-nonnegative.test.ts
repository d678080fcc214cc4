/**
 * Depth queries over non-negative data never give probability below 0 (found by QA: on a slice
 * of the Australian tourism hierarchy a reconciled leaf's 5% quantile was −196 at 1,000 steps,
 * a region's −1.3 at one step, the total's −32 at depth 1): every node's quantiles, bins and
 * mean stay at or above 0, as its depth-0 forecast does, while the means stay coherent and the
 * answer reproduces. Over both protocols (the second one's answers come from the answer cache).
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ok, rest, type Outcome } from '../helpers/dual';
import { sharedDataFile } from '../helpers/files';
import { oracleQuery, type OracleQueryBody } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

/** Leaf entity → its parents (region, state × purpose). */
const leafParents = new Map<string, string[]>();
const slug = (s: string) => s.replace(/[^A-Za-z0-9._~-]+/g, '-');
/** Quarters of data loaded (of 80): as QA trained. */
const QUARTERS = 72;

/** tour:total → state:<s> → region:<r> and sp:<s>-<purpose> → leaf:<r>-<purpose> (two parents each), ACT and Tasmania. */
beforeAll(async () => {
  t = await startTestService();
  ({ key } = await t.account('enterprise'));
  const data = JSON.parse(readFileSync(sharedDataFile('hierarchy/australian-tourism.json'), 'utf8')) as {
    start: [number, number];
    series: { path: string[]; attributes: Record<string, string>; values: number[] }[];
  };
  const series = data.series.filter((s) => s.path[1] === 'ACT' || s.path[1] === 'Tasmania');
  const create = (entity: string, parents: string[]) =>
    ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P3M', axes: [{ name: 'trips', unit: 'thousands' }], parents } }));
  await create('tour:total', []);
  const made = new Set<string>();
  const [year, quarter] = data.start;
  for (const s of series) {
    const [, state, region] = s.path;
    const purpose = s.attributes.Purpose;
    const parents = [`region:${slug(region)}`, `sp:${slug(state)}-${slug(purpose)}`];
    for (const [e, parent] of [[`state:${slug(state)}`, 'tour:total'], [parents[0], `state:${slug(state)}`], [parents[1], `state:${slug(state)}`]]) {
      if (!made.has(e)) await create(e, [parent]);
      made.add(e);
    }
    const leaf = `leaf:${slug(region)}-${slug(purpose)}`;
    leafParents.set(leaf, parents);
    await create(leaf, parents);
    const observations = s.values.slice(0, QUARTERS).map((value, i) => ({ axis: 'trips', time: new Date(Date.UTC(year, 3 * (quarter - 1) + 3 * i, 1)).toISOString(), value }));
    await ok(rest(t, key, { method: 'POST', path: `/v1/entities/${leaf}/observations`, body: { observations } }));
  }
  assert.equal(leafParents.size, 24);
});
afterAll(() => t.close());

const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)), `${what}: ${a} vs ${b}`);

/** Every node's forecast, protocol-neutral: entity → { mean, forecast }. */
function nodes(o: Outcome): Map<string, { mean: number; f: any }> {
  const means = (f: any) => (o.protocol === 'rest' ? f.axes_resolved : f.axesResolved).trips as number;
  const out = new Map([[o.data.entity as string, { mean: means(o.data.forecast), f: o.data.forecast }]]);
  for (const d of o.data.descendants) out.set(d.entity, { mean: means(d.forecast), f: d.forecast });
  return out;
}

const QUERIES: OracleQueryBody[] = [
  { entity: 'tour:total', depth: 3, horizon: 1000 },
  { entity: 'tour:total', depth: 3, horizon: 1, reconciliation: 'ols' },
  { entity: 'tour:total', depth: 1, horizon: 100 },
];

test('no node of a reconciled answer over non-negative data has probability below 0; the means stay coherent; the answer reproduces', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    for (const q of QUERIES) {
      const o = await ok(oracleQuery(t, key, protocol, { ...q, axes: ['trips'], quantiles: [0.01, 0.05, 0.5, 0.95], thresholds: [-1, 0, 1] }));
      const what = `${protocol} ${JSON.stringify(q)}`;
      const all = nodes(o);
      for (const [e, { mean, f }] of all) {
        assert.ok(mean >= 0, `${what} ${e}: mean ${mean}`);
        for (const [level, v] of Object.entries(f.quantiles) as [string, number][]) assert.ok(v >= 0, `${what} ${e}: q${level} = ${v}`);
        // bins: nothing below 0 (the atom at 0 is in the bin that starts there)
        const below = f.thresholds.reduce((p: number, x: number, i: number) => (x <= 0 ? p + f.distribution[i] : p), 0);
        assert.equal(below, 0, `${what} ${e}: P(Y < 0) = ${below} (${JSON.stringify(f.thresholds)} ${JSON.stringify(f.distribution)})`);
        assert.ok(Math.abs(f.distribution.reduce((a: number, b: number) => a + b, 0) - 1) < 1e-9);
      }
      if (q.depth === 3) {
        assert.equal(all.size, 41);
        const leaves = [...leafParents.keys()];
        near(all.get('tour:total')!.mean, leaves.reduce((s, l) => s + all.get(l)!.mean, 0), `${what}: total = leaves`);
        for (const parent of new Set([...leafParents.values()].flat())) {
          const under = leaves.filter((l) => leafParents.get(l)!.includes(parent));
          near(all.get(parent)!.mean, under.reduce((s, l) => s + all.get(l)!.mean, 0), `${what}: ${parent} = its leaves`);
        }
      } else {
        near(all.get('tour:total')!.mean, all.get('state:ACT')!.mean + all.get('state:Tasmania')!.mean, `${what}: total = states`);
      }
      if (protocol === 'rest' && q.horizon === 1000) {
        const again = await ok(rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: o.data.query_id } }));
        assert.equal(again.data.reproduced, true, JSON.stringify(again.data.differences?.slice(0, 3)));
      }
    }
  }
});
