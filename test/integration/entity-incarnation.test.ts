/**
 * An entity deleted and made again under its name within one millisecond (a fast client, a clock
 * stepping back, replicas' clocks apart) while a write checked against the first one is in
 * flight: the write must not land on the second. The service clock is pinned (ManualClock), so
 * the entity made again has the deleted one's create time to the millisecond; each write is held
 * after its check (an ingest where it reaches ObservationStore.ingest, a subscription in its URL
 * check's DNS lookup, a query where it loads a series), the entity is deleted and made again,
 * then the write goes on. Before entities had an incarnation the ingests' guard compared create
 * times, and answered ok with the rows on the new entity; CreateSubscription and the query's
 * "deleted while read" check compared nothing.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { ManualClock } from '../../src/clock';
import type { Resolver } from '../../src/subscriptions/ssrf-guard';
import { grpcCall, ok, rest, type Outcome } from '../helpers/dual';
import { testResolver } from '../helpers/resolver';
import { startTestService, type TestService } from '../helpers/service';

const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
const dns = testResolver({ 'hooks.example.com': ['93.184.216.34'] });
/** Writes held after their check, by entity (ingests) or host name (subscriptions). */
const holds = new Map<string, { reached: () => void; released: Promise<void> }>();
let t: TestService;
let key: string;
let entities: EntityServiceClient;

/** Hold the next write of `name` once checked: `reached` when it is held, `release()` lets it go on. */
function hold(name: string): { reached: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => holds.set(name, { reached: resolve, released }));
  return { reached, release };
}

async function held(name: string): Promise<void> {
  const h = holds.get(name);
  if (!h) return;
  holds.delete(name);
  h.reached();
  await h.released;
}

const heldResolver: Resolver = async (hostname) => {
  await held(hostname);
  return dns.resolve(hostname);
};

beforeAll(async () => {
  t = await startTestService({ clock, webhookResolver: heldResolver });
  key = (await t.account('enterprise')).key;
  entities = t.client(EntityServiceClient);
  const store = t.service.ctx.observations;
  const ingest = store.ingest;
  store.ingest = async (...args) => {
    for (const batch of args[1]) await held(batch.entity);
    return ingest.apply(store, args);
  };
  const series = t.service.ctx.series;
  const load = series.load;
  series.load = async (...args) => {
    await held(args[1].entity);
    return load.apply(series, args);
  };
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown) => rest(t, key, { method, path, body });
const createEntity = (name: string) => ok(call('POST', '/v1/entities', { entity: name, frequency: 'P1D', axes: [{ name: 'units' }] }));
const rows = Array.from({ length: 30 }, (_, i) => ({ axis: 'units', time: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(), value: i }));

/**
 * Start `write` (checked against `name`, then held), delete the entity and make it again at the
 * same millisecond (`step` ms later when given), let the write go on: its answer, and what the
 * entity made again holds. `filled`: the first entity has observations.
 */
async function remadeDuring(name: string, write: () => Promise<Outcome>, { step = 0, filled = false } = {}): Promise<{ answer: Outcome; observations: unknown[]; subscriptions: unknown[] }> {
  const first = await createEntity(name);
  if (filled) await ok(call('POST', `/v1/entities/${name}/observations`, { observations: rows }));
  const h = hold(holdKey(name));
  const pending = write();
  const early = await Promise.race([h.reached.then(() => undefined), pending]);
  if (early) assert.fail(`answered before it was held: ${early.code} ${early.message}`);
  await ok(call('DELETE', `/v1/entities/${name}`));
  clock.advance(step);
  const again = await createEntity(name);
  assert.equal(again.data.create_time === first.data.create_time, step === 0, `create times ${first.data.create_time}, ${again.data.create_time}`);
  h.release();
  const answer = await pending;
  const observations = (await ok(call('GET', `/v1/entities/${name}/observations`))).data.observations;
  const subscriptions = (await ok(call('GET', `/v1/subscriptions?entity=${name}`))).data.subscriptions;
  return { answer, observations, subscriptions };
}
/** Subscriptions are held by the host of their URL (one per entity, under hooks.example.com). */
const holdKey = (name: string) => (name.startsWith('store:') ? `${name.slice('store:'.length)}.hooks.example.com` : name);

describe.each(['rest', 'grpc'] as const)('%s', (protocol) => {
  const ingest = (name: string) =>
    protocol === 'rest'
      ? call('POST', `/v1/entities/${name}/observations`, { observations: rows })
      : grpcCall(entities, entities.ingestObservations, key, { entity: name, observations: rows.map((r) => ({ ...r, revision: '0' })) });

  test('IngestObservations checked against an entity deleted and made again in the same millisecond: 404, and the entity made again has no rows', async () => {
    const r = await remadeDuring(`sku:same-ms-${protocol}`, () => ingest(`sku:same-ms-${protocol}`));
    assert.equal(r.answer.code, 'not_found', `${r.answer.code} ${r.answer.message}`);
    assert.deepEqual(r.observations, []);
  });

  test('the same one millisecond apart: 404 as well', async () => {
    const r = await remadeDuring(`sku:next-ms-${protocol}`, () => ingest(`sku:next-ms-${protocol}`), { step: 1 });
    assert.equal(r.answer.code, 'not_found', `${r.answer.code} ${r.answer.message}`);
    assert.deepEqual(r.observations, []);
  });
});

test('BulkIngestObservations checked against an entity deleted and made again in the same millisecond: 400 naming messages[0].entity, nothing stored', async () => {
  const name = 'sku:same-ms-bulk';
  const r = await remadeDuring(name, () =>
    rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: JSON.stringify({ entity: name, observations: rows }), headers: { 'content-type': 'application/x-ndjson' } }),
  );
  assert.equal(r.answer.code, 'invalid_argument', r.answer.message);
  assert.match(r.answer.message, new RegExp(`^messages\\[0\\]\\.entity: entity ${name} does not exist`));
  assert.deepEqual(r.observations, []);
});

test('CreateSubscription checked against an entity deleted and made again in the same millisecond: 400, and the entity made again has no subscriber', async () => {
  const name = 'store:same-ms';
  dns.table.set(holdKey(name), ['93.184.216.34']);
  const r = await remadeDuring(name, () => call('POST', '/v1/subscriptions', { entity: name, axes: ['units'], url: `https://${holdKey(name)}/forecast` }));
  assert.equal(r.answer.code, 'invalid_argument', r.answer.message);
  assert.match(r.answer.message, new RegExp(`^entity: entity ${name} does not exist`));
  assert.deepEqual(r.subscriptions, []);
});

test('a query that read an entity deleted and made again in the same millisecond, empty: 404, not 422 for the data the delete removed', async () => {
  const name = 'sku:same-ms-query';
  const r = await remadeDuring(name, () => call('POST', '/v1/oracle/query', { entity: name }), { filled: true });
  assert.equal(r.answer.code, 'not_found', `${r.answer.code} ${r.answer.message}`);
});
