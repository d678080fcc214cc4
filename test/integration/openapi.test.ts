/** The OpenAPI document is generated from the route table: every route, with parameters, bodies and comments. */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
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
  const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
  assert.ok(refs.length > 10);
  for (const r of refs) {
    const name = r.slice('"$ref":"#/components/schemas/'.length, -1);
    assert.ok(doc.components.schemas[name], name);
  }
});
