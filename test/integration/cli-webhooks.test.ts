/**
 * `forecast webhooks listen`: a real child process receiving the service's deliveries prints the
 * verified events once, refuses forged and stale ones, and acknowledges duplicates silently.
 */
import { afterAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/rpc/descriptors';
import { signatureHeaders } from '../../src/subscriptions/webhook-signature';
import { rest } from '../helpers/dual';
import { startTestService, type TestService } from '../helpers/service';

const bin = join(packageRoot(), 'bin', 'forecast.js');
let t: TestService | undefined;
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await t?.close();
});

/** Collects a stream's text and resolves waits on it. */
function watch(stream: NodeJS.ReadableStream) {
  let text = '';
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  stream.on('data', (c: Buffer) => {
    text += c.toString();
    for (const w of [...waiters]) {
      const m = w.re.exec(text);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  return {
    text: () => text,
    waitFor: (re: RegExp) => new Promise<RegExpExecArray>((resolve) => {
      const m = re.exec(text);
      if (m) resolve(m);
      else waiters.push({ re, resolve });
    }),
  };
}

test('prints the verified test event once; forged, stale and unsigned posts are refused', async () => {
  t = await startTestService({ env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' } });
  const key = (await t.account('enterprise')).key;
  await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:api-1', frequency: 'PT1H', axes: [{ name: 'cpu' }] } });
  const sub = await rest(t, key, { method: 'POST', path: '/v1/subscriptions', body: { entity: 'server:api-1', url: 'http://127.0.0.1:9/later' } });
  const secret: string = sub.data.secret;
  const id: string = sub.data.subscription.subscription_id;

  child = spawn(process.execPath, [bin, 'webhooks', 'listen', '--port', '0', '--secret', secret], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = watch(child.stdout!);
  const err = watch(child.stderr!);
  const [, url] = await err.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/)/);
  assert.equal((await rest(t, key, { method: 'PATCH', path: `/v1/subscriptions/${id}`, body: { url: `${url}hooks` } })).code, 'ok');

  const sent = await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${id}:test`, body: {} });
  const eventId: string = sent.data.event_id;
  await out.waitFor(new RegExp(`subscription\\.test .*\\(${eventId}\\)`));
  await t.service.ctx.webhooks.dispatcher.settled();
  const log = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${id}/deliveries` });
  assert.equal(log.data.deliveries[0].attempts[0].status_code, 204);

  const body = JSON.stringify({ id: 'evt_forged', type: 'drift.detected', created_at: '2026-01-01T00:00:00Z', data: {} });
  const post = (headers: Record<string, string>, b = body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });
  const now = Math.floor(Date.now() / 1000);
  const genuine = signatureHeaders('evt_forged', now, body, [secret]);
  assert.equal((await post(signatureHeaders('evt_forged', now, body, ['whsec_' + Buffer.alloc(32, 1).toString('base64')]))).status, 400);
  assert.equal((await post(signatureHeaders('evt_forged', now - 600, body, [secret]))).status, 400);
  assert.equal((await post({})).status, 400);
  assert.equal((await post(genuine, body.replace('drift', 'drafts'))).status, 400);
  await err.waitFor(/(rejected POST[^\n]*\n[^]*){4}/);
  assert.match(err.text(), /no valid webhook-signature/);
  assert.match(err.text(), /more than 300 s from now/);
  assert.match(err.text(), /missing signature headers/);
  // a genuine post is printed once, its duplicate acknowledged and not printed again
  assert.equal((await post(genuine)).status, 204);
  assert.equal((await post(genuine)).status, 204);
  await out.waitFor(/drift\.detected[^\n]*evt_forged/);
  const sentinel = signatureHeaders('evt_last', now, body.replace('evt_forged', 'evt_last'), [secret]);
  assert.equal((await post(sentinel, body.replace('evt_forged', 'evt_last'))).status, 204);
  await out.waitFor(/evt_last/);
  assert.equal(out.text().split('\n').filter((l) => l.includes('evt_forged')).length, 1);
});

test('usage mistakes exit 2', () => {
  const run = (args: string[]) => {
    try {
      execFileSync(process.execPath, [bin, 'webhooks', ...args], { stdio: 'pipe' });
      return 0;
    } catch (e: any) {
      return e.status as number;
    }
  };
  assert.equal(run(['listen']), 2);
  assert.equal(run(['listen', '--secret', 'hunter2']), 2);
  assert.equal(run(['listen', '--secret', 'whsec_' + Buffer.alloc(32).toString('base64'), '--port', '99999']), 2);
  assert.equal(run(['serve-me']), 2);
});

test('the secret may come from FORECAST_WEBHOOK_SECRET, out of the command line every local user can read (found by QA)', async () => {
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const listener = spawn(process.execPath, [bin, 'webhooks', 'listen', '--port', '0'], { env: { ...process.env, FORECAST_WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => listener.once('exit', resolve));
  try {
    const out = watch(listener.stdout!);
    const err = watch(listener.stderr!);
    const listening = err.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/)/);
    const [, url] = await Promise.race([listening, exited.then((code) => Promise.reject(new Error(`the listener exited (${code}): ${err.text()}`)))]);
    const body = JSON.stringify({ id: 'evt_env', type: 'subscription.test', created_at: '2026-01-01T00:00:00Z', data: {} });
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signatureHeaders('evt_env', Math.floor(Date.now() / 1000), body, [secret]) }, body });
    assert.equal(res.status, 204);
    await out.waitFor(/subscription\.test .*\(evt_env\)/);
    assert.ok(!readFileSync(`/proc/${listener.pid}/cmdline`, 'utf8').includes('whsec_'));
  } finally {
    listener.kill('SIGTERM');
    await exited;
  }
});
