/**
 * The budget of request bytes still arriving and the idle limit on reads (transport/request-intake.ts),
 * on their own: what counts, what is let go, who is refused and with what; and their configuration.
 */
import { expect, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/config';
import { ServiceError } from '../../../src/rpc/errors';
import { RequestIntake } from '../../../src/transport/request-intake';

const never = () => new Promise<never>(() => undefined);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('bytes count until their request has arrived or ended, once: closing twice gives nothing back twice', () => {
  const intake = new RequestIntake({ maxPendingBytes: 100, idleTimeoutMs: 1000 });
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
  const intake = new RequestIntake({ maxPendingBytes: 100, idleTimeoutMs: 1000 });
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
  const intake = new RequestIntake({ maxPendingBytes: 100, idleTimeoutMs: 1000 });
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
  const intake = new RequestIntake({ maxPendingBytes: 100, idleTimeoutMs: 50 });
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

test('configuration: the budget is 256 MiB by default, or one stream if that is more, and never less than one stream', () => {
  const MiB = 1024 * 1024;
  const base = { DATABASE_URL: 'sqlite:/tmp/unused.db' };
  const config = loadConfig(base);
  assert.deepEqual([config.maxPendingRequestBytes, config.requestIdleTimeoutMs, config.maxConnections], [256 * MiB, 30_000, 4096]);
  assert.equal(loadConfig({ ...base, MAX_BODY_BYTES: String(8 * MiB) }).maxPendingRequestBytes, 512 * MiB, 'a 512 MiB stream fits');
  assert.equal(loadConfig({ ...base, MAX_BODY_BYTES: '16384', MAX_PENDING_REQUEST_BYTES: String(MiB) }).maxPendingRequestBytes, MiB);
  assert.throws(() => loadConfig({ ...base, MAX_PENDING_REQUEST_BYTES: String(MiB) }), /MAX_PENDING_REQUEST_BYTES must be an integer ≥ 67108864, got 1048576/);
  assert.throws(() => loadConfig({ ...base, REQUEST_IDLE_TIMEOUT_MS: '0' }), /REQUEST_IDLE_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ ...base, MAX_CONNECTIONS: 'many' }), /MAX_CONNECTIONS/);
});
