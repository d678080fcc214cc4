/**
 * The SSRF guard (API.md section 8) in a service with the default policy (https only, no
 * private networks): a URL whose host is, or resolves to, an address in any refused range is
 * refused at creation; a host that resolved to a public address at creation and to a refused one
 * later (DNS rebinding) is refused at the connection, and nothing is sent; `localhost` and
 * plain http are refused.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { rest } from '../helpers/dual';
import { REFUSED_SAMPLES } from '../helpers/refused-addresses';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { testResolver } from '../helpers/resolver';
import { startTestService, type TestService } from '../helpers/service';


const clock = new ManualClock(Date.now());
const dns = testResolver({ 'public.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
let t: TestService;
let key: string;
let trap: Receiver;

beforeAll(async () => {
  t = await startTestService({ clock, webhookResolver: dns.resolve });
  key = (await t.account('enterprise')).key;
  await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:api-1', frequency: 'PT1H', axes: [{ name: 'cpu' }] } });
  trap = await startReceiver(['whsec_' + Buffer.alloc(32).toString('base64')]);
});
afterAll(async () => {
  await t.close();
  await trap.close();
});

const create = (url: string) => rest(t, key, { method: 'POST', path: '/v1/subscriptions', body: { entity: 'server:api-1', url } });

test('every refused range is refused at creation, as a literal and through DNS', async () => {
  for (const [i, address] of REFUSED_SAMPLES.entries()) {
    const literal = await create(`https://${address.includes(':') ? `[${address}]` : address}/hook`);
    assert.equal(literal.code, 'invalid_argument', `${address}: ${literal.message}`);
    assert.match(literal.message, /^url: .*not a public address/, address);
    const host = `r${i}.rebind.example`;
    dns.table.set(host, [address]);
    const named = await create(`https://${host}/hook`);
    assert.equal(named.code, 'invalid_argument', `${host} → ${address}`);
    // the same words whatever the reason, naming no address (found by QA: they mapped the server's internal DNS)
    assert.equal(named.message, `url: host ${host} does not resolve to a public address: webhooks must reach the public internet`);
  }
  // one bad answer among good ones is enough to refuse
  dns.table.set('mixed.example', ['93.184.216.34', '10.0.0.1']);
  assert.equal((await create('https://mixed.example/hook')).code, 'invalid_argument');
  const local = await create(`https://localhost:${new URL(trap.url).port}/hook`);
  assert.equal(local.code, 'invalid_argument');
  assert.match(local.message, /^url: host localhost does not resolve to a public address/);
  // a name that does not resolve at all gets the same words as one resolving to an internal address
  const nowhere = await create('https://nowhere.invalid/hook');
  assert.equal(nowhere.message, 'url: host nowhere.invalid does not resolve to a public address: webhooks must reach the public internet');
  const plain = await create('http://public.example.com/hook');
  assert.equal(plain.code, 'invalid_argument');
  assert.match(plain.message, /^url: must use https/);
  assert.equal((await create('https://public.example.com/hook')).code, 'ok');
});

test('at delivery time the address is checked again after resolution: a rebound host gets nothing', async () => {
  const subs: { id: string; address: string }[] = [];
  for (const [i, address] of REFUSED_SAMPLES.entries()) {
    const host = `d${i}.rebind.example`;
    dns.table.set(host, ['93.184.216.34']);
    const r = await create(`https://${host}/hook`);
    assert.equal(r.code, 'ok', r.message);
    subs.push({ id: r.data.subscription.subscription_id, address });
    dns.table.set(host, [address]); // rebinding: public at creation, internal at delivery
  }
  // the loopback trap itself, by name: it must never be reached
  dns.table.set('trap.example', ['93.184.216.34']);
  const trapSub = await create(`https://trap.example:${new URL(trap.url).port}/hook`);
  subs.push({ id: trapSub.data.subscription.subscription_id, address: '127.0.0.1' });
  dns.table.set('trap.example', ['127.0.0.1']);
  for (const s of subs) assert.equal((await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${s.id}:test`, body: {} })).code, 'ok');
  await t.service.ctx.webhooks.dispatcher.settled();
  for (const s of subs) {
    const log = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${s.id}/deliveries` });
    const d = log.data.deliveries[0];
    assert.equal(d.attempt_count, 1, s.address);
    assert.equal(d.attempts[0].status_code, 0);
    assert.match(d.attempts[0].error, /^host d\d+\.rebind\.example does not resolve to a public address|^host trap\.example does not resolve to a public address/, `${s.address}: ${d.attempts[0].error}`);
    assert.ok(!d.attempts[0].error.includes(s.address), 'the address is not named');
  }
  assert.equal(trap.received.length, 0);
});
