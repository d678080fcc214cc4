/**
 * Writes racing a DeleteEntity, or a change of what they were checked against, on both
 * databases (found by QA across PostgreSQL replicas; one process's concurrent calls race the
 * same way): every write that depends on an entity locks it inside its transaction, so it
 * commits before the delete (which then removes what it wrote) or sees the entity gone. Checked
 * over many rounds of two calls sent at once: no relation, observation or subscription outlives
 * its entity (a re-made entity starts empty), no count axis holds a fraction, and no race
 * answers 500; a query that loses the race is a 404. (The delete that precedes a re-create waits
 * until the ingest it races has been checked: see that test.)
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { EntityServiceClient, type BulkIngestObservationsRequest } from '../../gen/forecast/v1/entity_service.pb';
import { rest, type Outcome } from '../helpers/dual';
import { testResolver } from '../helpers/resolver';
import { startTestService, type TestService } from '../helpers/service';

const ROUNDS = 24;
const dns = testResolver({ 'hooks.example.com': ['93.184.216.34'] });
let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestService({ webhookResolver: dns.resolve });
  key = (await t.account('enterprise')).key;
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown) => rest(t, key, { method, path, body });

async function ok(o: Promise<Outcome>): Promise<Outcome> {
  const r = await o;
  assert.equal(r.code, 'ok', `${r.status} ${r.message}`);
  return r;
}

const entity = (name: string, kind = 'continuous') => ok(call('POST', '/v1/entities', { entity: name, frequency: 'P1D', axes: [{ name: 'units', kind }] }));
const days = (n: number, value: (i: number) => number) =>
  Array.from({ length: n }, (_, i) => ({ axis: 'units', time: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(), value: value(i) }));

/** Both calls at once, after the same tick; answers in order. */
const race = (a: () => Promise<Outcome>, b: () => Promise<Outcome>) => Promise.all([a(), b()]);

function allowed(o: Outcome, codes: readonly string[], what: string): void {
  assert.ok(codes.includes(o.code), `${what}: ${o.status} ${o.code} ${o.message}`);
}

test('CreateRelation racing DeleteEntity of its child: never a relation to a deleted entity', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    await entity(`region:r${i}`);
    await entity(`store:c${i}`);
    const [relation, deleted] = await race(
      () => call('POST', '/v1/relations', { parent: `region:r${i}`, child: `store:c${i}` }),
      () => call('DELETE', `/v1/entities/store:c${i}`),
    );
    allowed(relation, ['ok', 'invalid_argument'], 'relation');
    assert.equal(deleted.code, 'ok', deleted.message);
    const listed = await ok(call('GET', `/v1/relations?parent=region:r${i}`));
    assert.deepEqual(listed.data.relations, [], `round ${i}: ${JSON.stringify(listed.data.relations)}`);
  }
});

test('IngestObservations racing DeleteEntity: 200 or 404, never 500, and the entity made again starts empty', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    await entity(`sku:d${i}`);
    const [ingest, deleted] = await race(
      () => call('POST', `/v1/entities/sku:d${i}/observations`, { observations: days(400, (d) => d) }),
      () => call('DELETE', `/v1/entities/sku:d${i}`),
    );
    allowed(ingest, ['ok', 'not_found'], 'ingest');
    assert.equal(deleted.code, 'ok', deleted.message);
    await entity(`sku:d${i}`);
    const listed = await ok(call('GET', `/v1/entities/sku:d${i}/observations`));
    assert.deepEqual(listed.data.observations, [], `round ${i}: the deleted entity's rows came back`);
  }
});

test('IngestObservations racing DeleteEntity followed by CreateEntity of the same name: the rows never land on the entity made again', async () => {
  // The delete is sent once the server has checked the ingest's rows against the entity and
  // handed them to the store (ObservationStore.ingest, whose transaction locks the entity and
  // checks its incarnation again before the commit). Sent at once instead, a loaded machine
  // could check the ingest only after the re-create: its rows then rightly land on the new
  // entity, an order the listing below cannot tell from the bug. Checked against the first
  // entity, the rows commit before the delete (which removes them) or are refused (404).
  const store = t.service.ctx.observations;
  const ingest = store.ingest;
  const handedOver = new Map<string, () => void>();
  store.ingest = (...args) => {
    for (const batch of args[1]) handedOver.get(batch.entity)?.();
    return ingest.apply(store, args);
  };
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const name = `sku:m${i}`;
      await entity(name);
      let checked = false;
      const reached = new Promise<void>((resolve) => handedOver.set(name, () => ((checked = true), resolve())));
      const sent = call('POST', `/v1/entities/${name}/observations`, { observations: days(4000, (d) => d % 50) });
      const [answer] = await Promise.all([
        sent,
        (async () => {
          await Promise.race([reached, sent]);
          if (!checked) {
            const early = await sent;
            assert.fail(`round ${i}: the ingest was answered before reaching the store: ${early.status} ${early.code} ${early.message}`);
          }
          await ok(call('DELETE', `/v1/entities/${name}`));
          return entity(name);
        })(),
      ]);
      handedOver.delete(name);
      allowed(answer, ['ok', 'not_found'], 'ingest');
      const listed = await ok(call('GET', `/v1/entities/${name}/observations?page_size=1`));
      assert.deepEqual(listed.data.observations, [], `round ${i}: rows checked for the deleted entity landed on the new one`);
    }
  } finally {
    store.ingest = ingest;
  }
});

