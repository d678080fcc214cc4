/**
 * Wires the service together: database → stores → endpoints → method table → pipeline →
 * gRPC server and REST gateway. Both servers share one pipeline, so every behaviour is the
 * same on both protocols.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import type express from 'express';
import { AccountStore } from './accounts/account-store';
import { accountService } from './accounts/account-service';
import { quotaInterceptor, UsageStore } from './accounts/quota';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { entityService } from './entities/entity-service';
import { EntityStore } from './entities/entity-store';
import { ObservationStore } from './entities/observation-store';
import { createLogger, type Logger } from './log';
import { loadDescriptors, DESCRIPTOR_IMAGE, type Descriptors } from './rpc/descriptors';
import { CursorCodec } from './rpc/pagination';
import { Pipeline } from './rpc/pipeline';
import { buildMethodTable, type ServiceBinding } from './rpc/registry';
import { openDatabase, type Database } from './store/database';
import { serverSecret } from './store/secrets';
import { bindGrpc, createGrpcServer, shutdownGrpc } from './transport/grpc/server';
import { createGateway } from './transport/rest/gateway';
import { RouteTable } from './transport/rest/route-table';

/** Everything the endpoints may need. */
export interface ServiceContext {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly database: Database;
  readonly accounts: AccountStore;
  readonly usage: UsageStore;
  readonly entities: EntityStore;
  readonly observations: ObservationStore;
  readonly cursors: CursorCodec;
}

export interface ServiceOptions {
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Extra descriptor images (tests add a test-only contract). */
  readonly extraDescriptors?: readonly string[];
  /** Extra services (tests bind test-only endpoints). */
  readonly extraServices?: (ctx: ServiceContext) => readonly ServiceBinding[];
}

export interface RunningService {
  readonly ctx: ServiceContext;
  readonly pipeline: Pipeline;
  readonly routes: RouteTable;
  readonly app: express.Express;
  readonly grpcServer: grpc.Server;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** Drain in-flight calls (up to the grace period), close servers and the database. */
  stop(): Promise<void>;
}

/** Build the service without binding ports. */
export async function createService(config: Config, options: ServiceOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  const database = await openDatabase(config.databaseUrl);
  const descriptors: Descriptors = loadDescriptors([DESCRIPTOR_IMAGE, ...(options.extraDescriptors ?? [])]);
  const ctx: ServiceContext = {
    config,
    clock,
    log,
    database,
    accounts: new AccountStore(database, clock),
    usage: new UsageStore(database),
    entities: new EntityStore(database),
    observations: new ObservationStore(database),
    cursors: new CursorCodec(await serverSecret(database, 'cursor')),
  };
  const bindings = [
    entityService(ctx),
    accountService(ctx),
    ...(options.extraServices?.(ctx) ?? []),
  ];
  const methods = buildMethodTable(bindings, descriptors.registry);
  const pipeline = new Pipeline({ accounts: ctx.accounts, clock, log, interceptors: [quotaInterceptor(ctx.usage, clock)] }, methods);
  const routes = RouteTable.compile(methods, descriptors.registry);
  const app = createGateway(pipeline, routes, { maxBodyBytes: config.maxBodyBytes, clock, log });
  const { server: grpcServer, health } = createGrpcServer(pipeline, {
    maxMessageBytes: config.maxGrpcMessageBytes,
    descriptorBytes: descriptors.bytes,
  });
  return { ctx, pipeline, routes, app, grpcServer, health };
}

/** Build the service and bind both ports (0 = any free port). */
export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  const built = await createService(config, options);
  const { ctx, app, grpcServer, health } = built;
  const grpcPort = await bindGrpc(grpcServer, config.host, config.grpcPort);
  const http: HttpServer = await new Promise((resolve, reject) => {
    const s = app.listen(config.httpPort, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  http.keepAliveTimeout = 65_000;
  const httpPort = (http.address() as AddressInfo).port;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      health.setStatus('', 'NOT_SERVING');
      const httpClosed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const force = setTimeout(() => http.closeAllConnections(), config.shutdownGraceMs);
      await Promise.all([shutdownGrpc(grpcServer, config.shutdownGraceMs), httpClosed]);
      clearTimeout(force);
      await ctx.database.close();
    })());
  return { ...built, httpPort, grpcPort, stop };
}
