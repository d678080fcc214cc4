/**
 * Test harness: a real service (gRPC server + REST gateway) on free loopback ports with a
 * fresh SQLite file, plus accounts made through the real store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Scope, Tier } from '../../src/accounts/tiers';
import type { Clock } from '../../src/clock';
import { loadConfig } from '../../src/config';
import { startService, type RunningService, type ServiceOptions } from '../../src/service';

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

export async function startTestService(options: ServiceOptions & { clock?: Clock; env?: NodeJS.ProcessEnv } = {}): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-test-'));
  const config = loadConfig({
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 'test.db')}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SHUTDOWN_GRACE_MS: '2000',
    ...options.env,
  });
  const service = await startService(config, options);
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
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
