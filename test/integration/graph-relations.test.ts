/**
 * Relations as a resource over both protocols: any kind, list by parent/child/kind with keyset
 * paging, delete, cycles of one kind refused (also when two requests race), tenancy, scopes,
 * bad input named.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { collectPages, nextCursor } from '../helpers/graph-pages';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let client: EntityServiceClient;
let key: string;
let otherKey: string;
let readOnlyKey: string;

beforeAll(async () => {
  t = await startTestService();
  client = t.client(EntityServiceClient);
  key = (await t.account('enterprise')).key;
  otherKey = (await t.account('enterprise')).key;
  readOnlyKey = (await t.account('enterprise', ['forecast:read'])).key;
  for (const e of ['region:r', 'store:a', 'store:b', 'sku:x', 'sku:y', 'sku:z', 'supplier:s']) {
    const o = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: e, frequency: 'P1D' } });
    assert.equal(o.code, 'ok', o.message);
  }
});
afterAll(() => t.close());

type Protocol = 'rest' | 'grpc';

function create(protocol: Protocol, parent: string, child: string, kind = '', k = key): Promise<Outcome> {
  if (protocol === 'rest') return rest(t, k, { method: 'POST', path: '/v1/relations', body: kind ? { parent, child, kind } : { parent, child } });
  return grpcCall(client, client.createRelation, k, { parent, child, kind });
}

function list(protocol: Protocol, filter: { parent?: string; child?: string; kind?: string }, pageSize = 0, cursor = '', k = key): Promise<Outcome> {
  if (protocol === 'rest') {
    const qs = new URLSearchParams({ ...filter, ...(pageSize ? { page_size: String(pageSize) } : {}), ...(cursor ? { cursor } : {}) }).toString();
    return rest(t, k, { method: 'GET', path: `/v1/relations${qs ? '?' + qs : ''}` });
  }
  return grpcCall(client, client.listRelations, k, { parent: filter.parent ?? '', child: filter.child ?? '', kind: filter.kind ?? '', pageSize, cursor });
}

function remove(protocol: Protocol, kind: string, parent: string, child: string, k = key): Promise<Outcome> {
  if (protocol === 'rest') return rest(t, k, { method: 'DELETE', path: `/v1/relations/${kind}/${parent}/${child}` });
  return grpcCall(client, client.deleteRelation, k, { kind, parent, child });
}

const triple = (r: any) => `${r.parent} ${r.kind} ${r.child}`;

const listAll = (protocol: Protocol, filter: { parent?: string; child?: string; kind?: string }, pageSize: number): Promise<string[]> =>
  collectPages((cursor) => list(protocol, filter, pageSize, cursor), (o) => o.data.relations.map(triple), pageSize);

describe('relations', () => {
  test('any kind can be created; contains is the default; creating again returns the same relation', async () => {
    for (const [p, c, kind, protocol] of [
      ['region:r', 'store:a', '', 'rest'],
      ['region:r', 'store:b', 'contains', 'grpc'],
      ['store:a', 'sku:x', '', 'grpc'],
      ['store:a', 'sku:y', '', 'rest'],
      ['store:b', 'sku:y', '', 'rest'],
      ['store:b', 'sku:z', '', 'grpc'],
      ['supplier:s', 'store:a', 'supplies', 'rest'],
      ['supplier:s', 'store:b', 'supplies', 'grpc'],
    ] as const) {
      const o = await create(protocol, p, c, kind);
      assert.equal(o.code, 'ok', o.message);
      const rel = protocol === 'rest' ? o.data : o.data.relation;
      assert.equal(triple(rel), `${p} ${kind || 'contains'} ${c}`);
    }
    const again = await create('rest', 'supplier:s', 'store:a', 'supplies');
    assert.equal(again.code, 'ok');
    // a contains edge the other way is not a cycle of `supplies`, and the reverse supplies edge is
    assert.equal((await create('grpc', 'store:a', 'supplier:s', 'contains')).code, 'ok');
    assert.equal((await remove('grpc', 'contains', 'store:a', 'supplier:s')).code, 'ok');
    const reverse = await create('rest', 'store:b', 'supplier:s', 'supplies');
    assert.equal(reverse.code, 'invalid_argument');
    assert.match(reverse.message, /^child: .*cycle/);
  });

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: list by parent, child and kind, keyset-paginated`, async () => {
      const all = await listAll(protocol, {}, 3);
      assert.deepEqual(all, [
        'region:r contains store:a',
        'region:r contains store:b',
        'store:a contains sku:x',
        'store:a contains sku:y',
        'store:b contains sku:y',
        'store:b contains sku:z',
        'supplier:s supplies store:a',
        'supplier:s supplies store:b',
      ]);
      assert.deepEqual(await listAll(protocol, { parent: 'store:b' }, 1), ['store:b contains sku:y', 'store:b contains sku:z']);
      assert.deepEqual(await listAll(protocol, { child: 'sku:y' }, 200), ['store:a contains sku:y', 'store:b contains sku:y']);
      assert.deepEqual(await listAll(protocol, { kind: 'supplies' }, 1), ['supplier:s supplies store:a', 'supplier:s supplies store:b']);
      assert.deepEqual(await listAll(protocol, { child: 'store:a', kind: 'contains' }, 5), ['region:r contains store:a']);
      // a cursor belongs to its query
      const first = await list(protocol, { kind: 'contains' }, 2);
      const wrong = await list(protocol, { kind: 'supplies' }, 2, nextCursor(first));
      assert.equal(wrong.code, 'invalid_cursor');
    });
  }

  test('relations created during a walk: earlier pages never repeat, later ones appear once', async () => {
    const before = await listAll('rest', {}, 200);
    const page = await list('rest', {}, 3);
    await create('rest', 'region:r', 'sku:z', 'related'); // sorts before the cursor: not seen by this walk
    await create('rest', 'supplier:s', 'sku:z', 'related'); // sorts after it: seen once
    const after = await list('rest', {}, 200, nextCursor(page));
    const seen = [...page.data.relations.map(triple), ...after.data.relations.map(triple)];
    assert.deepEqual(seen, [...before.slice(0, 6), 'supplier:s related sku:z', ...before.slice(6)]);
    assert.equal((await remove('rest', 'related', 'region:r', 'sku:z')).code, 'ok');
    assert.equal((await remove('rest', 'related', 'supplier:s', 'sku:z')).code, 'ok');
  });

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: delete, then 404; tenancy; scopes; bad input named`, async () => {
      assert.equal((await create(protocol, 'sku:x', 'sku:z', 'substitutes')).code, 'ok');
      const del = await remove(protocol, 'substitutes', 'sku:x', 'sku:z');
      assert.equal(del.code, 'ok', del.message);
      assert.equal(del.data.deleted, true);
      assert.equal(triple(del.data.relation), 'sku:x substitutes sku:z');
      assert.equal((await remove(protocol, 'substitutes', 'sku:x', 'sku:z')).code, 'not_found');
      // another account sees nothing: 404 for its entities as filters and for its relations
      assert.equal((await list(protocol, { parent: 'region:r' }, 0, '', otherKey)).code, 'not_found');
      assert.equal((await remove(protocol, 'contains', 'region:r', 'store:a', otherKey)).code, 'not_found');
      const foreign = await create(protocol, 'region:r', 'store:a', 'contains', otherKey);
      assert.equal(foreign.code, 'invalid_argument');
      assert.match(foreign.message, /^parent: /);
      assert.deepEqual((await list(protocol, {}, 0, '', otherKey)).data.relations, []);
      // scopes: writes need data:write, reads forecast:read
      assert.equal((await create(protocol, 'sku:x', 'sku:z', 'similar', readOnlyKey)).code, 'permission_denied');
      assert.equal((await remove(protocol, 'contains', 'region:r', 'store:a', readOnlyKey)).code, 'permission_denied');
      assert.equal((await list(protocol, {}, 0, '', readOnlyKey)).code, 'ok');
      for (const [o, field] of [
        [await create(protocol, 'region:r', 'store:a', 'Bad-Kind'), 'kind'],
        [await create(protocol, 'region:r', 'store:a', 'x'.repeat(33)), 'kind'],
        [await create(protocol, 'region:r', 'region:r'), 'child'],
        [await create(protocol, 'nope', 'store:a'), 'parent'],
        [await create(protocol, 'region:r', 'sku:missing'), 'child'],
        [await list(protocol, { kind: '9' }), 'kind'],
        [await list(protocol, { child: 'bad id' }), 'child'],
        [await list(protocol, {}, -1), 'page_size'],
        [await remove(protocol, 'Contains', 'region:r', 'store:a'), 'kind'],
      ] as const) {
        assert.equal(o.code, 'invalid_argument', `${field}: ${o.code} ${o.message}`);
        assert.ok(o.message.startsWith(`${field}: `), o.message);
      }
      assert.equal((await list(protocol, {}, 0, 'garbage')).code, 'invalid_cursor');
      // nothing half-written
      assert.deepEqual(await listAll(protocol, { parent: 'sku:x' }, 200), []);
    });
  }

  test('two requests racing to close a cycle: exactly one edge is created', async () => {
    await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'node:p', frequency: 'P1D' } });
    await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'node:q', frequency: 'P1D' } });
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([create('rest', 'node:p', 'node:q', 'feeds'), create('grpc', 'node:q', 'node:p', 'feeds')]);
      assert.deepEqual([a.code, b.code].sort(), ['invalid_argument', 'ok']);
      const edges = await listAll('rest', { kind: 'feeds' }, 200);
      assert.equal(edges.length, 1);
      const [p, , c] = edges[0].split(' ');
      assert.equal((await remove('rest', 'feeds', p, c)).code, 'ok');
    }
  });
});
