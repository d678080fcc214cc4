/**
 * Idempotency keys execute once even when the outcome cannot be recorded (found by QA: the
 * ingest committed, recording its outcome failed, and after the 5-minute lease the retry stored
 * the batch again), `Retry-After` on 409 `idempotency_key_in_use` over both protocols, and the
 * fence: a call whose claim lapsed and was taken over cannot commit any more. Recording is made
 * to fail by replacing `IdempotencyStore.complete` in the running service; time moves with an
 * injected clock.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { EchoServiceClient } from '../gen/forecast/testing/v1/echo_service.pb';
import { ManualClock } from '../../src/clock';
import { IDEMPOTENCY_LOCK_MS, type IdempotencyStore } from '../../src/rpc/idempotency';
import type { TestService } from '../helpers/service';
import { startWithEcho } from '../helpers/echo';
import { grpcCall, rest, type Outcome } from '../helpers/dual';

const clock = new ManualClock(Date.UTC(2026, 4, 10, 12));
let t: TestService;
let entities: EntityServiceClient;
let echo: EchoServiceClient;
let key: string;
/** The echo endpoint waits for this, then commits a transaction; `entered` resolves when a call is inside it. */
let gate: Promise<void> = Promise.resolve();
let entered: () => void = () => undefined;
let commits = 0;

beforeAll(async () => {
  t = await startWithEcho(
    {
      shout: {
        access: 'forecast:read',
        async handle(req) {
          entered();
          await gate;
          await t.service.ctx.database.transaction(async (trx) => {
            await trx.selectFrom('accounts').select('id').limit(1).execute();
          });
          commits++;
          return { shout: `${req.name}:${commits}` };
        },
      },
      oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: [], loud: false }) },
    },
    { clock },
  );
  entities = t.client(EntityServiceClient);
  echo = t.client(EchoServiceClient);
  key = (await t.account('pro')).key;
  const c = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:rec', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(c.code, 'ok', c.message);
});
afterAll(() => t.close());

type Protocol = 'rest' | 'grpc';
const PROTOCOLS: Protocol[] = ['rest', 'grpc'];
const other = (p: Protocol): Protocol => (p === 'rest' ? 'grpc' : 'rest');

/** A batch of one observation on day `value` of May 2026. */
const ingest = (p: Protocol, k: string, value: number): Promise<Outcome> => {
  const o = { axis: 'demand', time: `2026-05-${String(value).padStart(2, '0')}T00:00:00Z`, value };
  return p === 'rest'
    ? rest(t, key, { method: 'POST', path: '/v1/entities/store:rec/observations', body: { observations: [o] }, headers: { 'idempotency-key': k } })
    : grpcCall(entities, entities.ingestObservations, key, { entity: 'store:rec', observations: [{ ...o, revision: '0' }] }, { 'idempotency-key': k });
};
const shout = (p: Protocol, k: string, name: string): Promise<Outcome> =>
  p === 'rest'
    ? rest(t, key, { method: 'POST', path: `/v1/testing/echo/${name}:shout`, body: { times: 1 }, headers: { 'idempotency-key': k } })
    : grpcCall(echo, echo.shout, key, { name, text: '', times: 1, legacyNote: '' }, { 'idempotency-key': k });

async function revisions(): Promise<string[]> {
  const o = await rest(t, key, { method: 'GET', path: '/v1/entities/store:rec/observations' });
  return [...new Set<string>(o.data.observations.map((x: any) => String(x.revision)))];
}

/** Make `IdempotencyStore.complete` fail `times` times (Infinity: until restored); returns the restore function and the attempt count. */
function failRecording(times: number): { restore: () => void; attempts: () => number } {
  const store = t.service.ctx.idempotency as IdempotencyStore;
  const original = store.complete.bind(store);
  let attempts = 0;
  store.complete = async (...args) => {
    attempts++;
    if (attempts <= times) throw new Error('connection terminated unexpectedly');
    return original(...args);
  };
  return { restore: () => (store.complete = original), attempts: () => attempts };
}

/** Hold the next echo call at its gate: `inside` resolves once it waits there, `release` lets it (and later calls) through. */
function hold(): { release: () => void; inside: Promise<void> } {
  let open!: () => void;
  gate = new Promise((r) => (open = r));
  const inside = new Promise<void>((r) => (entered = r));
  return {
    inside,
    release: () => {
      open();
      gate = Promise.resolve();
    },
  };
}

