/** Shared runs: identical work in flight runs once; each caller leaves alone; the work stops when all have left or it failed. */
import { expect, test } from '@jest/globals';
import { SharedRuns } from '../../../src/shared-runs';

/** Work that waits until released (or its signal aborts), recording the signal it was given. */
function gated<T>(value: T) {
  const seen: AbortSignal[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const work = async (signal: AbortSignal) => {
    seen.push(signal);
    await Promise.race([gate, new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))]);
    return value;
  };
  return { work, seen, release: () => release() };
}

test('callers of one key share one run, and a later caller after it settled starts a new one', async () => {
  const runs = new SharedRuns<string>();
  const w = gated('answer');
  const a = runs.run('k', new AbortController().signal, w.work);
  const b = runs.run('k', new AbortController().signal, w.work);
  const c = runs.run('k', undefined, w.work);
  await Promise.resolve();
  expect(runs.size).toBe(1);
  w.release();
  await expect(Promise.all([a, b, c])).resolves.toEqual(['answer', 'answer', 'answer']);
  expect(w.seen).toHaveLength(1);
  expect(runs.stats).toEqual({ started: 1, joined: 2, abandoned: 0 });
  expect(runs.size).toBe(0);
  const again = gated('again');
  const d = runs.run('k', undefined, again.work);
  again.release();
  await expect(d).resolves.toBe('again');
  expect(runs.stats.started).toBe(2);
});

test('a caller that leaves fails at once with its own reason; the others keep the run going', async () => {
  const runs = new SharedRuns<string>();
  const w = gated('answer');
  const leaving = new AbortController();
  const staying = new AbortController();
  const a = runs.run('k', leaving.signal, w.work);
  const b = runs.run('k', staying.signal, w.work);
  const reason = new Error('caller a went away');
  leaving.abort(reason);
  await expect(a).rejects.toBe(reason);
  await Promise.resolve();
  expect(w.seen[0].aborted).toBe(false);
  w.release();
  await expect(b).resolves.toBe('answer');
  expect(runs.stats.abandoned).toBe(0);
});

test('when every caller has left the work is aborted and the key is free at once', async () => {
  const runs = new SharedRuns<string>();
  const w = gated('stale');
  const one = new AbortController();
  const two = new AbortController();
  const a = runs.run('k', one.signal, w.work);
  const b = runs.run('k', two.signal, w.work);
  await Promise.resolve();
  one.abort(new Error('one'));
  two.abort(new Error('two'));
  await expect(a).rejects.toThrow('one');
  await expect(b).rejects.toThrow('two');
  expect(w.seen[0].aborted).toBe(true);
  expect(runs.size).toBe(0);
  expect(runs.stats.abandoned).toBe(1);
  // a caller arriving now gets a run of its own, not the abandoned one's failure
  const fresh = gated('fresh');
  const c = runs.run('k', new AbortController().signal, fresh.work);
  fresh.release();
  await expect(c).resolves.toBe('fresh');
});

test('a caller without a signal pins the run: the others leaving does not stop it', async () => {
  const runs = new SharedRuns<string>();
  const w = gated('kept');
  const gone = new AbortController();
  const a = runs.run('k', gone.signal, w.work);
  const pinned = runs.run('k', undefined, w.work);
  gone.abort(new Error('gone'));
  await expect(a).rejects.toThrow('gone');
  expect(w.seen[0].aborted).toBe(false);
  w.release();
  await expect(pinned).resolves.toBe('kept');
});

test("a run that fails aborts its own signal (what it queued for other parts is dropped) and every caller gets the failure", async () => {
  const runs = new SharedRuns<string>();
  let signal!: AbortSignal;
  const failure = new Error('one node failed');
  const work = async (s: AbortSignal) => {
    signal = s;
    throw failure;
  };
  const a = runs.run('k', new AbortController().signal, work);
  const b = runs.run('k', undefined, work);
  await expect(a).rejects.toBe(failure);
  await expect(b).rejects.toBe(failure);
  expect(signal.aborted).toBe(true);
  expect(signal.reason).toBe(failure);
  expect(runs.size).toBe(0);
});

test('work without a key is never shared, and a caller already gone starts nothing', async () => {
  const runs = new SharedRuns<number>();
  let calls = 0;
  const work = async () => ++calls;
  await expect(Promise.all([runs.run(undefined, undefined, work), runs.run(undefined, undefined, work)])).resolves.toEqual([1, 2]);
  const gone = new AbortController();
  const reason = new Error('already gone');
  gone.abort(reason);
  await expect(runs.run('k', gone.signal, work)).rejects.toBe(reason);
  expect(calls).toBe(2);
  expect(runs.size).toBe(0);
});
