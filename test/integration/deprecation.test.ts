/** Versioning and deprecation headers (API.md section 2), on both protocols. */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EchoServiceClient, EchoServiceService } from '../gen/forecast/testing/v1/echo_service.pb';
import { bindService } from '../../src/rpc/registry';
import { buildMethodTable } from '../../src/rpc/registry';
import { loadDescriptors, DESCRIPTOR_IMAGE } from '../../src/rpc/descriptors';
import { startTestService, type TestService } from '../helpers/service';
import { ECHO_DEPRECATIONS, ECHO_DESCRIPTORS } from '../helpers/echo';
import { grpcCall, rest } from '../helpers/dual';

const echoImpl = bindService(EchoServiceService, {
  shout: { access: 'public', handle: async (req) => ({ shout: req.name }) },
  oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: req.tags, loud: req.loud }) },
});
let t: TestService;
let client: EchoServiceClient;

beforeAll(async () => {
  t = await startTestService({ extraDescriptors: [ECHO_DESCRIPTORS], deprecations: ECHO_DEPRECATIONS, extraServices: () => [echoImpl] });
  client = t.client(EchoServiceClient);
});
afterAll(() => t.close());

test('a deprecated method answers with Deprecation, Sunset (12 months later) and Link on REST and gRPC', async () => {
  const since = Date.UTC(2026, 2, 1) / 1000;
  for (const o of [
    await rest(t, undefined, { method: 'GET', path: '/v1/testing/old/ann' }),
    await grpcCall(client, client.oldEcho, undefined, { name: 'ann', tags: [], loud: false }),
  ]) {
    assert.equal(o.code, 'ok', o.message);
    assert.equal(o.headers['deprecation'], `@${since}`, o.protocol);
    assert.equal(o.headers['sunset'], 'Mon, 01 Mar 2027 00:00:00 GMT', o.protocol);
    assert.equal(o.headers['link'], '<https://example.com/docs/deprecations#old-echo>; rel="deprecation"; type="text/html"', o.protocol);
    assert.equal(o.headers['api-version'], '1.0.0');
  }
});

test('a deprecated field adds the headers only when it is used', async () => {
  const used = await rest(t, undefined, { method: 'POST', path: '/v1/testing/echo/bob:shout', body: { legacy_note: 'x' } });
  assert.equal(used.headers['deprecation'], `@${Date.UTC(2026, 5, 15) / 1000}`);
  assert.equal(used.headers['sunset'], 'Tue, 15 Jun 2027 00:00:00 GMT');
  const g = await grpcCall(client, client.shout, undefined, { name: 'bob', text: '', times: 0, legacyNote: 'x' });
  assert.equal(g.headers['deprecation'], `@${Date.UTC(2026, 5, 15) / 1000}`);
  const unused = await rest(t, undefined, { method: 'POST', path: '/v1/testing/echo/bob:shout', body: { text: 'x' } });
  assert.equal(unused.headers['deprecation'], undefined);
  const gu = await grpcCall(client, client.shout, undefined, { name: 'bob', text: 'x', times: 0, legacyNote: '' });
  assert.equal(gu.headers['deprecation'], undefined);
});

test('start-up refuses a deprecated method without a dated notice', () => {
  const d = loadDescriptors([DESCRIPTOR_IMAGE, ECHO_DESCRIPTORS]);
  assert.throws(() => buildMethodTable([echoImpl], d.registry, {}), /is deprecated in the proto but has no entry in the deprecation table/);
});
