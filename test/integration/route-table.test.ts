/**
 * The REST routes come from the google.api.http annotations: a test-only proto (test/proto) with
 * a new annotated service gets REST routes — custom verb, path variables, query parameters —
 * without any change to the gateway, and gRPC serves the same endpoint.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EchoServiceClient } from '../gen/forecast/testing/v1/echo_service.pb';
import { invalidArgument } from '../../src/rpc/errors';
import type { TestService } from '../helpers/service';
import { startWithEcho } from '../helpers/echo';
import { grpcCall, rest } from '../helpers/dual';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startWithEcho({
    shout: {
      access: 'forecast:read',
      async handle(req) {
        if (req.times < 0) throw invalidArgument('times', 'must not be negative');
        return { shout: `${req.name} ${req.text}`.toUpperCase().repeat(Math.max(1, req.times)) };
      },
    },
    oldEcho: {
      access: 'public',
      async handle(req) {
        return { name: req.name, tags: req.tags, loud: req.loud };
      },
    },
  });
  key = (await t.account()).key;
});
afterAll(() => t.close());

test('the compiled table holds a route for every annotated method, including the test service', () => {
  const routes = t.service.routes.routes.map((r) => `${r.httpMethod} ${r.template.template}`);
  assert.ok(routes.includes('POST /v1/testing/echo/{name}:shout'));
  assert.ok(routes.includes('GET /v1/testing/old/{name}'));
  assert.ok(routes.includes('GET /v1/entities/{entity}'));
  assert.ok(routes.includes('POST /v1/observations:bulkIngest'));
});

test('a custom-verb route with a path variable and a body works over REST and gRPC alike', async () => {
  const r = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/bob:shout', body: { text: 'hi', times: 2 } });
  assert.equal(r.code, 'ok', r.message);
  assert.deepEqual(r.data, { shout: 'BOB HIBOB HI' });
  const client = t.client(EchoServiceClient);
  const g = await grpcCall(client, client.shout, key, { name: 'bob', text: 'hi', times: 2, legacyNote: '' });
  assert.equal(g.data.shout, 'BOB HIBOB HI');
  const bad = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/bob:shout', body: { times: -1 } });
  assert.equal(bad.code, 'invalid_argument');
  const noVerb = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/bob', body: {} });
  assert.equal(noVerb.code, 'not_found');
  const conflict = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/bob:shout', body: { name: 'eve' } });
  assert.equal(conflict.code, 'invalid_argument');
  assert.ok(conflict.message.includes('name'));
});

test('query parameters map to fields: repeated, bool, and type errors', async () => {
  const r = await rest(t, undefined, { method: 'GET', path: '/v1/testing/old/ann?tags=a&tags=b&loud=true' });
  assert.equal(r.code, 'ok', r.message);
  assert.deepEqual(r.data, { name: 'ann', tags: ['a', 'b'], loud: true });
  const bad = await rest(t, undefined, { method: 'GET', path: '/v1/testing/old/ann?loud=maybe' });
  assert.equal(bad.code, 'invalid_argument');
  assert.ok(bad.message.includes('loud'));
});
