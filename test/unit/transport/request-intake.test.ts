/**
 * The budget of request bytes still arriving and the idle limit on reads (transport/request-intake.ts),
 * on their own: what counts, what is let go, who is refused and with what; and their configuration.
 */
import { expect, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/config';
import { ServiceError } from '../../../src/rpc/errors';
import { RequestIntake, type Arrival } from '../../../src/transport/request-intake';

const never = () => new Promise<never>(() => undefined);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('bytes count until their request has arrived or ended, once: closing twice gives nothing back twice', () => {
  const intake = new RequestIntake({ maxPendingBytes: 100, accountShare: 100, freeAccountShare: 100, freeTierShare: 100, unclaimedShare: 100, idleTimeoutMs: 1000 });
  const a = intake.open('request body');
  const b = intake.open('request body');
  a.add(30);
  b.add(20);
  assert.equal(intake.pendingBytes, 50);
  a.close();
  a.close();
  a.add(10); // after its end: not counted
  assert.equal(intake.pendingBytes, 20);
  b.close();
  assert.equal(intake.pendingBytes, 0);
});

test('the request whose bytes take the total over the budget is refused (503, Retry-After: 1) and its bytes let go; the others go on', async () => {
  const intake = new RequestIntake({ maxPendingBytes: 100, accountShare: 100, freeAccountShare: 100, freeTierShare: 100, unclaimedShare: 100, idleTimeoutMs: 1000 });
  const held = intake.open('request body');
  const late = intake.open('request');
  held.add(80);
  const refusals: ServiceError[] = [];
  late.whenFailed((e) => refusals.push(e));
  const waiting = late.wait(never());
  late.add(30);
  await expect(waiting).rejects.toBe(late.failed);
  const error = late.failed!;
  assert.equal(error.code, 'unavailable');
  assert.equal(error.message, 'the server is receiving as many request bytes as it holds at once (100 bytes): retry in a moment');
  assert.deepEqual(error.details, { limit: 100 });
  assert.deepEqual(error.headers, { 'retry-after': '1' });
  assert.deepEqual(refusals, [error]);
  assert.throws(() => late.throwIfFailed(), (e) => e === error);
  await expect(late.wait(Promise.resolve(1))).rejects.toBe(error);
  assert.equal(intake.pendingBytes, 80);
  held.add(20);
  assert.equal(held.failed, undefined, 'exactly at the budget is within it');
});

test('a read that waits the idle limit without a byte fails (504 naming the request); each byte gives it the limit again', async () => {
  const intake = new RequestIntake({ maxPendingBytes: 100, accountShare: 100, freeAccountShare: 100, freeTierShare: 100, unclaimedShare: 100, idleTimeoutMs: 1000 });
  const a = intake.open('request body');
  a.add(10);
  const waiting = a.wait(never());
  const started = Date.now();
  // a byte every 100 ms for 1.5 s: longer than the limit in all, never that long without one
  while (Date.now() - started < 1500) {
    await sleep(100);
    a.add(1);
  }
  assert.equal(a.failed, undefined);
  await expect(waiting).rejects.toBeInstanceOf(ServiceError);
  assert.ok(Date.now() - started >= 2000, 'not before the limit after the last byte');
  assert.equal(a.failed!.code, 'deadline_exceeded');
  assert.equal(a.failed!.message, 'request body: nothing arrived for 1 s; a request must keep arriving until it ends');
  assert.deepEqual(a.failed!.details, { idle_timeout_ms: 1000 });
  assert.equal(intake.pendingBytes, 0);
});

test('no idle limit outside a read, nor once the request has arrived', async () => {
  const intake = new RequestIntake({ maxPendingBytes: 100, accountShare: 100, freeAccountShare: 100, freeTierShare: 100, unclaimedShare: 100, idleTimeoutMs: 50 });
  const a = intake.open('request');
  a.add(10);
  assert.equal(await a.wait(Promise.resolve('first')), 'first');
  await sleep(200); // the endpoint works on what it read: the client is not keeping it waiting
  assert.equal(a.failed, undefined);
  a.close();
  void a.wait(never());
  await sleep(200);
  assert.equal(a.failed, undefined);
});

test("bytes count against the share of whoever sends them: unclaimed ones, one account's (429), the free tier's; each refusal says whose", () => {
  const intake = new RequestIntake({ maxPendingBytes: 100, accountShare: 50, freeAccountShare: 30, freeTierShare: 50, unclaimedShare: 25, idleTimeoutMs: 1000 });
  // (read through a function: an assertion that it is undefined would narrow the property for good)
  const why = (x: Arrival) => x.failed;
  const free = (n: number) => ({ accountId: `acct_f${n}`, tier: 'free' as const });
  // not claimed (before authentication, or a public method): a quarter here
  const u = intake.open('request body');
  u.add(26);
  assert.equal(why(u)?.code, 'unavailable');
  assert.equal(why(u)?.message, 'the server is receiving as many request bytes from callers not yet authenticated as it holds at once (25 bytes): retry in a moment');
  // bytes before the claim move to the account with it, once
  const a = intake.open('request body');
  a.add(20);
  a.claim(free(1));
  assert.equal(intake.pendingBytesOf('acct_f1'), 20);
  a.claim(free(2));
  assert.equal(intake.pendingBytesOf('acct_f2'), 0, 'claimed once');
  const more = intake.open('request body');
  more.add(25);
  assert.equal(why(more), undefined, 'the claimed bytes no longer count as unclaimed');
  more.close();
  // a free account's own share
  const b = intake.open('request body');
  b.claim(free(1));
  b.add(10);
  assert.equal(why(b), undefined, 'at the share is within it');
  b.add(1);
  assert.equal(why(b)?.code, 'quota_exceeded');
  assert.equal(why(b)?.message, "your account's requests still arriving hold as many bytes as one account's may at once (30 bytes): retry when one of them has arrived");
  assert.deepEqual(why(b)?.headers, { 'retry-after': '1' });
  assert.equal(intake.pendingBytesOf('acct_f1'), 20, "the refused request's bytes let go, the other's still held");
  // the free tier's: another free account within its own share, a third over the tier's
  const c = intake.open('request body');
  c.claim(free(2));
  c.add(30);
  assert.equal(why(c), undefined);
  const d = intake.open('request body');
  d.claim(free(3));
  d.add(1);
  assert.equal(why(d)?.message, 'the server is receiving as many request bytes from free-tier accounts as it holds at once (50 bytes): retry in a moment');
  // a paying account still finds room, up to its own share and the total
  const e = intake.open('request body');
  e.claim({ accountId: 'acct_p', tier: 'pro' });
  e.add(50);
  assert.equal(why(e), undefined);
  assert.equal(intake.pendingBytes, 100);
  const f = intake.open('request body');
  f.claim({ accountId: 'acct_q', tier: 'enterprise' });
  f.add(1);
  assert.equal(why(f)?.message, 'the server is receiving as many request bytes as it holds at once (100 bytes): retry in a moment');
  for (const x of [u, a, b, c, d, e, f]) x.close();
  assert.equal(intake.pendingBytes, 0);
  for (const id of ['acct_f1', 'acct_f2', 'acct_p']) assert.equal(intake.pendingBytesOf(id), 0);
  // and every tally is back to nothing: the free tier and the unclaimed may hold their shares again
  const g = intake.open('request body');
  g.claim(free(4));
  g.add(30);
  const h = intake.open('request body');
  h.claim(free(5));
  h.add(20);
  const i = intake.open('request body');
  i.add(25);
  assert.deepEqual([why(g), why(h), why(i)], [undefined, undefined, undefined]);
});

test('configuration: the budget is 256 MiB by default, or one stream if that is more, and never less than one stream; its shares', () => {
  const MiB = 1024 * 1024;
  const base = { DATABASE_URL: 'sqlite:/tmp/unused.db' };
  const config = loadConfig(base);
  assert.deepEqual([config.maxPendingRequestBytes, config.requestIdleTimeoutMs, config.maxConnections], [256 * MiB, 30_000, 4096]);
  assert.deepEqual(config.pendingRequestShares, { account: 128 * MiB, freeAccount: 68 * MiB, freeTier: 128 * MiB, unclaimed: 68 * MiB }, 'a quarter, but room for a stream at its limit and its framing');
  const large = loadConfig({ ...base, MAX_PENDING_REQUEST_BYTES: String(1024 * MiB) });
  assert.deepEqual(large.pendingRequestShares, { account: 512 * MiB, freeAccount: 256 * MiB, freeTier: 512 * MiB, unclaimed: 256 * MiB });
  const smallest = loadConfig({ ...base, MAX_PENDING_REQUEST_BYTES: String(64 * MiB) });
  assert.deepEqual(smallest.pendingRequestShares, { account: 64 * MiB, freeAccount: 64 * MiB, freeTier: 64 * MiB, unclaimed: 64 * MiB }, 'never more than the budget');
  assert.equal(loadConfig({ ...base, MAX_BODY_BYTES: String(8 * MiB) }).maxPendingRequestBytes, 512 * MiB, 'a 512 MiB stream fits');
  assert.equal(loadConfig({ ...base, MAX_BODY_BYTES: '16384', MAX_PENDING_REQUEST_BYTES: String(MiB) }).maxPendingRequestBytes, MiB);
  assert.throws(() => loadConfig({ ...base, MAX_PENDING_REQUEST_BYTES: String(MiB) }), /MAX_PENDING_REQUEST_BYTES must be an integer ≥ 67108864, got 1048576/);
  assert.throws(() => loadConfig({ ...base, REQUEST_IDLE_TIMEOUT_MS: '0' }), /REQUEST_IDLE_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ ...base, MAX_CONNECTIONS: 'many' }), /MAX_CONNECTIONS/);
});
