/**
 * The forecast pool's queue: accounts take turns for a worker, and a fit whose every caller went
 * away is dropped before it runs (one that runs finishes and is cached). One real worker thread,
 * so the order in which it answers is the order it was given jobs.
 */
import { afterAll, expect, test } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ForecastJob } from '../../../src/oracle/forecast-job';
import { ForecastPool } from '../../../src/oracle/forecast-pool';

const pool = new ForecastPool(1);
afterAll(() => pool.close());

const series = Float64Array.from({ length: 400 }, (_, i) => 100 + 10 * Math.sin((2 * Math.PI * i) / 7) + ((i * 37) % 11));
let n = 0;
/** A job no other test shares (its own fit key). */
function job(tag: string, extra: Partial<ForecastJob> = {}): ForecastJob {
  return { fitKey: `turns-${tag}-${n++}`, series, info: { period: 7 }, horizon: 7, seed: 1, model: 'auto', levels: [0.5], ...extra };
}

test("another account's fit waits behind three of the busy account's, not all of them", async () => {
  await pool.run(job('warm'));
  const order: string[] = [];
  const run = (tag: string, owner: string) => pool.run(job(tag), { owner }).then(() => void order.push(tag));
  const busy = Array.from({ length: 8 }, (_, i) => run(`a${i + 1}`, 'acct_a'));
  const other = run('b1', 'acct_b');
  await Promise.all([...busy, other]);
  // when b1 came, a1 was fitting, a2 handed to the worker behind it, and a (with a3 next) ahead of b in line
  expect(order).toEqual(['a1', 'a2', 'a3', 'b1', 'a4', 'a5', 'a6', 'a7', 'a8']);
});

test("another account's job identical to one of the busy account's queued jobs waits its own turn, not the busy account's", async () => {
  await pool.run(job('warm-x'));
  const order: string[] = [];
  const jobs = Array.from({ length: 8 }, (_, i) => job(`x${i + 1}`));
  const busy = jobs.map((j, i) => pool.run(j, { owner: 'acct_a' }).then((r) => void order.push(`a${i + 1}${r.fitted ? '' : ' (cached)'}`)));
  // the same fit as the busy account's last: before, it joined that job and came last
  const other = pool.run(jobs[7], { owner: 'acct_b' }).then((r) => void order.push(`b${r.fitted ? '' : ' (cached)'}`));
  await Promise.all([...busy, other]);
  // and each account fits its own: b's fit does not serve a8 (caches are per account)
  expect(order).toEqual(['a1', 'a2', 'a3', 'b', 'a4', 'a5', 'a6', 'a7', 'a8']);
});

test("no cache is shared between accounts: another account's identical job is fitted, its own repeat is not (found by QA: timing told one account another had just forecast a series it knew)", async () => {
  const shared = job('private');
  expect((await pool.run(shared, { owner: 'acct_a' })).fitted).toBe(true);
  expect((await pool.run(shared, { owner: 'acct_a' })).fitted).toBe(false);
  expect((await pool.run(shared, { owner: 'acct_b' })).fitted).toBe(true);
  expect((await pool.run(shared, { owner: 'acct_b' })).fitted).toBe(false);
  // nor the worker's fit cache under other thresholds (the summary differs, the fit would not)
  expect((await pool.run({ ...shared, thresholds: [90, 110] }, { owner: 'acct_c' })).fitted).toBe(true);
  expect((await pool.run({ ...shared, thresholds: [90, 110] }, { owner: 'acct_a' })).fitted).toBe(false);
});

test('fits whose callers went away are dropped before they run; those handed to the worker finish and are cached', async () => {
  const gone = new AbortController();
  const reason = new Error('deadline passed');
  const jobs = Array.from({ length: 10 }, (_, i) => job(`gone${i}`));
  const calls = jobs.map((j) => pool.run(j, { owner: 'acct_a', signal: gone.signal }));
  const outcomes = Promise.allSettled(calls);
  const { dropped, fits } = pool.stats;
  gone.abort(reason);
  for (const o of await outcomes) expect(o).toEqual({ status: 'rejected', reason });
  expect(pool.stats.dropped - dropped).toBe(8);
  expect(getEventListeners(gone.signal, 'abort')).toHaveLength(0);
  // the two the worker held still fit, and answer the next asker from the cache
  const again = await pool.run(jobs[1], { owner: 'acct_a' });
  expect(again.fitted).toBe(false);
  expect(pool.stats.fits - fits).toBe(2);
  // a dropped one is fitted when asked again
  expect((await pool.run(jobs[9], { owner: 'acct_a' })).fitted).toBe(true);
  // a signal aborted before the call: refused at once, nothing queued
  await expect(pool.run(job('late'), { signal: gone.signal })).rejects.toBe(reason);
  expect(pool.stats.dropped - dropped).toBe(8);
});

