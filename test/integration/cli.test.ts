/** The operator CLI against the run's database: accounts and keys made by the CLI work on the API. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/rpc/descriptors';
import { openDatabase } from '../../src/store/database';
import { freshDatabaseUrl } from '../helpers/database';
import { startTestService } from '../helpers/service';

const bin = join(packageRoot(), 'bin', 'forecast.js');

function cli(args: string[], env: NodeJS.ProcessEnv): { code: number; out: string; err: string } {
  try {
    const out = execFileSync(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, out, err: '' };
  } catch (e: any) {
    return { code: e.status, out: String(e.stdout), err: String(e.stderr) };
  }
}

test('accounts create --json, keys create/revoke, set-tier; the keys work on the API', async () => {
  const fresh = await freshDatabaseUrl();
  const env = { DATABASE_URL: fresh.url, ...(fresh.masterKey && { MASTER_KEY: fresh.masterKey }) };
  const created = cli(['accounts', 'create', '--tier', 'free', '--email', 'ops@example.com', '--json'], env);
  assert.equal(created.code, 0, created.err);
  const { account_id, api_key } = JSON.parse(created.out.trim());
  assert.match(account_id, /^acct_/);
  assert.match(api_key, /^fk_live_/);
  const dup = cli(['accounts', 'create', '--tier', 'free', '--email', 'ops@example.com'], env);
  assert.equal(dup.code, 1);
  assert.match(dup.err, /already exists/);
  // the same address typed otherwise is the same address, as sign-up takes it
  const upper = cli(['accounts', 'create', '--tier', 'free', '--email', ' Ops@Example.COM'], env);
  assert.equal(upper.code, 1, upper.out);
  assert.match(upper.err, /already exists/);
  assert.equal(cli(['accounts', 'create', '--tier', 'gold'], env).code, 2);
  assert.equal(cli(['accounts', 'set-tier', '--account', account_id, '--tier', 'pro'], env).code, 0);
  const key2 = JSON.parse(cli(['keys', 'create', '--account', account_id, '--scopes', 'forecast:read', '--json'], env).out.trim());
  assert.deepEqual(key2.scopes, ['forecast:read']);
  assert.equal(cli(['keys', 'create', '--account', account_id, '--scopes', 'everything'], env).code, 2);

  const t = await startTestService({ env });
  try {
    const get = (k: string) => fetch(`${t.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${k}` } });
    const res = await get(api_key);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { tier: string; email: string };
    assert.equal(body.tier, 'pro');
    assert.equal(body.email, 'ops@example.com');
    assert.equal((await get(key2.api_key)).status, 200);
    assert.equal(cli(['keys', 'revoke', '--account', account_id, '--key', key2.key_id], env).code, 0);
    assert.equal((await get(key2.api_key)).status, 401);
    assert.equal(cli(['keys', 'revoke', '--account', account_id, '--key', key2.key_id], env).code, 1);
  } finally {
    await t.close();
    await fresh.drop();
  }
});

test('usage errors exit 2 with the usage text', () => {
  const r = cli(['frobnicate'], {});
  assert.equal(r.code, 2);
  assert.match(r.err, /usage: forecast/);
});

test('every command and subcommand answers --help (and -h) with its usage, exit 0, touching nothing', () => {
  const cases: [string[], RegExp][] = [
    [['--help'], /^usage: forecast <command>/],
    [['help'], /^usage: forecast <command>/],
    [['serve', '--help'], /^usage: forecast serve/],
    [['accounts', '--help'], /^usage: forecast accounts <create\|set-tier>/],
    [['accounts', 'create', '--help'], /^usage: forecast accounts create --tier/],
    [['accounts', 'create', '--tier', 'free', '-h'], /^usage: forecast accounts create --tier/],
    [['accounts', 'set-tier', '--help'], /^usage: forecast accounts set-tier/],
    [['keys', '--help'], /^usage: forecast keys <create\|revoke>/],
    [['keys', 'create', '--help'], /^usage: forecast keys create --account/],
    [['keys', 'revoke', '-h'], /^usage: forecast keys revoke/],
    [['signing-keys', '--help'], /^usage: forecast signing-keys <rotate\|list>/],
    [['signing-keys', 'rotate', '-h'], /^usage: forecast signing-keys rotate/],
    [['signing-keys', 'list', '--help'], /^usage: forecast signing-keys list/],
    [['manifests', '--help'], /^usage: forecast manifests verify/],
    [['manifests', 'verify', '--help'], /^usage: forecast manifests verify FILE/],
    [['evaluate-hierarchy', '--help'], /^usage: forecast evaluate-hierarchy --data/],
    [['webhooks', '--help'], /^usage: forecast webhooks listen/],
    [['webhooks', 'listen', '-h', '--secret', 'whsec_x'], /^usage: forecast webhooks listen/],
  ];
  const dir = mkdtempSync(join(tmpdir(), 'forecast-cli-help-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'never.db')}` };
  for (const [args, usage] of cases) {
    const r = cli(args, env);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    assert.match(r.out, usage, args.join(' '));
  }
  assert.equal(existsSync(join(dir, 'never.db')), false, 'no command ran');
});

test('keys create holds to the API rules for a key: a lifetime past 10 years, a long name or no scope is a usage error, and no key is made', async () => {
  // Found by QA: `--expires-in-days 1e10` made a key whose expiry no date can hold, and the
  // account's key list answered 500 from then on.
  const fresh = await freshDatabaseUrl();
  const env = { DATABASE_URL: fresh.url, ...(fresh.masterKey && { MASTER_KEY: fresh.masterKey }) };
  const { account_id } = JSON.parse(cli(['accounts', 'create', '--tier', 'free', '--json'], env).out.trim());
  const admin = JSON.parse(cli(['keys', 'create', '--account', account_id, '--scopes', 'keys:admin', '--expires-in-days', '0.5', '--json'], env).out.trim());
  for (const bad of [['--expires-in-days', '1e10'], ['--expires-in-days', '1e308'], ['--expires-in-days', '3651'], ['--expires-in-days', '0x10'], ['--expires-in-days', '-1'], ['--name', 'n'.repeat(101)], ['--scopes', ',,']]) {
    const r = cli(['keys', 'create', '--account', account_id, ...bad], env);
    assert.equal(r.code, 2, `${bad.join(' ')}: ${r.out}`);
    assert.match(r.err, new RegExp(`^forecast: ${bad[0]}`), bad.join(' '));
  }
  assert.equal(cli(['keys', 'create', '--account', account_id, '--expires-in-days', '3650', '--name', 'n'.repeat(100)], env).code, 0);
  const t = await startTestService({ env });
  try {
    const res = await fetch(`${t.baseUrl}/v1/keys`, { headers: { authorization: `Bearer ${admin.api_key}` } });
    assert.equal(res.status, 200, await res.clone().text());
    const { keys } = (await res.json()) as { keys: { expire_time: string }[] };
    assert.equal(keys.length, 3);
  } finally {
    await t.close();
    await fresh.drop();
  }
});

test('accounts create refuses an --email sign-up would refuse (empty, control characters), and makes no account', async () => {
  const fresh = await freshDatabaseUrl();
  const env = { DATABASE_URL: fresh.url, ...(fresh.masterKey && { MASTER_KEY: fresh.masterKey }) };
  try {
    for (const email of ['', 'a\u001b[31m@example.com', 'no-at-sign', `${'a'.repeat(250)}@example.com`]) {
      const r = cli(['accounts', 'create', '--tier', 'free', '--email', email], env);
      assert.equal(r.code, 2, `${JSON.stringify(email)}: ${r.out}`);
      assert.match(r.err, /^forecast: --email (needs a value|".*" is not a valid email address)/);
    }
    assert.equal(cli(['accounts', 'create', '--tier', 'free', '--email', 'ops+1@example.com'], env).code, 0);
    const database = await openDatabase(fresh.url);
    try {
      const rows = await database.db.selectFrom('accounts').select('email').execute();
      assert.deepEqual(rows.map((r) => r.email), ['ops+1@example.com']);
    } finally {
      await database.close();
    }
  } finally {
    await fresh.drop();
  }
});
