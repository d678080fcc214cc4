/**
 * The one-thread RPC (reconciliation, drift scoring): requests run one at a time with accounts in
 * turn; a request whose caller went away is dropped if it waits, and its thread stopped if it runs.
 * The thread here is a real worker thread speaking the same protocol, whose work is to spin for
 * `ms` milliseconds and answer how many requests it has seen.
 */
import { afterEach, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ThreadRpc } from '../../../src/thread-rpc';

interface Spin {
  readonly tag: string;
  readonly ms: number;
  readonly fail?: boolean;
}
interface Seen {
  readonly tag: string;
  /** Requests this thread received, this one included. */
  readonly seen: number;
}

const script = join(mkdtempSync(join(tmpdir(), 'thread-rpc-')), 'spin.js');
writeFileSync(
  script,
  `const { parentPort } = require('node:worker_threads');
let seen = 0;
parentPort.on('message', ({ id, input }) => {
  seen++;
  const end = Date.now() + input.ms;
  while (Date.now() < end);
  parentPort.postMessage(input.fail ? { id, error: 'Error: asked to fail' } : { id, output: { tag: input.tag, seen } });
});
`,
);

let rpc: ThreadRpc<Spin, Seen>;
afterEach(() => rpc?.close());

test('requests answer in turn by owner, one thread for all', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const order: string[] = [];
  const calls = [
    ...[1, 2, 3, 4].map((n) => rpc.call({ tag: `a${n}`, ms: 30 }, { owner: 'a' })),
    rpc.call({ tag: 'b1', ms: 30 }, { owner: 'b' }),
    rpc.call({ tag: 'c1', ms: 30 }, { owner: 'c' }),
  ].map((p) => p.then((r) => (order.push(r.tag), r)));
  const results = await Promise.all(calls);
  // a1 was running when b and c came: each waits for one request of a's, not all of them
  expect(order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'a4']);
  expect(results.map((r) => r.seen).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
  await expect(rpc.call({ tag: 'x', ms: 0, fail: true })).rejects.toThrow('spinning failed: Error: asked to fail');
  expect((await rpc.call({ tag: 'after', ms: 0 })).seen).toBe(8);
  expect(rpc.stopped).toBe(0);
});

test('a waiting request whose caller went away never reaches the thread', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const first = rpc.call({ tag: 'first', ms: 200 });
  const gone = new AbortController();
  const dropped = rpc.call({ tag: 'dropped', ms: 0 }, { signal: gone.signal });
  const reason = new Error('the deadline passed');
  setTimeout(() => gone.abort(reason), 20);
  await expect(dropped).rejects.toBe(reason);
  expect((await first).seen).toBe(1);
  // the thread saw first and now this one: the dropped request never went there
  expect((await rpc.call({ tag: 'next', ms: 0 })).seen).toBe(2);
  expect(rpc.stopped).toBe(0);
  // a signal aborted before the call: refused at once
  await expect(rpc.call({ tag: 'late', ms: 0 }, { signal: gone.signal })).rejects.toBe(reason);
});

test('a running request whose caller went away stops its thread; the next request gets a new one', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const gone = new AbortController();
  const started = Date.now();
  const long = rpc.call({ tag: 'long', ms: 30_000 }, { signal: gone.signal, owner: 'a' });
  const queued = rpc.call({ tag: 'queued', ms: 0 }, { owner: 'b' });
  setTimeout(() => gone.abort(new Error('client went away')), 100);
  await expect(long).rejects.toThrow('client went away');
  // answered by a new thread (it has seen one request), long before the 30 s spin would end
  expect(await queued).toEqual({ tag: 'queued', seen: 1 });
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(rpc.stopped).toBe(1);
});

test('a thread that dies fails the request it ran, and the queue goes on in a new one', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const exits = join(mkdtempSync(join(tmpdir(), 'thread-rpc-')), 'exit.js');
  writeFileSync(exits, `require('node:worker_threads').parentPort.on('message', ({ id, input }) => input.ms === 1 ? process.exit(3) : require('node:worker_threads').parentPort.postMessage({ id, output: { tag: input.tag, seen: 0 } }));`);
  const dying = new ThreadRpc<Spin, Seen>(exits, 'exiting');
  try {
    const first = dying.call({ tag: 'dies', ms: 1 });
    const second = dying.call({ tag: 'lives', ms: 0 });
    await expect(first).rejects.toThrow('exiting failed: its thread exited (code 3)');
    expect(await second).toEqual({ tag: 'lives', seen: 0 });
  } finally {
    await dying.close();
  }
});

test('closing fails what runs and what waits', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const running = rpc.call({ tag: 'r', ms: 5_000 });
  const waiting = rpc.call({ tag: 'w', ms: 0 });
  const outcomes = Promise.allSettled([running, waiting]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await rpc.close();
  for (const o of await outcomes) expect(o).toEqual({ status: 'rejected', reason: new Error('spinning failed: the thread was closed') });
});

test('a request that cannot be sent to the thread fails alone; the next one runs (found by review: it held the thread)', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const running = rpc.call({ tag: 'first', ms: 100 });
  const unsendable = rpc.call({ tag: 'bad', ms: 0, extra: () => 1 } as unknown as Spin);
  const next = rpc.call({ tag: 'next', ms: 0 });
  await expect(unsendable).rejects.toThrow(/could not be cloned/);
  expect((await running).tag).toBe('first');
  expect(await next).toEqual({ tag: 'next', seen: 2 });
  // while idle too
  await expect(rpc.call({ tag: 'bad', ms: 0, extra: () => 1 } as unknown as Spin)).rejects.toThrow(/could not be cloned/);
  expect((await rpc.call({ tag: 'last', ms: 0 })).seen).toBe(3);
});

test('requests that go away together (one signal) stop one thread; the queued ones are dropped, not started and stopped (found by review)', async () => {
  rpc = new ThreadRpc<Spin, Seen>(script, 'spinning');
  const gone = new AbortController();
  const calls = [1, 2, 3, 4].map((n) => rpc.call({ tag: `s${n}`, ms: 5_000 }, { owner: 'a', signal: gone.signal }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  gone.abort(new Error('stopping'));
  for (const c of calls) await expect(c).rejects.toThrow('stopping');
  expect(rpc.stopped).toBe(1);
  // the next request runs on a new thread, its first
  expect(await rpc.call({ tag: 'next', ms: 0 })).toEqual({ tag: 'next', seen: 1 });
});
