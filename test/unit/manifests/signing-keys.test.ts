/**
 * Signing keys: one first key however many replicas start; rotation adds the next generation and
 * keeps every old key published; private keys are stored sealed (bound to their key id) and only
 * public facts ever leave the store.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { join } from 'node:path';
import { ManualClock } from '../../../src/clock';
import { jwkOf, newSigningKeyPair, SigningKeyStore } from '../../../src/manifests/signing-keys';
import { REPO_ROOT } from '../../helpers/files';
import { SecretBoxError } from '../../../src/store/secret-box';
import { signingFixture, type SigningFixture } from './fixture';

let f: SigningFixture;
beforeAll(async () => {
  f = await signingFixture();
});
afterAll(() => f.database.close());

test('replicas starting together make one first key; rotations take the next generations, concurrently too', async () => {
  const replica = new SigningKeyStore(f.database, f.box, new ManualClock());
  await Promise.all([replica.ensure(), f.keys.ensure(), replica.ensure()]);
  const first = await f.keys.list();
  assert.equal(first.length, 1);
  assert.equal((await replica.current()).keyId, first[0].keyId);
  const [a, b] = await Promise.all([f.keys.rotate(), replica.rotate()]);
  assert.deepEqual([a.generation, b.generation].sort(), [2, 3]);
  const all = await f.keys.list();
  assert.deepEqual(all.map((k) => k.generation), [1, 2, 3]);
  assert.equal((await f.keys.current()).keyId, all[2].keyId, 'the newest generation signs');
  assert.equal((await replica.current()).keyId, all[2].keyId);
});

test('signatures verify with the published JWK; every old key still signs its own envelopes', async () => {
  const data = Buffer.from('hello');
  for (const k of await f.keys.list()) {
    const jwk = jwkOf(k);
    assert.deepEqual(Object.keys(jwk).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    const pub = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
    assert.ok(verify(null, data, pub, await f.keys.signWith(k.keyId, data)));
  }
  await assert.rejects(f.keys.signWith('sigkey_nope', data), /does not exist/);
});

test('private keys are sealed at rest and bound to their key id', async () => {
  const rows = await f.database.db.selectFrom('signing_keys').selectAll().orderBy('generation').execute();
  for (const r of rows) {
    assert.match(r.private_key, /^sb1\./);
    assert.doesNotMatch(r.private_key, /MC4CAQAwBQYDK2Vw/, 'no PKCS #8 in clear');
  }
  // a sealed key copied into another row does not open there
  await f.database.db.updateTable('signing_keys').set({ private_key: rows[0].private_key }).where('key_id', '=', rows[1].key_id).execute();
  const fresh = new SigningKeyStore(f.database, f.box, new ManualClock());
  await assert.rejects(fresh.signWith(rows[1].key_id, Buffer.from('x')), SecretBoxError);
});

test('a new key pair: x is the raw public key of the PKCS #8 private key, as its JWK says', () => {
  const { x, pkcs8 } = newSigningKeyPair();
  const jwk = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  assert.equal(x, jwk.x);
  assert.equal(Buffer.from(x, 'base64url').length, 32);
});

// found in CI (a test worker blocked for good): on Node 20 exporting a freshly generated Ed25519 key as a
// JWK can deadlock when a garbage collection finalizes its generation job mid-export. The compiled code
// (make test builds first) in a child with a 1 MB young generation, so that collections are constant;
// before the fix the loop hung within a second and the child was killed at the time limit.
test('generating key pairs under constant garbage collection never hangs the process', async () => {
  const module = join(REPO_ROOT, 'dist', 'src', 'manifests', 'signing-keys.js');
  const script = `const { newSigningKeyPair } = require(${JSON.stringify(module)}); let junk = [];
for (let i = 0; i < 20000; i++) { newSigningKeyPair(); junk.push(new Array(50).fill({ i })); if (junk.length > 200) junk = []; }
process.stdout.write('done');`;
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--max-semi-space-size=1', '-e', script], { timeout: 60_000, killSignal: 'SIGKILL' }, (error, stdout) =>
      error ? reject(new Error(`the child did not finish: ${error.message}`)) : resolve(stdout),
    ),
  );
  assert.equal(out, 'done');
}, 90_000);
