/**
 * The OpenAPI document is generated from the route table: every route, with parameters, bodies,
 * comments, required fields, error statuses, the protocol headers (Idempotency-Key on the methods
 * that take one; Request-Id, API-Version, RateLimit, Idempotent-Replayed… on responses, checked
 * against live answers); and @redocly/cli lint passes it clean (offline).
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/files';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let doc: any;

beforeAll(async () => {
  t = await startTestService();
  const res = await fetch(`${t.baseUrl}/openapi.json`);
  assert.equal(res.status, 200);
  doc = await res.json();
});
afterAll(() => t.close());

test('every compiled route is a documented operation', () => {
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '1.0.0');
  for (const r of t.service.routes.routes) {
    const op = doc.paths[r.template.template]?.[r.httpMethod.toLowerCase()];
    assert.ok(op, `${r.httpMethod} ${r.template.template}`);
    assert.ok(op.description && op.description.length > 10, `${r.entry.name} has its proto comment`);
  }
});

test('path and query parameters, bodies and response bodies follow the annotations', () => {
  const get = doc.paths['/v1/entities/{entity}'].get;
  assert.deepEqual(get.parameters.map((p: any) => [p.name, p.in]), [['entity', 'path']]);
  assert.equal(get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/forecast.v1.Entity');
  const list = doc.paths['/v1/entities'].get;
  assert.deepEqual(list.parameters.map((p: any) => p.name).sort(), ['cursor', 'page_size', 'type']);
  const query = doc.paths['/v1/oracle/query'].post;
  assert.ok(query.requestBody.content['application/json'].schema.properties.horizon.description.includes('1..1000'));
  const ingest = doc.paths['/v1/entities/{entity}/observations'].post;
  assert.equal(ingest.requestBody.content['application/json'].schema.properties.entity, undefined, 'path fields are not in the body');
  assert.ok(doc.paths['/v1/observations:bulkIngest'].post.requestBody.content['application/x-ndjson']);
  assert.deepEqual(doc.paths['/v1/version'].get.security, [], 'public methods need no key');
  assert.equal(doc.paths['/v1/account'].get.security, undefined);
});

test('every $ref resolves', () => {
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)];
  assert.ok(refs.filter((r) => r[1] === 'schemas').length > 10);
  assert.ok(refs.some((r) => r[1] === 'headers') && refs.some((r) => r[1] === 'parameters'));
  for (const [, kind, name] of refs) assert.ok(doc.components[kind]?.[name], `${kind}/${name}`);
});

test('required fields (google.api.field_behavior) are in the required lists; output-only ones are read-only', () => {
  const create = doc.paths['/v1/entities'].post.requestBody.content['application/json'].schema;
  assert.deepEqual(create.required, ['entity']);
  const ingest = doc.paths['/v1/entities/{entity}/observations'].post.requestBody.content['application/json'].schema;
  assert.deepEqual(ingest.required, ['observations'], 'the path field is neither in the body nor in its required list');
  const observation = doc.components.schemas['forecast.v1.Observation'];
  assert.deepEqual(observation.required, ['axis', 'time', 'value']);
  assert.equal(observation.properties.revision.readOnly, true);
  assert.equal(doc.components.schemas['forecast.v1.Entity'].properties.create_time.readOnly, true);
});

test('every operation lists the error statuses it can answer, with the error body', () => {
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).filter((s) => s !== '200');
  assert.deepEqual(statuses('/v1/version', 'get'), ['400', '500', '503', '504'], 'a public read needs no key and counts against no quota');
  assert.deepEqual(statuses('/v1/entities/{entity}', 'get'), ['400', '401', '403', '404', '429', '500', '503', '504']);
  assert.deepEqual(statuses('/v1/signup', 'post'), ['400', '409', '413', '415', '422', '429', '500', '503', '504']);
  // answered even over quota: no 429 (found by QA: it was listed)
  assert.deepEqual(statuses('/v1/account', 'get'), ['400', '401', '500', '503', '504']);
  assert.ok(statuses('/v1/oracle/query', 'post').includes('422'), 'insufficient_data, named in the method comment');
  assert.ok(statuses('/v1/oracle/query', 'post').includes('404'));
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (status === '200') continue;
        assert.equal(response.content['application/json'].schema.$ref, '#/components/schemas/Error', `${method} ${path} ${status}`);
        assert.ok(response.headers['Request-Id'], `${method} ${path} ${status}`);
      }
      assert.ok(op.responses['429'] === undefined || op.responses['429'].headers['Retry-After']);
    }
  }
});

/** A response's header names, with `$ref`s to `components/headers` resolved. */
const headerNames = (response: any): string[] => Object.keys(response.headers ?? {});
const resolve = (x: any, kind: 'headers' | 'parameters'): any => (x?.$ref ? doc.components[kind][x.$ref.split('/').pop()] : x);