describe.each(PROTOCOLS)('%s', (p) => {
  test('recording the outcome fails after the ingest committed: the caller gets its answer, and no retry ever stores the batch again', async () => {
    const day = p === 'rest' ? 5 : 6; // a day of its own: each batch shows as a revision
    const before = await revisions();
    const failing = failRecording(Infinity);
    let first: Outcome;
    try {
      first = await ingest(p, `k-lost-${p}`, day);
    } finally {
      failing.restore();
    }
    assert.equal(first.code, 'ok', `the batch was stored: ${first.message}`);
    assert.ok(failing.attempts() > 1, 'recording was retried');
    const stored = await revisions();
    assert.equal(stored.length, before.length + 1);
    // At once: the outcome may still be recorded, so 409 with Retry-After.
    const soon = await ingest(other(p), `k-lost-${p}`, day);
    assert.equal(soon.code, 'idempotency_key_in_use', soon.message);
    assert.equal(soon.headers['retry-after'], '1');
    // After the lease a running claim would lapse: this one was applied, so never again.
    clock.advance(IDEMPOTENCY_LOCK_MS + 1000);
    for (const q of PROTOCOLS) {
      const late = await ingest(q, `k-lost-${p}`, day);
      assert.equal(late.code, 'already_exists', `${q}: ${late.message}`);
      assert.equal(late.status, q === 'rest' ? 409 : 6 /* ALREADY_EXISTS */);
      assert.match(late.message, /was applied/);
    }
    assert.deepEqual(await revisions(), stored, 'executed once');
  });

  test('recording fails after a call that committed nothing (a read): the key is given back at once, the retry runs', async () => {
    const failing = failRecording(Infinity);
    let first: Outcome;
    try {
      first = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:nowhere' }, headers: { 'idempotency-key': `k-read-${p}` } });
    } finally {
      failing.restore();
    }
    assert.equal(first.code, 'not_found', first.message);
    assert.ok(failing.attempts() > 1, 'recording was retried');
    const retry = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:nowhere' }, headers: { 'idempotency-key': `k-read-${p}` } });
    assert.equal(retry.code, 'not_found', `the retry runs (not 409 until the lease lapses): ${retry.message}`);
    assert.notEqual(retry.headers['idempotent-replayed'], 'true');
  });

  test('recording fails twice, then succeeds: the retry replays the first answer', async () => {
    const failing = failRecording(2);
    let first: Outcome;
    try {
      first = await ingest(p, `k-late-${p}`, p === 'rest' ? 7 : 8);
    } finally {
      failing.restore();
    }
    assert.equal(first.code, 'ok', first.message);
    assert.equal(failing.attempts(), 3);
    const again = await ingest(other(p), `k-late-${p}`, p === 'rest' ? 7 : 8);
    assert.equal(again.code, 'ok', again.message);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(String(again.data.revision), String(first.data.revision));
  });

  test('409 idempotency_key_in_use carries Retry-After: as long as the claim has run, at least 1 s, never past its lapse', async () => {
    const { release, inside } = hold();
    const first = shout(p, `k-busy-${p}`, 'busy');
    await inside;
    try {
      const expect = async (q: Protocol, seconds: string) => {
        const o = await shout(q, `k-busy-${p}`, 'busy');
        assert.equal(o.code, 'idempotency_key_in_use', o.message);
        assert.equal(o.status, q === 'rest' ? 409 : 10 /* ABORTED */);
        assert.equal(o.headers['retry-after'], seconds, `${q} Retry-After`);
      };
      for (const q of PROTOCOLS) await expect(q, '1');
      clock.advance(20_000);
      for (const q of PROTOCOLS) await expect(q, '20');
      clock.advance(IDEMPOTENCY_LOCK_MS - 30_000); // 10 s before the claim could lapse
      for (const q of PROTOCOLS) await expect(q, '10');
    } finally {
      release();
    }
    assert.equal((await first).code, 'ok');
    clock.advance(60_000);
  });

  test('a call whose claim lapsed and was taken over cannot commit: the key executes once', async () => {
    const { release, inside } = hold();
    const stale = shout(p, `k-fence-${p}`, 'fence');
    await inside;
    gate = Promise.resolve(); // the call after it runs straight through
    clock.advance(IDEMPOTENCY_LOCK_MS + 1000); // the first looks dead: its claim lapses
    const before = commits;
    const fresh = await shout(other(p), `k-fence-${p}`, 'fence');
    assert.equal(fresh.code, 'ok', fresh.message);
    assert.equal(commits, before + 1);
    release();
    const late = await stale;
    assert.equal(late.code, 'idempotency_key_in_use', 'the stale call is refused at its commit');
    assert.equal(commits, before + 1, 'its transaction was rolled back');
    const replay = await shout(p, `k-fence-${p}`, 'fence');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.data.shout, fresh.data.shout, 'the stale call did not overwrite the outcome');
  });
});