test('a shared fit runs while one caller still waits for it', async () => {
  const blockers = [pool.run(job('block1')), pool.run(job('block2'))];
  const shared = job('shared');
  const first = new AbortController();
  const second = new AbortController();
  const a = pool.run(shared, { owner: 'acct_a', signal: first.signal });
  const b = pool.run(shared, { owner: 'acct_a', signal: second.signal });
  const c = job('shared-unsignalled');
  const cFirst = new AbortController();
  const c1 = pool.run(c, { owner: 'acct_b', signal: cFirst.signal });
  const c2 = pool.run(c, { owner: 'acct_b' });
  const settled = Promise.allSettled([a, b, c1, c2]);
  const { dropped } = pool.stats;
  first.abort(new Error('first left'));
  cFirst.abort(new Error('c1 left'));
  const [ra, rb, rc1, rc2] = await settled;
  expect(ra).toEqual({ status: 'rejected', reason: new Error('first left') });
  expect(rb.status).toBe('fulfilled');
  expect(rc1).toEqual({ status: 'rejected', reason: new Error('c1 left') });
  expect(rc2.status).toBe('fulfilled');
  expect(pool.stats.dropped - dropped).toBe(0);
  // every caller's listener is gone once its fit settled
  for (const s of [first.signal, second.signal, cFirst.signal]) expect(getEventListeners(s, 'abort')).toHaveLength(0);
  await Promise.all(blockers);
  // both of a shared fit's callers leave: it is dropped
  const both = job('both-leave');
  await Promise.all([pool.run(job('block3')), pool.run(job('block4'))].map(async (p, i) => {
    if (i > 0) return p;
    const x = new AbortController();
    const y = new AbortController();
    const px = pool.run(both, { signal: x.signal });
    const py = pool.run(both, { signal: y.signal });
    const s = Promise.allSettled([px, py]);
    x.abort(new Error('x'));
    y.abort(new Error('y'));
    expect((await s).map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(pool.stats.dropped - dropped).toBe(1);
    return p;
  }));
});

test('a caller joining a fit in the turn it was dropped gets a fit of its own (found by review: it got the drop)', async () => {
  const blockers = [pool.run(job('join-block1')), pool.run(job('join-block2'))];
  const same = job('join-after-drop');
  const gone = new AbortController();
  const first = pool.run(same, { signal: gone.signal });
  const settled = Promise.allSettled([first]);
  gone.abort(new Error('left'));
  const again = pool.run(same);
  expect((await settled)[0].status).toBe('rejected');
  expect((await again).summary).toBeDefined();
  await Promise.all(blockers);
});

test('a job that cannot be sent to its worker fails alone; the next ones run (found by review: it held its place)', async () => {
  const unsendable = { ...job('unsendable'), info: { period: 7, periods: [7], extra: () => 1 } } as unknown as ForecastJob;
  await expect(pool.run(unsendable, { owner: 'acct_a' })).rejects.toThrow(/could not be cloned/);
  const after = await Promise.all([1, 2, 3].map((i) => pool.run(job(`after-unsendable${i}`), { owner: 'acct_a' })));
  expect(after).toHaveLength(3);
});

test('a worker that cannot start fails the jobs waiting, and is not started again until more work comes (found by review: it restarted without end)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pool-'));
  const broken = join(dir, 'broken.js');
  writeFileSync(broken, "throw new Error('cannot load');\n");
  const failing = new ForecastPool(1, broken);
  try {
    const calls = Promise.allSettled([failing.run(job('b1')), failing.run(job('b2')), failing.run(job('b3'))]);
    for (const o of await calls) expect(o.status).toBe('rejected');
    expect(failing.stats.starts).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(failing.stats.starts).toBe(1);
    await expect(failing.run(job('b4'))).rejects.toThrow('cannot load');
    expect(failing.stats.starts).toBe(2);
  } finally {
    await failing.close();
  }
});
