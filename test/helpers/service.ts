/**
 * Test harness: a real service (gRPC server + REST gateway) on free loopback ports with a
 * fresh database of the run's dialect (`helpers/database.ts`: SQLite, or PostgreSQL on the
 * second pass of scripts/run-tests.js), plus accounts made through the real store.
 */
import * as grpc from '@grpc/grpc-js';
import type { Scope, Tier } from '../../src/accounts/tiers';
import type { Clock } from '../../src/clock';
import { loadConfig } from '../../src/config';
import { startService, type RunningService, type ServiceOptions } from '../../src/service';
import { freshDatabaseUrl } from './database';

export interface TestService {
  readonly service: RunningService;
  readonly baseUrl: string;
  readonly grpcAddress: string;
  /** Create an account and return its first key. */
  account(tier?: Tier, scopes?: readonly Scope[]): Promise<{ accountId: string; key: string }>;
  /** A gRPC client of a generated client class. */
  client<C extends grpc.Client>(ctor: new (address: string, creds: grpc.ChannelCredentials) => C): C;
  close(): Promise<void>;
}

/**
 * Start a service on a fresh database (removed by `close()`), unless `env.DATABASE_URL` names
 * one (then `env.MASTER_KEY` too, for PostgreSQL).
 */
export async function startTestService(options: ServiceOptions & { clock?: Clock; env?: NodeJS.ProcessEnv } = {}): Promise<TestService> {
  const fresh = options.env?.DATABASE_URL ? undefined : await freshDatabaseUrl();
  const config = loadConfig({
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    HOST: '127.0.0.1',
    ...(fresh && { DATABASE_URL: fresh.url }),
    ...(fresh?.masterKey && { MASTER_KEY: fresh.masterKey }),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SHUTDOWN_GRACE_MS: '2000',
    ...options.env,
  });
  const service = await startService(config, options).catch(async (err) => {
    await fresh?.drop();
    throw err;
  });
  const clients: grpc.Client[] = [];
  return {
    service,
    baseUrl: `http://127.0.0.1:${service.httpPort}`,
    grpcAddress: `127.0.0.1:${service.grpcPort}`,
    async account(tier: Tier = 'enterprise', scopes?: readonly Scope[]) {
      const { account, created } = await service.ctx.accounts.createAccount(tier, null, scopes);
      return { accountId: account.id, key: created.apiKey };
    },
    client(ctor) {
      const c = new ctor(`127.0.0.1:${service.grpcPort}`, grpc.credentials.createInsecure());
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients) c.close();
      await service.stop();
      await fresh?.drop();
    },
  };
}