test('Idempotency-Key is a header parameter of exactly the methods that take one, as the server decides (every POST)', () => {
  const idempotent = t.service.routes.idempotentMethods;
  assert.ok(idempotent.size > 10);
  for (const r of t.service.routes.routes) {
    const op = doc.paths[r.template.template][r.httpMethod.toLowerCase()];
    const params = op.parameters.map((p: any) => resolve(p, 'parameters')).filter((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
    assert.equal(params.length, idempotent.has(r.entry.path) ? 1 : 0, `${r.httpMethod} ${r.template.template}`);
    assert.equal(idempotent.has(r.entry.path), r.httpMethod === 'POST', `${r.httpMethod} ${r.template.template}`);
    if (params.length === 0) continue;
    const [p] = params;
    assert.equal(p.required, false);
    assert.equal(p.schema.maxLength, 255);
    // a method without an API key (SignUp): the key alone guards the replay, so it must be long
    assert.equal(p.schema.minLength, r.entry.endpoint.access === 'public' ? 16 : 1, r.entry.name);
  }
  assert.equal(resolve(doc.paths['/v1/signup'].post.parameters[0], 'parameters').schema.minLength, 16);
});

test('responses declare the protocol headers: Request-Id and API-Version always, RateLimit and RateLimit-Policy whenever the key is known, Idempotent-Replayed where a stored answer can come back', () => {
  for (const name of ['RequestId', 'APIVersion', 'RateLimit', 'RateLimitPolicy', 'RetryAfter', 'IdempotentReplayed', 'WWWAuthenticate']) {
    assert.ok(doc.components.headers[name]?.schema, name);
  }
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const takesKey = op.parameters.some((p: any) => resolve(p, 'parameters').name === 'Idempotency-Key');
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const names = headerNames(response);
        const at = `${method} ${path} ${status}`;
        for (const n of ['Request-Id', 'API-Version']) assert.equal(resolve(response.headers[n], 'headers').required, true, `${at} ${n}`);
        assert.equal(names.includes('RateLimit') && names.includes('RateLimit-Policy'), status !== '401', at);
        if (status === '200') assert.equal(names.includes('Idempotent-Replayed'), takesKey, at);
        if (!takesKey) assert.ok(!names.includes('Idempotent-Replayed'), at);
        if (['401', '403', '413', '415', '429', '500', '503', '504'].includes(status)) assert.ok(!names.includes('Idempotent-Replayed'), `${at}: never stored, never replayed`);
      }
    }
  }
  const create = doc.paths['/v1/entities'].post.responses;
  assert.ok(headerNames(create['409']).includes('Idempotent-Replayed'), 'already_exists is stored and replayed');
  assert.deepEqual(headerNames(doc.paths['/v1/entities'].get.responses['429']), ['Request-Id', 'API-Version', 'RateLimit', 'RateLimit-Policy', 'Retry-After']);
});

test('what the server sends on a call is what the document declares: headers of live answers (REST)', async () => {
  const { key } = await t.account('free');
  const calls: [string, string, Record<string, string>, unknown, string][] = [
    ['GET', '/v1/version', { authorization: `Bearer ${key}` }, undefined, '200'],
    ['GET', '/v1/account', { authorization: `Bearer ${key}` }, undefined, '200'],
    ['GET', '/v1/entities/store:nowhere', { authorization: `Bearer ${key}` }, undefined, '404'],
    ['GET', '/v1/entities', {}, undefined, '401'],
    ['POST', '/v1/entities', { authorization: `Bearer ${key}`, 'idempotency-key': 'doc-1' }, { entity: 'store:doc', frequency: 'P1D', axes: [{ name: 'demand' }] }, '200'],
    ['POST', '/v1/entities', { authorization: `Bearer ${key}`, 'idempotency-key': 'doc-1' }, { entity: 'store:doc', frequency: 'P1D', axes: [{ name: 'demand' }] }, '200'],
  ];
  const protocol = ['request-id', 'api-version', 'ratelimit', 'ratelimit-policy', 'retry-after', 'idempotent-replayed', 'www-authenticate'];
  let replayed = false;
  for (const [method, path, headers, body, status] of calls) {
    const res = await fetch(t.baseUrl + path, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    await res.text();
    assert.equal(String(res.status), status, `${method} ${path}`);
    const template = path === '/v1/entities/store:nowhere' ? '/v1/entities/{entity}' : path;
    const declared = headerNames(doc.paths[template][method.toLowerCase()].responses[status]).map((n) => n.toLowerCase());
    const sent = protocol.filter((h) => res.headers.has(h));
    assert.ok(sent.includes('api-version') && sent.includes('request-id'), `${method} ${path}`);
    for (const h of sent) assert.ok(declared.includes(h), `${method} ${path} ${status} sends ${h}, which its OpenAPI response does not declare`);
    replayed ||= res.headers.get('idempotent-replayed') === 'true';
  }
  assert.ok(replayed, 'the second POST was a replay');
});

test('servers, license, contact and tagged services', () => {
  assert.deepEqual(doc.servers, [{ url: '/', description: 'This service' }]);
  assert.ok(doc.info.license.name && doc.info.license.identifier);
  assert.ok(doc.info.contact.email);
  assert.deepEqual(doc.tags.map((tag: any) => tag.name), ['AccountService', 'EntityService', 'ForensicsService', 'GraphService', 'KeyService', 'ManifestService', 'OracleService', 'SubscriptionService']);
  for (const tag of doc.tags) assert.ok(tag.description.length > 20, tag.name);
});

test('@redocly/cli lint (recommended-strict, redocly.yaml) finds no error and no warning', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const run = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'redocly'), ['lint', file, '--config', join(REPO_ROOT, 'redocly.yaml'), '--format=json'], {
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    timeout: 120_000,
  });
  rmSync(dir, { recursive: true, force: true });
  const report = JSON.parse(run.stdout);
  assert.deepEqual(report.problems, [], JSON.stringify(report.problems, null, 1).slice(0, 2000));
  assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 });
  assert.equal(run.status, 0, run.stderr);
});
