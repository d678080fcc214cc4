/**
 * The CLI's manifest commands against a running service's SQLite file: `signing-keys rotate`
 * from another process changes the key the server signs with; `manifests verify` accepts
 * exported manifests and DSSE envelopes (keys from a JWKS URL, a JWKS file or the database)
 * and names what failed for tampered, truncated or unverifiable input — exit 1, never a crash.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/rpc/descriptors';
import { rest } from '../helpers/dual';
import { leaves, withChangedLeaf } from '../helpers/independent-verifier';
import { dailyEntity, weekly } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

const bin = join(packageRoot(), 'bin', 'forecast.js');
const dir = mkdtempSync(join(tmpdir(), 'forecast-mcli-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'm.db')}` };
let t: TestService;
let key: string;
let manifest: any;
let envelopeText: string;

/** Run the CLI in a child process, asynchronously: the service it may call runs in this one. */
function cli(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, ...env, ...extra }, encoding: 'utf8' }, (error, out, err) => {
      resolve({ code: error ? Number(error.code) : 0, out, err });
    });
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

beforeAll(async () => {
  t = await startTestService({ env });
  ({ key } = await t.account('enterprise'));
  await dailyEntity(t, key, 'store:cli', weekly);
  const q = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:cli', include_manifest: true } });
  assert.equal(q.code, 'ok', q.message);
  manifest = q.data.manifest;
  envelopeText = await (await fetch(`${t.baseUrl}/v1/manifests/${manifest.query_id}?format=dsse`, { headers: { authorization: `Bearer ${key}` } })).text();
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

test('verify: a manifest and a DSSE envelope, with keys from a JWKS URL, a JWKS file or the database', async () => {
  const url = `${t.baseUrl}/v1/manifests/keys`;
  const m = file('manifest.json', JSON.stringify(manifest, null, 2));
  const e = file('envelope.json', envelopeText);
  const jwksFile = file('keys.json', await (await fetch(url)).text());
  for (const args of [[m, '--jwks', url], [e, '--jwks', jwksFile], [e]]) {
    const r = await cli(['manifests', 'verify', ...args]);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    assert.ok(r.out.includes(manifest.query_id) && r.out.includes(manifest.key_id), r.out);
  }
});

test('verify: tampered, truncated, unknown-key and malformed input exit 1 naming what failed', async () => {
  const jwks = await (await fetch(`${t.baseUrl}/v1/manifests/keys`)).text();
  const jwksFile = file('jwks.json', jwks);
  const text = JSON.stringify(manifest);
  const envelope = JSON.parse(envelopeText);
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
  // A few of each kind (test/unit/manifests/verify.test.ts runs every case in-process; this shows the exit codes).
  const paths = leaves(manifest).map(([p]) => p);
  const cases: [string, string, RegExp][] = [
    ...[paths[Math.floor(paths.length / 2)], ['signature']].map((p): [string, string, RegExp] => [`changed ${p.join('.')}`, JSON.stringify(withChangedLeaf(manifest, p)), /signature/]),
    ['truncated manifest', text.slice(0, Math.floor(text.length / 2)), /not valid JSON/],
    ['envelope with a changed payload', JSON.stringify({ ...envelope, payload: Buffer.from(JSON.stringify({ ...statement, predicate: { ...statement.predicate, horizon: 9 } })).toString('base64') }), /no envelope signature verifies/],
  ];
  for (const [name, content, message] of cases) {
    const r = await cli(['manifests', 'verify', file('case.json', content), '--jwks', jwksFile]);
    assert.equal(r.code, 1, `${name}: exit ${r.code} ${r.err}`);
    assert.match(r.err, /^invalid: /, name);
    assert.match(r.err, message, `${name}: ${r.err}`);
    assert.doesNotMatch(r.err, /\n\s+at /, `${name}: no stack trace`);
  }
  const noKey = await cli(['manifests', 'verify', file('m.json', text), '--jwks', file('empty-jwks.json', '{"keys":[]}')]);
  assert.equal(noKey.code, 1);
  assert.match(noKey.err, /not in the JWKS/);
  const missing = await cli(['manifests', 'verify', join(dir, 'nope.json'), '--jwks', jwksFile]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /cannot read the file/);
  assert.equal((await cli(['manifests', 'verify'])).code, 2);
});

test('verify: a file or a JWKS URL that never ends is refused past 64 MiB, exit 1, no crash', async () => {
  const zeros = await cli(['manifests', 'verify', '/dev/zero']);
  assert.equal(zeros.code, 1, zeros.err);
  assert.match(zeros.err, /the file \/dev\/zero is larger than 67108864 bytes/);
  // a JWKS server whose answer never ends
  const endless = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const more = () => {
      while (res.write(chunk));
    };
    res.on('drain', more);
    res.on('error', () => undefined);
    more();
  });
  await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
  try {
    const m = file('manifest-endless.json', JSON.stringify(manifest));
    const r = await cli(['manifests', 'verify', m, '--jwks', `http://127.0.0.1:${(endless.address() as AddressInfo).port}/keys`]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /the JWKS from http:\/\/127\.0\.0\.1:\d+\/keys is larger than 67108864 bytes/);
  } finally {
    endless.closeAllConnections();
    endless.close();
  }
});

test('commands that only read refuse a SQLite DATABASE_URL with no database rather than make one (found by QA: folders and all)', async () => {
  const missing = join(dir, 'typo', 'nothing.db');
  const m = file('manifest-typo.json', JSON.stringify(manifest));
  for (const args of [['signing-keys', 'list'], ['manifests', 'verify', m]]) {
    const r = await cli(args, { DATABASE_URL: `sqlite:${missing}` });
    assert.equal(r.code, 1, args.join(' '));
    assert.equal(r.err, `forecast: no database at ${missing} (DATABASE_URL): check the path, or start the server once to make one\n`);
  }
  assert.equal(existsSync(join(dir, 'typo')), false, 'no folder made');
});

test('signing-keys rotate from the CLI: the server signs with the new key from its next query; list shows every key', async () => {
  const rotated = await cli(['signing-keys', 'rotate', '--json']);
  assert.equal(rotated.code, 0, rotated.err);
  const { key_id, generation } = JSON.parse(rotated.out);
  assert.match(key_id, /^sigkey_/);
  assert.equal(generation, 2);
  assert.deepEqual(Object.keys(JSON.parse(rotated.out)).sort(), ['generation', 'key_id', 'x'], 'public facts only');
  const q = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:cli', horizon: 2, include_manifest: true } });
  assert.equal(q.data.manifest.key_id, key_id);
  const listed = await cli(['signing-keys', 'list', '--json']);
  assert.deepEqual(JSON.parse(listed.out).map((k: any) => k.key_id), [manifest.key_id, key_id]);
  for (const m of [manifest, q.data.manifest]) assert.equal((await cli(['manifests', 'verify', file('v.json', JSON.stringify(m))])).code, 0);
});
