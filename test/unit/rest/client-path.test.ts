/**
 * How the generated REST client (gen/rest_runtime.ts) writes path parameters: a value never
 * leaves its segment. Reserved characters are percent-encoded; `.` and `..` (which URL parsers
 * resolve in every spelling, `%2E` and `%2E%2E` included) and empty values are refused before
 * anything is sent. Runs against a recording fetch, no server (rest-client.test.ts has the
 * integration side).
 */
import { describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { createRestClients, ApiError } from '../../../gen/rest_clients';
import { RestClient, field, message, type MethodSpec } from '../../../gen/rest_runtime';

/** Clients whose fetch records each URL (as fetch would parse it) and answers `{}`. */
function recording() {
  const urls: string[] = [];
  const fetchFn = async (url: string) => {
    urls.push(url);
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { urls, clients: createRestClients({ baseUrl: 'http://api.test', apiKey: 'k', fetch: fetchFn }) };
}

/** The pathname fetch would send for a URL (WHATWG URL parsing resolves dot-segments). */
const sentPath = (url: string) => new URL(url).pathname;

async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
  assert.deepEqual([err.code, err.status], ['invalid_argument', 0]);
  return err;
}

describe('a path parameter stays in its segment', () => {
  test('"." and ".." are refused for every path parameter, nothing is sent', async () => {
    const { urls, clients } = recording();
    const { entityService, subscriptionService } = clients;
    for (const dots of ['.', '..']) {
      const a = await refusal(entityService.deleteRelation({ kind: dots, parent: 'entities', child: 'sku:victim' }));
      assert.match(a.message, /^kind: "\.{1,2}" cannot be part of the URL path \/v1\/relations\/\{kind\}\/\{parent\}\/\{child\}/);
      await refusal(entityService.deleteRelation({ kind: 'contains', parent: dots, child: 'sku:victim' }));
      await refusal(entityService.deleteRelation({ kind: 'contains', parent: 'sku:a', child: dots }));
      const b = await refusal(subscriptionService.getSubscription({ subscriptionId: dots }));
      assert.match(b.message, /^subscription_id: /);
      await refusal(subscriptionService.listDeliveries({ subscriptionId: dots }));
      await refusal(entityService.deleteEntity({ entity: dots }));
    }
    assert.deepEqual(urls, []);
  });

  test('an empty path parameter is refused rather than sent as `//`', async () => {
    const { urls, clients } = recording();
    const err = await refusal(clients.entityService.deleteRelation({ kind: 'contains', parent: '', child: 'sku:b' }));
    assert.match(err.message, /^parent: required \(it is part of the URL path/);
    await refusal(clients.subscriptionService.getSubscription({ subscriptionId: '' }));
    assert.deepEqual(urls, []);
  });

  test('`/`, `?`, `#`, `%`, `:` and spaces are percent-encoded; the parsed path is the one written', async () => {
    const { urls, clients } = recording();
    await clients.entityService.getEntity({ entity: 'a/../b?c=1#d%2E%e f:g' });
    assert.equal(urls[0], 'http://api.test/v1/entities/a%2F..%2Fb%3Fc%3D1%23d%252E%25e%20f%3Ag');
    assert.equal(sentPath(urls[0]), '/v1/entities/a%2F..%2Fb%3Fc%3D1%23d%252E%25e%20f%3Ag');
    await clients.entityService.deleteRelation({ kind: 'contains', parent: '%2E%2E', child: 'sku:b' });
    assert.equal(sentPath(urls[1]), '/v1/relations/contains/%252E%252E/sku%3Ab', 'a literal "%2E%2E" is a value, sent as such');
  });

  test('dots that are not a whole segment pass unchanged', async () => {
    const { urls, clients } = recording();
    for (const id of ['...', '.a', 'a.', 'sku:a.b', 'x:..']) await clients.entityService.getEntity({ entity: id });
    assert.deepEqual(urls.map(sentPath), ['/v1/entities/...', '/v1/entities/.a', '/v1/entities/a.', '/v1/entities/sku%3Aa.b', '/v1/entities/x%3A..']);
  });

  test('a lone surrogate is refused as invalid_argument, not a URIError', async () => {
    const { urls, clients } = recording();
    const err = await refusal(clients.entityService.getEntity({ entity: 'sku:\uD800' }));
    assert.match(err.message, /^entity: the value is not well-formed UTF-16/);
    assert.deepEqual(urls, []);
  });

  test('a multi-segment (`**`) parameter keeps its `/` but refuses a dot-segment anywhere in it', async () => {
    // No method of this API has a `**` variable yet: a hand-written spec of the generated shape.
    const Req = message<{ name: string }>('t.Req', { name: field('name', 'string') });
    const Res = message<Record<string, never>>('t.Res', {});
    const spec: MethodSpec = { name: 'Get', method: 'get', verb: 'GET', template: '/v1/{name=files/**}', path: ['/v1/', { field: 'name', multi: true }], body: '', responseBody: '', input: Req, output: Res };
    const urls: string[] = [];
    class Files extends RestClient {
      get(name: string) {
        return this.unary(spec, { name });
      }
    }
    const files = new Files({ baseUrl: 'http://api.test', fetch: async (url: string) => (urls.push(url), new Response('{}')) });
    await files.get('files/a b/c?d');
    assert.equal(sentPath(urls[0]), '/v1/files/a%20b/c%3Fd');
    for (const bad of ['files/../x', 'files/.', '../files/x', 'files/a/..']) {
      const err = await refusal(files.get(bad));
      assert.match(err.message, /^name: "\.{1,2}" cannot be part of the URL path/);
    }
    assert.equal(urls.length, 1);
  });
});
