import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { CursorCodec, pageSize, splitPage } from '../../../src/rpc/pagination';
import { ServiceError } from '../../../src/rpc/errors';

test('page size: default, cap, refusal', () => {
  assert.equal(pageSize(0), 50);
  assert.equal(pageSize(undefined), 50);
  assert.equal(pageSize(7), 7);
  assert.equal(pageSize(200), 200);
  assert.equal(pageSize(201), 200);
  assert.throws(() => pageSize(-1), (e: ServiceError) => e.code === 'invalid_argument');
});

test('cursors round-trip and are bound to account, query and secret', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 1));
  const c = codec.encode('acct_1', 'q', { e: 'store:x' });
  assert.deepEqual(codec.decode('acct_1', 'q', c), { e: 'store:x' });
  const invalid = (e: ServiceError) => e.code === 'invalid_cursor';
  assert.throws(() => codec.decode('acct_2', 'q', c), invalid);
  assert.throws(() => codec.decode('acct_1', 'other', c), invalid);
  assert.throws(() => new CursorCodec(Buffer.alloc(32, 2)).decode('acct_1', 'q', c), invalid);
  assert.throws(() => codec.decode('acct_1', 'q', 'garbage'), invalid);
  assert.throws(() => codec.decode('acct_1', 'q', ''), invalid);
  const forged = Buffer.from(JSON.stringify({ e: 'store:z' })).toString('base64url') + c.slice(c.indexOf('.'));
  assert.throws(() => codec.decode('acct_1', 'q', forged), invalid);
});

test('a cursor is exactly payload.signature: junk after or around it, or an over-long one, is refused', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 1));
  const c = codec.encode('acct_1', 'q', { e: 'store:x' });
  const invalid = (e: ServiceError) => e.code === 'invalid_cursor';
  for (const bad of [`${c}!!`, `${c}A`, `${c}=`, ` ${c}`, `${c}\n`, `${c}.x`, c.replace('.', '..'), `${'A'.repeat(2000)}${c}`]) {
    assert.throws(() => codec.decode('acct_1', 'q', bad), invalid, JSON.stringify(bad.slice(-10)));
  }
  assert.deepEqual(codec.decode('acct_1', 'q', c), { e: 'store:x' });
});

test('splitPage: size + 1 rows say more follow; a byte budget ends the page earlier, never before its first row', () => {
  assert.deepEqual(splitPage([1, 2, 3], 2), { page: [1, 2], more: true });
  assert.deepEqual(splitPage([1, 2], 2), { page: [1, 2], more: false });
  const bytes = { of: (n: number) => n, maxBytes: 10 };
  assert.deepEqual(splitPage([4, 5, 6, 7], 3, bytes), { page: [4, 5], more: true });
  assert.deepEqual(splitPage([4, 6], 3, bytes), { page: [4, 6], more: false });
  assert.deepEqual(splitPage([4, 7], 3, bytes), { page: [4], more: true });
  assert.deepEqual(splitPage([50, 1], 3, bytes), { page: [50], more: true });
  assert.deepEqual(splitPage([50], 3, bytes), { page: [50], more: false });
});
