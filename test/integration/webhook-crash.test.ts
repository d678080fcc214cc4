/**
 * At-least-once delivery across a crash: the service runs as a real child process; 200 events
 * are queued, some delivered, the rest failing and waiting for retries, when the process is
 * killed with SIGKILL. Restarted on the same database, it delivers every event; nothing is lost,
 * and any repeat carries the same webhook-id (a receiver that drops duplicates drops it).
 */
import { afterAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/rpc/descriptors';
import { SERVER_NODE_FLAGS } from '../../src/server-flags';
import { startReceiver, type Receiver } from '../helpers/receiver';

const bin = join(packageRoot(), 'bin', 'forecast.js');
const dir = mkdtempSync(join(tmpdir(), 'forecast-crash-'));
const env = {
  ...process.env,
  DATABASE_URL: `sqlite:${join(dir, 'crash.db')}`,
  HTTP_PORT: '0',
  GRPC_PORT: '0',
  LOG_LEVEL: 'error',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  WEBHOOK_RETRY_BASE_MS: '5',
};
const children: ChildProcess[] = [];
let receiver: Receiver | undefined;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Start `forecast serve` (with the server flags, so it does not re-execute itself) and read its REST address. */
function serve(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /REST {2}(http:\/\/127\.0\.0\.1:\d+)\/v1\//.exec(out);
      if (m) resolve({ child, base: m[1] });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening: ${out}`)));
  });
}

async function call(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = (await res.json()) as any;
  assert.equal(res.status, 200, JSON.stringify(data));
  return data;
}

test('kill -9 with 200 deliveries pending or retrying; after a restart every event is delivered, repeats only with the same webhook-id', async () => {
  const made = JSON.parse(execFileSync(process.execPath, [bin, 'accounts', 'create', '--tier', 'enterprise', '--json'], { env, encoding: 'utf8' }).trim());
  const key: string = made.api_key;
  let healthy = false;
  // before the crash, half the events fail (and wait for retries); after it, all succeed
  const rx = (receiver = await startReceiver([], ({ id }) => ({ status: healthy || id.charCodeAt(id.length - 1) % 2 === 0 ? 200 : 503 })));

  const first = await serve();
  await call(first.base, key, 'POST', '/v1/entities', { entity: 'server:api-1', frequency: 'PT1H', axes: [{ name: 'cpu' }] });
  const sub = await call(first.base, key, 'POST', '/v1/subscriptions', { entity: 'server:api-1', url: rx.url });
  rx.secrets = [sub.secret];
  const ids: string[] = [];
  for (let batch = 0; batch < 20; batch++) {
    const made10 = await Promise.all(Array.from({ length: 10 }, () => call(first.base, key, 'POST', `/v1/subscriptions/${sub.subscription.subscription_id}:test`, {})));
    ids.push(...made10.map((r) => r.event_id as string));
  }
  assert.equal(new Set(ids).size, 200);
  await rx.waitFor((r) => r.length >= 150);
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  const deliveredBefore = new Set(rx.received.filter((r) => r.verified && r.status === 200).map((r) => String(r.headers['webhook-id'])));
  assert.ok(deliveredBefore.size < 200, `only ${deliveredBefore.size} delivered when killed`);

  healthy = true;
  const second = await serve();
  const delivered = (r: readonly { verified: boolean; status: number; headers: Record<string, unknown> }[]) =>
    new Set(r.filter((x) => x.verified && x.status === 200).map((x) => String(x.headers['webhook-id'])));
  await rx.waitFor((r) => ids.every((id) => delivered(r).has(id)));
  // nothing unknown, nothing unverified, and each body names its own webhook-id
  assert.ok(rx.received.every((r) => r.verified && ids.includes(String(r.headers['webhook-id'])) && r.event.id === r.headers['webhook-id']));
  // the log agrees once the last attempts are recorded
  const states = async () => {
    const all: string[] = [];
    let cursor = '';
    do {
      const page = await call(second.base, key, 'GET', `/v1/subscriptions/${sub.subscription.subscription_id}/deliveries?page_size=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      all.push(...page.deliveries.map((d: any) => `${d.event_id}:${d.state}`));
      cursor = page.next_cursor;
    } while (cursor);
    return all;
  };
  let log = await states();
  while (log.some((s) => !s.endsWith(':succeeded'))) log = await states();
  assert.deepEqual(log.map((s) => s.split(':')[0]).sort(), [...ids].sort());
  second.child.kill('SIGTERM');
  await new Promise((resolve) => second.child.once('exit', resolve));
});
