/**
 * Entities, observations and relations over both protocols: create/get/list/delete, all-or-nothing
 * ingest, corrections with as-of reads, pagination, bulk ingest, relations and cycles.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import { EntityServiceClient, type BulkIngestObservationsRequest, type BulkIngestObservationsResponse } from '../../gen/forecast/v1/entity_service.pb';
import { startTestService, type TestService } from '../helpers/service';
import { grpcCall, rest, type Outcome } from '../helpers/dual';

let t: TestService;
let client: EntityServiceClient;
let key: string;

beforeAll(async () => {
  t = await startTestService();
  client = t.client(EntityServiceClient);
  key = (await t.account('enterprise')).key;
});
afterAll(() => t.close());

const day = (d: number) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString().replace('.000Z', 'Z');

async function createEntity(protocol: 'rest' | 'grpc', entity: string, extra: Record<string, unknown> = {}): Promise<Outcome> {
  const body = { entity, frequency: 'P1D', axes: [{ name: 'demand', unit: 'units', kind: 'count' }, { name: 'revenue', unit: 'EUR' }], ...extra };
  if (protocol === 'rest') return rest(t, key, { method: 'POST', path: '/v1/entities', body });
  return grpcCall(client, client.createEntity, key, {
    entity,
    frequency: (extra.frequency as string) ?? 'P1D',
    displayName: '',
    seasonLength: 0,
    axes: body.axes.map((a: any) => ({ unit: '', kind: '', ...a })),
    parents: (extra.parents as string[]) ?? [],
  });
}

function ingest(protocol: 'rest' | 'grpc', entity: string, observations: { axis: string; time: string; value: number }[]): Promise<Outcome> {
  if (protocol === 'rest') return rest(t, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations } });
  return grpcCall(client, client.ingestObservations, key, { entity, observations: observations.map((o) => ({ ...o, revision: '0' })) });
}

async function listAll(protocol: 'rest' | 'grpc', entity: string, query: Record<string, string> = {}): Promise<any[]> {
  if (protocol === 'rest') {
    const qs = new URLSearchParams(query).toString();
    const o = await rest(t, key, { method: 'GET', path: `/v1/entities/${entity}/observations${qs ? '?' + qs : ''}` });
    assert.equal(o.code, 'ok', o.message);
    return o.data.observations;
  }
  const o = await grpcCall(client, client.listObservations, key, {
    entity,
    axis: query.axis ?? '',
    start: '',
    end: '',
    asOfRevision: query.as_of_revision ?? '0',
    pageSize: Number(query.page_size ?? 0),
    cursor: '',
  });
  assert.equal(o.code, 'ok', o.message);
  return o.data.observations;
}

for (const protocol of ['rest', 'grpc'] as const) {
  describe(`entities over ${protocol}`, () => {
    const e = `store:${protocol}-main`;

    test('create, get (raw and percent-encoded id), defaults applied', async () => {
      const c = await createEntity(protocol, e);
      assert.equal(c.code, 'ok', c.message);
      const entity = protocol === 'rest' ? c.data : c.data.entity;
      assert.equal(entity.entity, e);
      assert.equal(entity.type, 'store');
      assert.equal(protocol === 'rest' ? entity.season_length : entity.seasonLength, 7);
      assert.deepEqual(entity.axes.map((a: any) => [a.name, a.kind]), [['demand', 'count'], ['revenue', 'continuous']]);
      if (protocol === 'rest') {
        for (const path of [`/v1/entities/${e}`, `/v1/entities/${encodeURIComponent(e)}`]) {
          const g = await rest(t, key, { method: 'GET', path });
          assert.equal(g.code, 'ok', `${path}: ${g.message}`);
          assert.equal(g.data.entity, e);
        }
      }
    });

    test('a batch with one bad row stores nothing and names the row', async () => {
      const rows = [
        { axis: 'demand', time: day(0), value: 5 },
        { axis: 'demand', time: day(1), value: 6 },
        { axis: 'demand', time: day(2), value: 2.5 }, // not a count
      ];
      const bad = await ingest(protocol, e, rows);
      assert.equal(bad.code, 'invalid_argument');
      assert.ok(bad.message.includes('observations[2].value'), bad.message);
      assert.deepEqual(await listAll(protocol, e), []);
      for (const [row, field] of [
        [{ axis: 'nope', time: day(0), value: 1 }, 'observations[0].axis'],
        [{ axis: 'demand', time: '2026-01-01T12:00:00Z', value: 1 }, 'observations[0].time'],
        [{ axis: 'demand', time: 'yesterday', value: 1 }, 'observations[0].time'],
      ] as const) {
        const o = await ingest(protocol, e, [row as any]);
        assert.equal(o.code, 'invalid_argument');
        assert.ok(o.message.includes(field), o.message);
      }
      const dup = await ingest(protocol, e, [rows[0], rows[1], rows[0]]);
      assert.ok(dup.message.includes('observations[2]') && dup.message.includes('observations[0]'), dup.message);
      const tooMany = await ingest(protocol, e, Array.from({ length: 10_001 }, (_, i) => ({ axis: 'revenue', time: day(i), value: i })));
      assert.equal(tooMany.code, 'invalid_argument');
      assert.deepEqual(await listAll(protocol, e), []);
    });

    test('corrections supersede, and as-of reads see the data as it was', async () => {
      const first = await ingest(protocol, e, [
        { axis: 'demand', time: day(0), value: 5 },
        { axis: 'demand', time: day(1), value: 6 },
        { axis: 'revenue', time: day(0), value: 50.5 },
      ]);
      assert.equal(first.code, 'ok', first.message);
      assert.equal(first.data.accepted, 3);
      assert.equal(first.data.corrections, 0);
      const rev1 = first.data.revision;
      const second = await ingest(protocol, e, [
        { axis: 'demand', time: day(1), value: 7 },
        { axis: 'demand', time: day(2), value: 8 },
      ]);
      assert.equal(second.data.corrections, 1);
      assert.ok(Number(second.data.revision) > Number(rev1));
      const now = await listAll(protocol, e, { axis: 'demand' });
      assert.deepEqual(now.map((o) => o.value), [5, 7, 8]);
      const then = await listAll(protocol, e, { axis: 'demand', as_of_revision: String(rev1) });
      assert.deepEqual(then.map((o) => o.value), [5, 6]);
      assert.deepEqual(then.map((o) => String(o.revision)), [String(rev1), String(rev1)]);
      const all = await listAll(protocol, e);
      assert.deepEqual(all.map((o) => `${o.axis}@${o.time}`), [`demand@${day(0)}`, `demand@${day(1)}`, `demand@${day(2)}`, `revenue@${day(0)}`]);
    });

    test('frequency cannot change once there is data; axes can be added', async () => {
      const o = await createEntity(protocol, e, { frequency: 'P1W' });
      assert.equal(o.code, 'failed_precondition');
      assert.ok(o.message.includes('frequency'));
      const added = await createEntity(protocol, e, { axes: [{ name: 'visits', kind: 'count' }] });
      assert.equal(added.code, 'ok', added.message);
      const ent = protocol === 'rest' ? added.data : added.data.entity;
      assert.deepEqual(ent.axes.map((a: any) => a.name), ['demand', 'revenue', 'visits']);
    });

    test('an entity has at most 32 axes in all: an update past it is refused and changes nothing (found by QA: 32 at a time made 1,024)', async () => {
      const capped = `store:${protocol}-axes`;
      const axes = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ name: `a${from + i}`, kind: 'count' }));
      assert.equal((await createEntity(protocol, capped, { axes: axes(0, 30) })).code, 'ok');
      const over = await createEntity(protocol, capped, { axes: axes(28, 5), display_name: 'renamed' });
      assert.equal(over.code, 'invalid_argument');
      assert.match(over.message, /^axes: store:\S+ would have 33 axes; an entity has at most 32 \(it has 30\)$/);
      const got = await rest(t, key, { method: 'GET', path: `/v1/entities/${capped}` });
      assert.equal(got.data.axes.length, 30);
      assert.equal(got.data.display_name, '');
      // up to 32, and the existing ones updated, are fine
      const full = await createEntity(protocol, capped, { axes: axes(25, 7) });
      assert.equal(full.code, 'ok', full.message);
      assert.equal((protocol === 'rest' ? full.data : full.data.entity).axes.length, 32);
      assert.equal((await createEntity(protocol, capped, { axes: [{ name: 'a0', unit: 'units', kind: 'count' }] })).code, 'ok');
      assert.equal((await createEntity(protocol, capped, { axes: [{ name: 'a99', kind: 'count' }] })).code, 'invalid_argument');
    });
  });
}

test('three creates of one new entity at once, 20 axes each: it never has more than 32 (found by review: 60 on PostgreSQL)', async () => {
  const { key: k } = await t.account('enterprise');
  for (let round = 0; round < 3; round++) {
    const entity = `store:race${round}`;
    const outcomes = await Promise.all(
      [0, 1, 2].map((j) =>
        rest(t, k, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P1D', axes: Array.from({ length: 20 }, (_, i) => ({ name: `a${j}_${i}` })) } }),
      ),
    );
    assert.equal(outcomes.filter((o) => o.code === 'ok').length, 1, outcomes.map((o) => o.message).join(' | '));
    for (const o of outcomes.filter((x) => x.code !== 'ok')) assert.match(o.message, /^axes: store:race\d would have 40 axes; an entity has at most 32/);
    const got = await rest(t, k, { method: 'GET', path: `/v1/entities/${entity}` });
    assert.equal(got.data.axes.length, 20);
  }
});

test('an entity stored with more than 32 axes (before the cap): a query without axes is refused, naming them is answered', async () => {
  const { accountId, key: k } = await t.account('enterprise');
  const { entities, database } = t.service.ctx;
  await database.transaction(async (trx) => {
    await entities.upsertRow(trx, accountId, { entity: 'legacy:wide', type: 'legacy', displayName: '', frequency: 'P1D', seasonLength: 7 }, 0);
    await entities.upsertAxes(trx, accountId, 'legacy:wide', Array.from({ length: 40 }, (_, i) => ({ name: `a${i}`, unit: '', kind: 'continuous' as const })));
  });
  const observations = Array.from({ length: 30 }, (_, d) => ({ axis: 'a1', time: day(d), value: 10 + (d % 7) }));
  assert.equal((await rest(t, k, { method: 'POST', path: '/v1/entities/legacy:wide/observations', body: { observations } })).code, 'ok');
  const all = await rest(t, k, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'legacy:wide' } });
  assert.equal(all.code, 'invalid_argument');
  assert.equal(all.message, 'axes: entity legacy:wide has 40 axes: name at most 32 of them');
  const named = await rest(t, k, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'legacy:wide', axes: ['a1'] } });
  assert.equal(named.code, 'ok', named.message);
});

describe('pagination', () => {
  beforeAll(async () => {
    for (let i = 0; i < 7; i++) assert.equal((await createEntity('rest', `sku:p${i}`)).code, 'ok');
  });

  test('pages walk the set once, in order, and stop with an empty cursor (both protocols)', async () => {
    const restNames: string[] = [];
    let cursor = '';
    do {
      const o = await rest(t, key, { method: 'GET', path: `/v1/entities?type=sku&page_size=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` });
      assert.equal(o.code, 'ok', o.message);
      assert.ok(o.data.entities.length <= 3);
      restNames.push(...o.data.entities.map((x: any) => x.entity));
      cursor = o.data.next_cursor;
      // an insert during the walk must not duplicate or skip earlier items
      if (restNames.length === 3) await createEntity('rest', 'sku:p0a');
    } while (cursor);
    assert.deepEqual(restNames, ['sku:p0', 'sku:p1', 'sku:p2', 'sku:p3', 'sku:p4', 'sku:p5', 'sku:p6']);
    const grpcNames: string[] = [];
    cursor = '';
    do {
      const o = await grpcCall(client, client.listEntities, key, { type: 'sku', pageSize: 3, cursor });
      grpcNames.push(...o.data.entities.map((x: any) => x.entity));
      cursor = o.data.nextCursor;
    } while (cursor);
    assert.deepEqual(grpcNames, ['sku:p0', 'sku:p0a', 'sku:p1', 'sku:p2', 'sku:p3', 'sku:p4', 'sku:p5', 'sku:p6']);
  });

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: a tampered cursor, junk after its signature, or one from another query or account is 400 invalid_cursor`, async () => {
      const list = (apiKey: string, type: string, cursor: string) =>
        protocol === 'rest'
          ? rest(t, apiKey, { method: 'GET', path: `/v1/entities?type=${type}&page_size=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` })
          : grpcCall(client, client.listEntities, apiKey, { type, pageSize: 2, cursor });
      const first = await list(key, 'sku', '');
      const cursor: string = protocol === 'rest' ? first.data.next_cursor : first.data.nextCursor;
      assert.ok(cursor);
      const four = protocol === 'rest' ? await rest(t, key, { method: 'GET', path: '/v1/entities?type=sku&page_size=4' }) : await grpcCall(client, client.listEntities, key, { type: 'sku', pageSize: 4, cursor: '' });
      const second = await list(key, 'sku', cursor);
      assert.deepEqual(second.data.entities.map((x: any) => x.entity), four.data.entities.slice(2).map((x: any) => x.entity), 'the cursor itself works');
      const tampered = cursor.slice(0, 3) + (cursor[3] === 'A' ? 'B' : 'A') + cursor.slice(4);
      const other = (await t.account()).key;
      const cases: [string, Outcome][] = [
        ['tampered', await list(key, 'sku', tampered)],
        ['junk after the signature', await list(key, 'sku', `${cursor}!!`)],
        ['a character after the signature', await list(key, 'sku', `${cursor}A`)],
        ['another query', await list(key, 'store', cursor)],
        ['another account', await list(other, 'sku', cursor)],
      ];
      for (const [what, o] of cases) {
        assert.equal(o.code, 'invalid_cursor', what);
        assert.equal(o.status, protocol === 'rest' ? 400 : grpc.status.INVALID_ARGUMENT, what);
      }
    });
  }
});

describe('page sizes', () => {
  let pageKey: string;
  beforeAll(async () => {
    // 205 entities, written straight through the store (the API path is tested above)
    const { accountId, key: k } = await t.account('enterprise');
    pageKey = k;
    await t.service.ctx.database.transaction(async (trx) => {
      for (let i = 0; i < 205; i++) {
        await t.service.ctx.entities.upsertRow(trx, accountId, { entity: `item:${String(i).padStart(3, '0')}`, type: 'item', displayName: '', frequency: 'P1D', seasonLength: 7 }, Date.now());
      }
    });
  });

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: default 50, a size as asked, over 200 coerced to 200, and the pages cover the set once`, async () => {
      const list = (size: number | undefined, cursor = '') =>
        protocol === 'rest'
          ? rest(t, pageKey, { method: 'GET', path: `/v1/entities?${size === undefined ? '' : `page_size=${size}&`}${cursor ? `cursor=${encodeURIComponent(cursor)}` : ''}` })
          : grpcCall(client, client.listEntities, pageKey, { type: '', pageSize: size ?? 0, cursor });
      const names = (o: Outcome) => o.data.entities.map((x: any) => x.entity) as string[];
      const next = (o: Outcome) => (protocol === 'rest' ? o.data.next_cursor : o.data.nextCursor) as string;
      const byDefault = await list(undefined);
      assert.equal(names(byDefault).length, 50);
      assert.equal(names(byDefault)[0], 'item:000');
      assert.ok(next(byDefault));
      if (protocol === 'rest') assert.equal(names(await list(0)).length, 50, 'page_size=0 means the default');
      assert.equal(names(await list(7)).length, 7);
      const capped = await list(100_000);
      assert.equal(names(capped).length, 200);
      const last = await list(100_000, next(capped));
      assert.deepEqual(names(last), ['item:200', 'item:201', 'item:202', 'item:203', 'item:204']);
      assert.equal(next(last), '', 'the last page has no cursor');
      assert.equal(new Set([...names(capped), ...names(last)]).size, 205);
    });
  }

  test('REST: a page_size beyond int32 is large, coerced to 200 like any other (query string and JSON body); other int32 fields keep their range check', async () => {
    for (const size of ['2147483647', '2147483648', '99999999999', '99999999999999999999999']) {
      const o = await rest(t, pageKey, { method: 'GET', path: `/v1/entities?page_size=${size}` });
      assert.equal(o.code, 'ok', `${size}: ${o.message}`);
      assert.equal(o.data.entities.length, 200, size);
    }
    // a List method with a JSON body (QueryPaths): the same, as a number or as text (another
    // account, so the 205 items stay as they are)
    const other = (await t.account('enterprise')).key;
    await rest(t, other, { method: 'POST', path: '/v1/entities', body: { entity: 'item:root', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    for (const page_size of [99999999999, '99999999999']) {
      const o = await rest(t, other, { method: 'POST', path: '/v1/paths/query', body: { from: 'item:root', page_size } });
      assert.equal(o.code, 'ok', `${JSON.stringify(page_size)}: ${o.message}`);
    }
    for (const [path, body, field] of [
      ['/v1/entities?page_size=-99999999999', undefined, 'page_size'],
      ['/v1/entities?page_size=1e11', undefined, 'page_size'],
      ['/v1/entities?page_size=99999999999.5', undefined, 'page_size'],
      ['/v1/paths/query', { from: 'item:root', page_size: 99999999999.5 }, 'page_size'],
      ['/v1/paths/query', { from: 'item:root', depth: 99999999999 }, 'depth'],
      ['/v1/paths/query', { from: 'item:root', horizon: '99999999999' }, 'horizon'],
    ] as const) {
      const o = await rest(t, body ? other : pageKey, { method: body ? 'POST' : 'GET', path, body });
      assert.equal(o.code, 'invalid_argument', `${path} ${JSON.stringify(body)}: ${o.message}`);
      assert.ok(o.message.startsWith(`${field}: `), o.message);
    }
  });

  test('negative or non-integer page sizes are 400 naming page_size (both protocols)', async () => {
    for (const o of [
      await rest(t, pageKey, { method: 'GET', path: '/v1/entities?page_size=-1' }),
      await rest(t, pageKey, { method: 'GET', path: '/v1/entities?page_size=2.5' }),
      await grpcCall(client, client.listEntities, pageKey, { type: '', pageSize: -5, cursor: '' }),
    ]) {
      assert.equal(o.code, 'invalid_argument', o.protocol);
      assert.ok(o.message.startsWith('page_size'), o.message);
    }
  });
});

describe('bulk ingest', () => {
  test('gRPC client streaming commits all messages as one revision', async () => {
    await createEntity('grpc', 'sku:bulk1');
    await createEntity('grpc', 'sku:bulk2');
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${key}`);
    const res = await new Promise<BulkIngestObservationsResponse>((resolve, reject) => {
      const stream = client.bulkIngestObservations(md, (err, r) => (err ? reject(err) : resolve(r)));
      for (let m = 0; m < 3; m++) {
        stream.write({ entity: m === 2 ? 'sku:bulk2' : 'sku:bulk1', observations: Array.from({ length: 100 }, (_, i) => ({ axis: 'revenue', time: day(m * 100 + i), value: i, revision: '0' })) });
      }
      stream.end();
    });
    assert.equal(res.accepted, 300);
    assert.equal(res.messages, 3);
    const rows = await listAll('grpc', 'sku:bulk1', { page_size: '200' });
    assert.equal(rows.length, 200);
    assert.ok(rows.every((r) => String(r.revision) === res.revision));
  });

  test('gRPC stream with a bad row in a later message stores nothing', async () => {
    await createEntity('grpc', 'sku:bulk3');
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${key}`);
    const err = await new Promise<grpc.ServiceError>((resolve) => {
      const stream = client.bulkIngestObservations(md, (e) => resolve(e!));
      stream.write({ entity: 'sku:bulk3', observations: [{ axis: 'revenue', time: day(0), value: 1, revision: '0' }] });
      stream.write({ entity: 'sku:bulk3', observations: [{ axis: 'revenue', time: day(1), value: Number.NaN, revision: '0' }] });
      stream.end();
    });
    assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
    assert.ok(err.details.includes('messages[1].observations[0].value'), err.details);
    assert.deepEqual(await listAll('grpc', 'sku:bulk3'), []);
  });

  test('an account has at most MAX_OPEN_STREAMS streams open at once, with or without Idempotency-Key: one more is 429 quota_exceeded with Retry-After, and one is accepted again once another ends (found by QA)', async () => {
    const own = await t.account('enterprise');
    const made = await rest(t, own.key, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:streams', frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] } });
    assert.equal(made.code, 'ok', made.message);
    const line = (d: number) => JSON.stringify({ entity: 'sku:streams', observations: [{ axis: 'demand', time: day(d), value: d }] }) + '\n';
    /** A REST stream left open after its first line; `end` finishes it and resolves with the answer. */
    const openStream = (d: number) => {
      const answer = new Promise<{ status: number; body: string; retryAfter?: string }>((resolve, reject) => {
        // with an Idempotency-Key, whose interceptor reads a stream whole before the endpoint runs (found by review: the limit did not hold then)
        const headers = { authorization: `Bearer ${own.key}`, 'content-type': 'application/x-ndjson', 'idempotency-key': `stream-${d}-${streams.length}` };
        const req = http.request(`${t.baseUrl}/v1/observations:bulkIngest`, { method: 'POST', headers }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body, retryAfter: res.headers['retry-after'] as string | undefined }));
        });
        req.on('error', reject);
        req.write(line(d));
        streams.push(req);
      });
      return answer;
    };
    const streams: http.ClientRequest[] = [];
    // three at once: whichever the server sees last is refused at once, the other two stay open
    const answers = [openStream(0), openStream(1), openStream(2)];
    const tagged = answers.map((p, i) => p.then((r) => ({ i, r })));
    const refused = await Promise.race(tagged);
    assert.equal(refused.r.status, 429, refused.r.body);
    assert.equal(JSON.parse(refused.r.body).code, 'quota_exceeded');
    assert.match(JSON.parse(refused.r.body).message, /^at most 2 bulk ingest streams of one account at once/);
    assert.equal(refused.r.retryAfter, '1');
    streams[refused.i].end();
    const [one, other] = [0, 1, 2].filter((i) => i !== refused.i);
    // one ends: a new stream is accepted beside the other, still open
    streams[one].end();
    assert.equal((await answers[one]).status, 200);
    const fourth = openStream(3);
    streams[streams.length - 1].end();
    assert.equal((await fourth).status, 200);
    streams[other].end();
    assert.equal((await answers[other]).status, 200);
  });

  test('gRPC: the same limit on open streams, RESOURCE_EXHAUSTED with reason quota_exceeded for the one the server sees last', async () => {
    const own = await t.account('enterprise');
    const made = await rest(t, own.key, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:gstreams', frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] } });
    assert.equal(made.code, 'ok', made.message);
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${own.key}`);
    const streams: grpc.ClientWritableStream<BulkIngestObservationsRequest>[] = [];
    const answers = [0, 1, 2].map(
      (d) =>
        new Promise<grpc.ServiceError | null>((resolve) => {
          const stream = client.bulkIngestObservations(md, (err) => resolve(err));
          stream.write({ entity: 'sku:gstreams', observations: [{ axis: 'demand', time: day(d), value: d, revision: '0' }] });
          streams.push(stream);
        }),
    );
    const refused = await Promise.race(answers.map((p, i) => p.then((err) => ({ i, err }))));
    assert.equal(refused.err?.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(refused.err!.details, /^at most 2 bulk ingest streams of one account at once/);
    for (const [i, stream] of streams.entries()) if (i !== refused.i) stream.end();
    for (const [i, answer] of answers.entries()) if (i !== refused.i) assert.equal(await answer, null);
  });

  test('REST takes the same stream as newline-delimited JSON', async () => {
    await createEntity('rest', 'sku:bulk4');
    const lines = [0, 1].map((m) => JSON.stringify({ entity: 'sku:bulk4', observations: [{ axis: 'demand', time: day(m), value: m }] })).join('\n');
    const o = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: lines + '\n', headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(o.code, 'ok', o.message);
    assert.equal(o.data.accepted, 2);
    assert.equal(o.data.messages, 2);
    const bad = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: '{"entity": "sku:bulk4", "bogus": 1}\n', headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(bad.code, 'invalid_argument');
    assert.ok(bad.message.includes('line 1') && bad.message.includes('bogus'), bad.message);
  });
});

describe('relations', () => {
  test('contains edges: parents on create, relation create, cycles refused, delete cascades', async () => {
    assert.equal((await createEntity('rest', 'region:eu')).code, 'ok');
    const store = await createEntity('rest', 'store:paris', { parents: ['region:eu'] });
    assert.equal(store.code, 'ok', store.message);
    assert.deepEqual(store.data.parents, ['region:eu']);
    await createEntity('grpc', 'sku:A42');
    const rel = await grpcCall(client, client.createRelation, key, { parent: 'store:paris', child: 'sku:A42', kind: '' });
    assert.equal(rel.code, 'ok', rel.message);
    assert.equal(rel.data.relation.kind, 'contains');
    const cycle = await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'sku:A42', child: 'region:eu' } });
    assert.equal(cycle.code, 'invalid_argument');
    assert.ok(cycle.message.includes('cycle'), cycle.message);
    const missing = await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'region:eu', child: 'sku:nope' } });
    assert.equal(missing.code, 'invalid_argument');
    assert.ok(missing.message.includes('child'));
    const self = await createEntity('grpc', 'region:eu', { parents: ['store:paris'] });
    assert.equal(self.code, 'invalid_argument');
    const del = await rest(t, key, { method: 'DELETE', path: '/v1/entities/store:paris' });
    assert.equal(del.code, 'ok');
    assert.deepEqual(del.data, { entity: 'store:paris', deleted: true });
    const sku = await rest(t, key, { method: 'GET', path: '/v1/entities/sku:A42' });
    assert.deepEqual(sku.data.parents, []);
    const again = await grpcCall(client, client.deleteEntity, key, { entity: 'store:paris' });
    assert.equal(again.code, 'not_found');
  });
});
