import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { generateApiKey, hashApiKey, isWellFormedApiKey, KEY_PREFIX } from '../../../src/accounts/api-key';

test('keys have the prefix, 32 random base62 characters and a 6-character checksum', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const k = generateApiKey();
    assert.match(k, /^fk_live_[0-9A-Za-z]{38}$/);
    assert.ok(k.startsWith(KEY_PREFIX));
    assert.ok(isWellFormedApiKey(k));
    seen.add(k);
  }
  assert.equal(seen.size, 200);
});

test('any single-character change breaks the checksum', () => {
  const k = generateApiKey();
  for (let i = KEY_PREFIX.length; i < k.length; i++) {
    const c = k[i] === 'a' ? 'b' : 'a';
    assert.equal(isWellFormedApiKey(k.slice(0, i) + c + k.slice(i + 1)), false, `position ${i}`);
  }
  assert.equal(isWellFormedApiKey(''), false);
  assert.equal(isWellFormedApiKey('fk_test_' + k.slice(8)), false);
});

test('the stored hash is SHA-256 hex and differs per key', () => {
  const a = generateApiKey();
  assert.match(hashApiKey(a), /^[0-9a-f]{64}$/);
  assert.notEqual(hashApiKey(a), hashApiKey(generateApiKey()));
});
