/**
 * Two server processes on one database (a SQLite file, or PostgreSQL on the second pass): the
 * interleaving a single process never shows (its one SQLite connection runs each statement to
 * completion). Writers that read then write queue instead of
 * failing with "database is locked" (issue 11, defect 5), quotas stay exact (with quota N,
 * exactly N succeed) and data revisions stay distinct and consecutive per account, under
 * concurrency across the processes, over both protocols.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { KeyServiceClient } from '../../gen/forecast/v1/key_service.pb';
import { ChildAccounts, startChildServer, type ChildServer } from '../helpers/child-server';
import { freshDatabaseUrl, type TestDatabaseUrl } from '../helpers/database';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import type { TestService } from '../helpers/service';

let servers: ChildServer[];
let accounts: ChildAccounts;
let database: TestDatabaseUrl;
const clients: grpc.Client[] = [];

beforeAll(async () => {
  database = await freshDatabaseUrl();
  const first = await startChildServer({ database });
  servers = [first, await startChildServer({ database })];
  accounts = await ChildAccounts.open(first.databaseUrl);
});
afterAll(async () => {
  for (const c of clients) c.close();
  await accounts.close();
  await Promise.all(servers.map((s) => s.stop()));
  await database.drop();
});

function client<C extends grpc.Client>(ctor: new (address: string, creds: grpc.ChannelCredentials) => C, server: ChildServer): C {
  const c = new ctor(server.grpcAddress, grpc.credentials.createInsecure());
  clients.push(c);
  return c;
}
const restOn = (server: ChildServer) => ({ baseUrl: server.baseUrl }) as TestService;

/** `n` calls, `concurrency` at a time, alternating servers and protocols. */
async function run(n: number, concurrency: number, call: (i: number) => Promise<Outcome>): Promise<Outcome[]> {
  const out: Outcome[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await call(i);
      }
    }),
  );
  return out;
}

test('concurrent writers that read then write queue across processes instead of failing with "database is locked"', async () => {
  const { key } = await accounts.create('enterprise', ['data:write', 'forecast:read', 'keys:admin']);
  const entityClients = servers.map((s) => client(EntityServiceClient, s));
  const keyClients = servers.map((s) => client(KeyServiceClient, s));
  // Each CreateEntity reads the entity (and its parents) before it writes; each RotateKey reads the key first.
  const made = await grpcCall(keyClients[0], keyClients[0].createKey, key, { scopes: ['forecast:read'], name: 'r', expiresInSeconds: '0' });
  assert.equal(made.code, 'ok', made.message);
  let rotating = made.data.key.keyId as string;
  const outcomes = await run(300, 16, async (i) => {
    const server = i % 2;
    if (i % 10 === 9) {
      const o = await grpcCall(keyClients[server], keyClients[server].rotateKey, key, { keyId: rotating, gracePeriodSeconds: '60', expiresInSeconds: '0' });
      if (o.code === 'ok') rotating = o.data.key.keyId;
      return o;
    }
    const entity = `store:s${i % 40}`;
    const body = { entity, display_name: `n${i}`, frequency: 'P1D', axes: [{ name: 'demand' }] };
    if (i % 4 < 2) return rest(restOn(servers[server]), key, { method: 'POST', path: '/v1/entities', body });
    return grpcCall(entityClients[server], entityClients[server].createEntity, key, { entity, displayName: `n${i}`, frequency: 'P1D', seasonLength: 0, axes: [{ name: 'demand', unit: '', kind: '' }], parents: [] });
  });
  const failures = outcomes.filter((o) => o.code !== 'ok' && !(o.code === 'invalid_argument' && /only an active key/.test(o.message)));
  assert.deepEqual(failures.map((o) => `${o.protocol} ${o.code}: ${o.message}`), []);
  for (const s of servers) {
    assert.ok(s.alive());
    assert.deepEqual(s.errorLogs(), []);
  }
});

test('quota: of 300 concurrent mixed REST/gRPC requests to two processes, exactly 100 succeed', async () => {
  const { key } = await accounts.create('free');
  const entityClients = servers.map((s) => client(EntityServiceClient, s));
  const outcomes = await run(300, 32, (i) => {
    const server = i % 2;
    // ListEntities counts against the quota (GetAccount does not)
    return (i >> 1) % 2 === 0
      ? rest(restOn(servers[server]), key, { method: 'GET', path: '/v1/entities' })
      : grpcCall(entityClients[server], entityClients[server].listEntities, key, { type: '', pageSize: 0, cursor: '' });
  });
  const ok = outcomes.filter((o) => o.code === 'ok').length;
  const limited = outcomes.filter((o) => o.code === 'quota_exceeded').length;
  assert.equal(ok, 100);
  assert.equal(limited, 200);
  const accountClient = client(AccountServiceClient, servers[1]);
  const account = await grpcCall(accountClient, accountClient.getAccount, key, {});
  assert.equal(account.data.quota.used, 100);
});

test('data revisions: 40 concurrent ingests of one account across both processes get 1..40, each once', async () => {
  const { key } = await accounts.create('enterprise');
  const created = await rest(restOn(servers[0]), key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:rev', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(created.code, 'ok', created.message);
  const entityClients = servers.map((s) => client(EntityServiceClient, s));
  const outcomes = await run(40, 40, (i) => {
    const server = i % 2;
    const row = { axis: 'demand', time: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().replace('.000Z', 'Z'), value: i };
    return (i >> 1) % 2 === 0
      ? rest(restOn(servers[server]), key, { method: 'POST', path: '/v1/entities/store:rev/observations', body: { observations: [row] } })
      : grpcCall(entityClients[server], entityClients[server].ingestObservations, key, { entity: 'store:rev', observations: [{ ...row, revision: '0' }] });
  });
  for (const o of outcomes) assert.equal(o.code, 'ok', o.message);
  assert.deepEqual(
    outcomes.map((o) => Number(o.data.revision)).sort((a, b) => a - b),
    Array.from({ length: 40 }, (_, i) => i + 1),
  );
});
