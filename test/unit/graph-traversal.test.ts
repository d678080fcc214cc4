/** Path enumeration (src/graph/traversal.ts) on in-memory graphs: order, limits, keyset resume. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { pagePaths, type Adjacency, type PathStep } from '../../src/graph/traversal';

/** Adjacency of a directed graph given as `a>b` edges, followed down. */
function down(edges: string[]): Adjacency {
  const adj = new Map<string, PathStep[]>();
  for (const e of edges) {
    const [p, c] = e.split('>');
    (adj.get(p) ?? adj.set(p, []).get(p)!).push({ entity: c, step: 'down' });
  }
  for (const list of adj.values()) list.sort((a, b) => (a.entity < b.entity ? -1 : 1));
  return adj;
}

const names = (paths: PathStep[][]) => paths.map((p) => p.map((s) => s.entity).join('/'));

/** Every path, page by page, resuming from the last path of each page. */
function all(adj: Adjacency, from: string, depth: number, size: number, to?: string): string[] {
  const out: string[] = [];
  let after: string[] | undefined;
  for (;;) {
    const { paths, more } = pagePaths(adj, from, { depth, to }, after, size);
    out.push(...names(paths));
    if (!more) return out;
    after = paths[paths.length - 1].map((s) => s.entity);
  }
}

test('depth-first, prefix before extensions, any page size gives the same walk', () => {
  const adj = down(['r>a', 'r>b', 'a>x', 'a>y', 'b>y', 'y>p']);
  const expected = ['r/a', 'r/a/x', 'r/a/y', 'r/a/y/p', 'r/b', 'r/b/y', 'r/b/y/p'];
  for (const size of [1, 2, 5, 200]) assert.deepEqual(all(adj, 'r', 3, size), expected);
  assert.deepEqual(all(adj, 'r', 1, 1), ['r/a', 'r/b']);
  assert.deepEqual(all(adj, 'r', 3, 1, 'p'), ['r/a/y/p', 'r/b/y/p']);
  assert.deepEqual(all(adj, 'r', 2, 1, 'p'), []);
});

test('a cycle never loops: simple paths only, however deep', () => {
  const adj = down(['a>b', 'b>c', 'c>a', 'c>d']);
  assert.deepEqual(all(adj, 'a', 8, 2), ['a/b', 'a/b/c', 'a/b/c/d']);
});

test('resume is keyset: a path that vanished between pages is passed over, the walk continues after it', () => {
  const before = down(['r>a', 'r>b', 'r>c', 'a>x', 'b>x', 'c>x']);
  const first = pagePaths(before, 'r', { depth: 2 }, undefined, 3);
  assert.deepEqual(names(first.paths), ['r/a', 'r/a/x', 'r/b']);
  // b loses its edge to r and c gains a child before the next page
  const after = down(['r>a', 'r>c', 'a>x', 'c>w', 'c>x']);
  const next = pagePaths(after, 'r', { depth: 2 }, ['r', 'b'], 10);
  assert.deepEqual(names(next.paths), ['r/c', 'r/c/w', 'r/c/x']);
  assert.equal(next.more, false);
});