test('IngestObservations of fractions racing a change of the axis to count: a count axis never holds a fraction', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    await entity(`sku:k${i}`);
    const [ingest, change] = await race(
      () => call('POST', `/v1/entities/sku:k${i}/observations`, { observations: days(400, (d) => d + 0.25) }),
      () => call('POST', '/v1/entities', { entity: `sku:k${i}`, axes: [{ name: 'units', kind: 'count' }] }),
    );
    allowed(ingest, ['ok', 'invalid_argument'], 'ingest');
    allowed(change, ['ok', 'failed_precondition'], 'kind change');
    assert.ok(!(ingest.code === 'ok' && change.code === 'ok'), `round ${i}: both the fractions and the change to count were accepted`);
    const got = await ok(call('GET', `/v1/entities/sku:k${i}`));
    const listed = await ok(call('GET', `/v1/entities/sku:k${i}/observations?page_size=1`));
    if (got.data.axes[0].kind === 'count') assert.deepEqual(listed.data.observations, [], `round ${i}`);
  }
});

test('CreateSubscription racing DeleteEntity: the entity made again has no subscriber', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    await entity(`store:s${i}`);
    const [subscription, deleted] = await race(
      () => call('POST', '/v1/subscriptions', { entity: `store:s${i}`, url: 'https://hooks.example.com/forecast' }),
      () => call('DELETE', `/v1/entities/store:s${i}`),
    );
    allowed(subscription, ['ok', 'invalid_argument'], 'subscription');
    assert.equal(deleted.code, 'ok', deleted.message);
    await entity(`store:s${i}`);
    const listed = await ok(call('GET', `/v1/subscriptions?entity=store:s${i}`));
    assert.deepEqual(listed.data.subscriptions, [], `round ${i}`);
  }
});

test('a query racing DeleteEntity: its forecast or 404, never 422 for the data the delete removed', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    await entity(`store:q${i}`);
    await ok(call('POST', `/v1/entities/store:q${i}/observations`, { observations: days(60, (d) => 10 + (d % 7)) }));
    const [query, deleted] = await race(
      () => call('POST', '/v1/oracle/query', { entity: `store:q${i}` }),
      () => call('DELETE', `/v1/entities/store:q${i}`),
    );
    allowed(query, ['ok', 'not_found'], `round ${i}: query`);
    assert.equal(deleted.code, 'ok', deleted.message);
  }
});

/**
 * A bulk ingest whose first message names `entity`; `meanwhile` runs once that message is sent,
 * while the stream stays open; then it ends. The answer: status (HTTP, or gRPC's) and message.
 */
async function bulkWhile(protocol: 'rest' | 'grpc', entity: string, meanwhile: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  const observations = days(50, (d) => d);
  const pause = () => new Promise((r) => setTimeout(r, 200));
  if (protocol === 'grpc') {
    const client = t.client(EntityServiceClient);
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${key}`);
    let stream!: grpc.ClientWritableStream<BulkIngestObservationsRequest>;
    const done = new Promise<grpc.ServiceError | null>((settle) => {
      stream = client.bulkIngestObservations(md, (err) => settle(err));
    });
    stream.write({ entity, observations: observations.map((o) => ({ ...o, revision: '0' })) });
    await pause();
    await meanwhile();
    stream.end();
    const err = await done;
    return err ? { code: grpc.status[err.code], message: err.details } : { code: 'OK', message: '' };
  }
  const req = request(`${t.baseUrl}/v1/observations:bulkIngest`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' } });
  const answer = new Promise<{ code: string; message: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ code: String(res.statusCode), message: res.statusCode === 200 ? '' : JSON.parse(text).message }));
    });
    req.on('error', reject);
  });
  req.write(JSON.stringify({ entity, observations }) + '\n');
  await pause();
  await meanwhile();
  req.end();
  return answer;
}

test('a bulk ingest whose entity is deleted while the stream is open: 400 naming messages[0].entity and nothing stored, on both protocols', async () => {
  for (const protocol of ['rest', 'grpc'] as const) {
    const name = `sku:bulk-${protocol}`;
    await entity(name);
    const answer = await bulkWhile(protocol, name, () => ok(call('DELETE', `/v1/entities/${name}`)));
    assert.equal(answer.code, protocol === 'rest' ? '400' : 'INVALID_ARGUMENT', `${protocol}: ${answer.message}`);
    assert.match(answer.message, new RegExp(`^messages\\[0\\]\\.entity: entity ${name} does not exist`));
    await entity(name);
    const listed = await ok(call('GET', `/v1/entities/${name}/observations?page_size=1`));
    assert.deepEqual(listed.data.observations, [], `${protocol}: the rows came back on the entity made again`);
  }
});
