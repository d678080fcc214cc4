/**
 * A depth query's inputs (the own series it read, which its manifest lists) come in the
 * hierarchy's order, whatever order the reads finish in (graph/hierarchy-series.ts). Found by CI:
 * on PostgreSQL two identical queries listed them in two orders.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import type { AxisRecord, EntityRecord } from '../../../src/entities/entity-store';
import type { Hierarchy } from '../../../src/graph/hierarchy-graph';
import { axisHierarchy } from '../../../src/graph/hierarchy-series';
import type { LoadedSeries, SeriesLoader } from '../../../src/oracle/series-loader';

const axis = { name: 'demand', kind: 'continuous' } as AxisRecord;
const record = (entity: string) => ({ entity, frequency: 'P1D', seasonLength: 0, axes: [axis] }) as unknown as EntityRecord;
const series = (entity: string): LoadedSeries => ({
  axis: 'demand',
  values: Float64Array.from({ length: 30 }, (_, i) => 10 + (i % 7)),
  firstIndex: 0,
  lastIndex: 29,
  nobs: 30,
  firstTime: 0,
  lastTime: 29 * 86_400_000,
  digest: `digest of ${entity}`,
});

test("a depth query's inputs come in the hierarchy's order, whatever order the reads finish in", async () => {
  const leaves = ['sku:a', 'sku:b', 'sku:c', 'sku:d'];
  const hierarchy: Hierarchy = {
    root: 'store:s',
    entities: ['store:s', ...leaves],
    records: new Map(['store:s', ...leaves].map((e) => [e, record(e)])),
    level: new Map([['store:s', 0], ...leaves.map((e) => [e, 1] as [string, number])]),
    children: new Map([['store:s', leaves], ...leaves.map((e) => [e, []] as [string, string[]])]),
    leaves: new Map([['store:s', leaves], ...leaves.map((e) => [e, [e]] as [string, string[]])]),
  };
  // the later an entity in the hierarchy, the sooner its read finishes
  const loader = {
    load: (_account: string, entity: EntityRecord) =>
      new Promise<LoadedSeries>((resolve) => setTimeout(() => resolve(series(entity.entity)), 10 * (5 - hierarchy.entities.indexOf(entity.entity)))),
  } as unknown as SeriesLoader;
  const read = await axisHierarchy(hierarchy, 1, 'demand', loader, 'acct_x', Infinity);
  assert.deepEqual([...read.inputs.keys()], ['store:s', ...leaves]);
});
