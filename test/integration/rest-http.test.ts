/**
 * The HTTP layer around the API (Express, src/transport/rest/app.ts): authentication before any
 * body is read, strict query and JSON numbers, HEAD, static misses, requests Node cannot parse,
 * CORS from CORS_ORIGINS, compression, security headers and operator middleware. Regressions of
 * issue 11 (defects 2, 8 and 12) are named as such.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { SCOPES } from '../../src/accounts/tiers';
import { loadConfig } from '../../src/config';
import { DatabaseUnavailableError } from '../../src/store/pg-errors';
import { rest } from '../helpers/dual';
import { bodyOf, raw } from '../helpers/raw-http';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestService({
    env: { CORS_ORIGINS: 'http://app.example', COMPRESSION: 'on' },
    httpMiddleware: [(_req, res, next) => (res.setHeader('x-operator', 'yes'), next())],
  });
  key = (await t.account()).key;
  const c = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:h', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(c.code, 'ok', c.message);
});
afterAll(() => t.close());

describe('issue 11 defect 2: a request without a valid key gets 401 before its body is read', () => {
  test('a 60 MiB bulk ingest without a key is refused after its headers, the body never read', async () => {
    const port = t.service.httpPort;
    const head = `POST /v1/observations:bulkIngest HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${60 * 1024 * 1024}\r\n\r\n`;
    const answer = await raw(port, `${head}{"entity":"store:h"}\n`);
    assert.match(answer, /^HTTP\/1\.1 401 /);
    // (the rest would be read and dropped, the connection kept: rest-intake.test.ts)
    assert.doesNotMatch(answer, /\r\nconnection: close\r\n/i);
    assert.equal(bodyOf(answer).code, 'unauthenticated');
  });

  test('unary bodies too: without a key 401 comes first, whatever the body; with a key the body is judged', async () => {
    const port = t.service.httpPort;
    const answer = await raw(port, `POST /v1/entities HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"entity"`);
    assert.match(answer, /^HTTP\/1\.1 401 /);
    for (const [headers, body] of [
      [{ 'content-type': 'text/plain' }, 'x'],
      [{ 'content-type': 'application/json' }, '{"entity": '],
      [{ 'content-type': 'application/json' }, 'x'.repeat(2 * 1024 * 1024)],
    ] as const) {
      const res = await fetch(`${t.baseUrl}/v1/entities`, { method: 'POST', headers, body });
      assert.equal(res.status, 401, `${headers['content-type']} ${body.slice(0, 10)}`);
      assert.equal(((await res.json()) as { code: string }).code, 'unauthenticated');
    }
    const authorised = { authorization: `Bearer ${key}` };
    const wrongType = await fetch(`${t.baseUrl}/v1/entities`, { method: 'POST', headers: { ...authorised, 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(wrongType.status, 415);
    const tooBig = await fetch(`${t.baseUrl}/v1/entities`, { method: 'POST', headers: { ...authorised, 'content-type': 'application/json' }, body: 'x'.repeat(2 * 1024 * 1024) });
    assert.equal(tooBig.status, 413);
  });
});

describe('issue 11 defect 8: a missing static asset is 404 with the error body', () => {
  test.each(['/assets/nope.css', '/assets/', '/assets/%00', '/assets/..%2fpackage.json'])('%s', async (path) => {
    const res = await fetch(t.baseUrl + path);
    assert.equal(res.status, 404);
    const body = (await res.json()) as { code: string; request_id: string };
    assert.equal(body.code, 'not_found');
    assert.equal(body.request_id, res.headers.get('request-id'));
  });

  test('an existing asset is served', async () => {
    const res = await fetch(`${t.baseUrl}/assets/styles.css`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/css/);
  });
});

describe('issue 11 item 12 (REST)', () => {
  test('query integers must be decimal: page_size=0x10 is 400, not 16', async () => {
    for (const q of ['0x10', '1e1', '16.0', ' 16']) {
      const o = await rest(t, key, { method: 'GET', path: `/v1/entities?page_size=${encodeURIComponent(q)}` });
      assert.equal(o.status, 400, q);
      assert.match(o.message, /^page_size: /, q);
    }
    assert.equal((await rest(t, key, { method: 'GET', path: '/v1/entities?page_size=16' })).status, 200);
  });

  test('"value": null is 400 naming the row, and nothing is stored', async () => {
    const o = await rest(t, key, { method: 'POST', path: '/v1/entities/store:h/observations', body: { observations: [{ axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 }, { axis: 'demand', time: '2026-01-02T00:00:00Z', value: null }] } });
    assert.equal(o.status, 400);
    assert.match(o.message, /^observations\[1\]\.value: null is not a value/);
    const list = await rest(t, key, { method: 'GET', path: '/v1/entities/store:h/observations' });
    assert.deepEqual(list.data.observations, []);
    const text = await rest(t, key, { method: 'POST', path: '/v1/entities/store:h/observations', body: { observations: [{ axis: 'demand', time: '2026-01-01T00:00:00Z', value: '0x1' }] } });
    assert.match(text.message, /^observations\[0\]\.value: expected a decimal number/);
    const message = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:h', horizon: null } });
    assert.match(message.message, /^horizon: null is not a value/);
  });

  test('HEAD on a GET route answers as GET without a body', async () => {
    const get = await fetch(`${t.baseUrl}/v1/entities/store:h`, { headers: { authorization: `Bearer ${key}` } });
    const head = await fetch(`${t.baseUrl}/v1/entities/store:h`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal(head.headers.get('content-length'), get.headers.get('content-length'));
    assert.match(head.headers.get('request-id') ?? '', /^req_/);
    const version = await fetch(`${t.baseUrl}/v1/version`, { method: 'HEAD' });
    assert.equal(version.status, 200);
    const put = await fetch(`${t.baseUrl}/v1/version`, { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET, HEAD');
  });

  test('broken HTTP framing and an over-long path get the error body', async () => {
    const port = t.service.httpPort;
    const garbage = await raw(port, 'GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(garbage, /^HTTP\/1\.1 400 /);
    assert.equal(bodyOf(garbage).code, 'invalid_argument');
    assert.match(bodyOf(garbage).request_id, /^req_/);
    const badLength = await raw(port, 'POST /v1/entities HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    assert.equal(bodyOf(badLength).code, 'invalid_argument');
    const long = await raw(port, `GET /v1/entities/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(long, /^HTTP\/1\.1 400 /);
    assert.match(bodyOf(long).message, /exceed the 16 KiB limit/);
  });

  test('/openapi.json and the site carry Request-Id and API-Version', async () => {
    for (const path of ['/openapi.json', '/', '/assets/styles.css']) {
      const res = await fetch(t.baseUrl + path);
      assert.match(res.headers.get('request-id') ?? '', /^req_/, path);
      assert.equal(res.headers.get('api-version'), '1.0.0', path);
    }
  });
});

describe('caching', () => {
  test('API answers are Cache-Control: no-store (a new key, account data, errors); the public JWKS may be cached; site assets keep their max-age', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const admin = (await t.account('enterprise', SCOPES)).key;
    const created = await fetch(`${t.baseUrl}/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'cached?' }) });
    assert.equal(created.status, 200);
    assert.match(((await created.json()) as { api_key: string }).api_key, /^fk_/);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    for (const [path, status] of [['/v1/account', 200], ['/v1/entities/store:h', 200], ['/v1/entities/store:nope', 404]] as const) {
      const res = await fetch(t.baseUrl + path, { headers: auth });
      assert.equal(res.status, status, path);
      assert.equal(res.headers.get('cache-control'), 'no-store', path);
    }
    assert.equal((await fetch(`${t.baseUrl}/v1/account`)).headers.get('cache-control'), 'no-store', 'a 401 too');
    assert.match((await fetch(`${t.baseUrl}/v1/manifests/keys`)).headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
    assert.match((await fetch(`${t.baseUrl}/assets/styles.css`)).headers.get('cache-control') ?? '', /max-age=3600/);
  });

  test('an error of the public JWKS is no-store, not its public max-age: a shared cache must not serve a database outage for minutes', async () => {
    const keys = t.service.ctx.signingKeys;
    const list = keys.list;
    keys.list = async () => {
      throw new DatabaseUnavailableError('unreachable', new Error('connection refused'));
    };
    try {
      const res = await fetch(`${t.baseUrl}/v1/manifests/keys`);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('cache-control'), 'no-store');
    } finally {
      keys.list = list;
    }
    assert.match((await fetch(`${t.baseUrl}/v1/manifests/keys`)).headers.get('cache-control') ?? '', /^public, max-age=\d+$/);
  });

  test('errors answered before any route runs are no-store too: no route (404), a method a route does not take (405), a path that does not decode (400)', async () => {
    const auth = { authorization: `Bearer ${key}` };
    for (const [path, method, status] of [['/v1/nosuch', 'GET', 404], ['/v1/account', 'DELETE', 405], ['/v1/entities/%E0%A4%A', 'GET', 400]] as const) {
      const res = await fetch(t.baseUrl + path, { method, headers: auth });
      assert.equal(res.status, status, path);
      assert.equal(res.headers.get('cache-control'), 'no-store', `${method} ${path}`);
    }
  });
});

describe('Express middleware in front of the API', () => {
  test('CORS: a listed origin gets its preflight answered and may read the answer headers; others get nothing', async () => {
    const preflight = await fetch(`${t.baseUrl}/v1/entities`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,idempotency-key' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://app.example');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
    const get = await fetch(`${t.baseUrl}/v1/version`, { headers: { origin: 'http://app.example' } });
    assert.equal(get.headers.get('access-control-allow-origin'), 'http://app.example');
    assert.match(get.headers.get('access-control-expose-headers') ?? '', /request-id/);
    const other = await fetch(`${t.baseUrl}/v1/version`, { headers: { origin: 'http://evil.example' } });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });

  test('security headers, operator middleware and compression', async () => {
    const res = await fetch(`${t.baseUrl}/v1/version`);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(res.headers.get('x-operator'), 'yes');
    const home = await fetch(`${t.baseUrl}/`);
    assert.equal(home.headers.get('x-frame-options'), 'SAMEORIGIN', 'the site gets helmet’s full set');
    assert.match(home.headers.get('content-security-policy') ?? '', /script-src 'self'/, 'and the page its own policy');
    const doc = await fetch(`${t.baseUrl}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(doc.headers.get('content-encoding'), 'gzip');
    assert.equal(((await doc.json()) as { openapi: string }).openapi, '3.1.0', 'fetch inflates it');
  });

  test('CORS_ORIGINS=* allows any origin, never with credentials; no compression by default; bad settings are refused', async () => {
    const any = await startTestService({ env: { CORS_ORIGINS: '*' } });
    try {
      const res = await fetch(`${any.baseUrl}/openapi.json`, { headers: { origin: 'http://whoever.example', 'accept-encoding': 'gzip' } });
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('access-control-allow-credentials'), null);
      assert.equal(res.headers.get('content-encoding'), null);
    } finally {
      await any.close();
    }
    const none = await fetch(`${t.baseUrl}/v1/version`, { headers: { origin: 'http://app.example' } });
    assert.ok(none.headers.get('access-control-allow-origin'));
    assert.throws(() => loadConfig({ CORS_ORIGINS: 'http://app.example/path' }), /CORS_ORIGINS/);
    assert.throws(() => loadConfig({ CORS_ORIGINS: 'app.example' }), /CORS_ORIGINS/);
    assert.throws(() => loadConfig({ COMPRESSION: 'maybe' }), /COMPRESSION/);
    for (const bad of ['javascript:alert(1)', 'ftp://files.example', 'https://u:p@api.example', 'https://api.example/?x=1', 'https://api.example/#top', 'api.example']) {
      assert.throws(() => loadConfig({ PUBLIC_BASE_URL: bad }), /PUBLIC_BASE_URL/, bad);
    }
    // refused without repeating a password given in it into the log
    assert.throws(() => loadConfig({ PUBLIC_BASE_URL: 'https://ops:hunter2@api.example/v1' }), (err: Error) => /PUBLIC_BASE_URL.*"https:\/\/\*\*\*@api\.example\/v1"/.test(err.message) && !err.message.includes('hunter2'));
    assert.equal(loadConfig({ PUBLIC_BASE_URL: 'https://api.example/forecast' }).publicBaseUrl, 'https://api.example/forecast');
    assert.deepEqual(loadConfig({}).corsOrigins, []);
  });
});

describe('dot-segments sent as written (a client that does not resolve them, e.g. curl --path-as-is)', () => {
  /** One request with the path exactly as given (node:http does not normalise it). */
  const send = (method: string, path: string) =>
    raw(t.service.httpPort, `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`).then((answer) => ({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)![1]),
      body: bodyOf(answer),
    }));

  test('in a path variable they are the value itself: 400 naming the field, never another route', async () => {
    const victim = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:victim', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    assert.equal(victim.code, 'ok', victim.message);
    for (const dots of ['%2E%2E', '%2e%2e', '..', '%2E', '.']) {
      const del = await send('DELETE', `/v1/relations/${dots}/entities/sku:victim`);
      assert.deepEqual([del.status, del.body.code], [400, 'invalid_argument'], JSON.stringify(del.body));
      const sub = await send('GET', `/v1/subscriptions/${dots}`);
      assert.deepEqual([sub.status, sub.body.code, sub.body.details?.field], [400, 'invalid_argument', 'subscription_id']);
      const entity = await send('GET', `/v1/entities/${dots}`);
      assert.deepEqual([entity.status, entity.body.details?.field], [400, 'entity']);
    }
    const kind = await send('DELETE', '/v1/relations/%2E%2E/store:h/sku:victim');
    assert.deepEqual([kind.status, kind.body.details?.field], [400, 'kind']);
    const still = await rest(t, key, { method: 'GET', path: '/v1/entities/sku:victim' });
    assert.equal(still.code, 'ok', 'the entity survives');
  });

  test('in place of a literal they match no route: 404', async () => {
    for (const path of ['/v1/%2E%2E/v1/version', '/v1/entities/%2E%2E/version', '/v1/%2E/version', '/v1/./version']) {
      const r = await send('GET', path);
      assert.deepEqual([r.status, r.body.code], [404, 'not_found'], path);
    }
  });
});
