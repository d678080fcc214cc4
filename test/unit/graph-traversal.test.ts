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

/** Every path, page by page, each page resuming where the previous one said; `pages` counts them. */
function all(adj: Adjacency, from: string, depth: number, size: number, to?: string, maxSteps?: number, pages = { n: 0 }): string[] {
  const out: string[] = [];
  let after: string[] | undefined;
  for (;;) {
    const { paths, resume } = pagePaths(adj, from, { depth, to }, after, size, maxSteps);
    pages.n++;
    assert.ok(paths.length <= size);
    out.push(...names(paths));
    if (!resume) return out;
    after = resume;
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
  assert.deepEqual(first.resume, ['r', 'b']);
  // b loses its edge to r and c gains a child before the next page
  const after = down(['r>a', 'r>c', 'a>x', 'c>w', 'c>x']);
  const next = pagePaths(after, 'r', { depth: 2 }, ['r', 'b'], 10);
  assert.deepEqual(names(next.paths), ['r/c', 'r/c/w', 'r/c/x']);
  assert.equal(next.resume, undefined);
});

/** A random graph over `nodes` entities, edges both ways (followed `both`: cycles everywhere). */
function randomGraph(seed: number, nodes: number, edges: number): Adjacency {
  let state = seed;
  const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 8) % nodes;
  const adj = new Map<string, PathStep[]>();
  const add = (a: string, b: string, step: 'down' | 'up') => {
    const list = adj.get(a) ?? adj.set(a, []).get(a)!;
    if (!list.some((s) => s.entity === b)) list.push({ entity: b, step });
  };
  for (let i = 0; i < edges; i++) {
    const a = `n${next()}`;
    const b = `n${next()}`;
    if (a === b) continue;
    add(a, b, 'down');
    add(b, a, 'up');
  }
  for (const list of adj.values()) list.sort((x, y) => (x.entity < y.entity ? -1 : x.entity > y.entity ? 1 : 0));
  return adj;
}

/** Every simple path from `from` with 1..`depth` steps (ending at `to` if given), depth-first: the plain definition. */
function reference(adj: Adjacency, from: string, depth: number, to?: string): string[] {
  const out: string[] = [];
  const walk = (path: string[]) => {
    for (const n of adj.get(path[path.length - 1]) ?? []) {
      if (path.includes(n.entity)) continue;
      const next = [...path, n.entity];
      if (to === undefined || n.entity === to) out.push(next.join('/'));
      if (next.length <= depth && n.entity !== to) walk(next);
    }
  };
  walk([from]);
  return out;
}

test('a page that runs out of its walk budget resumes exactly there: the pages together are every simple path, in order, for any budget and page size', () => {
  for (let seed = 1; seed <= 12; seed++) {
    const adj = randomGraph(seed, 9, 16);
    for (const to of [undefined, 'n3', 'n8']) {
      const whole = all(adj, 'n0', 4, 200, to, Infinity);
      assert.deepEqual(whole, reference(adj, 'n0', 4, to), `seed ${seed}, to ${to}`);
      if (to === undefined) assert.ok(whole.length > 0);
      for (const [size, maxSteps] of [[1, 1], [1, 2], [3, 5], [2, 13], [200, 7]]) {
        assert.deepEqual(all(adj, 'n0', 4, size, to, maxSteps), whole, `seed ${seed}, to ${to}, size ${size}, budget ${maxSteps}`);
      }
    }
  }
});

test('with `to`, a dense neighbourhood that cannot reach it again is not walked (found by QA: seconds of blocked process)', () => {
  // from → z → to, and z → a0..a19, every a → every b (b's have no way back to `to`)
  const edges = ['from>z', 'z>to'];
  for (let i = 0; i < 20; i++) {
    edges.push(`z>a${String(i).padStart(2, '0')}`);
    for (let j = 0; j < 20; j++) edges.push(`a${String(i).padStart(2, '0')}>b${String(j).padStart(2, '0')}`);
  }
  const adj = new Map<string, PathStep[]>();
  for (const e of edges) {
    const [p, c] = e.split('>');
    (adj.get(p) ?? adj.set(p, []).get(p)!).push({ entity: c, step: 'down' });
    (adj.get(c) ?? adj.set(c, []).get(c)!).push({ entity: p, step: 'up' });
  }
  for (const list of adj.values()) list.sort((a, b) => (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0));
  // the cluster past z cannot reach `to` without z: not entered, one page, no cursor
  const page = pagePaths(adj, 'from', { depth: 8, to: 'to' }, undefined, 50);
  assert.deepEqual(names(page.paths), ['from/z/to']);
  assert.equal(page.resume, undefined);
  // with a budget too small for even that, the pages still end, with the same answer
  const pages = { n: 0 };
  assert.deepEqual(all(adj, 'from', 8, 50, 'to', 3, pages), ['from/z/to']);
  assert.ok(pages.n > 1);
});
