/**
 * Wires the service together: database → stores → endpoints → method table → pipeline →
 * gRPC server and REST gateway. Both servers share one pipeline, so every behaviour is the
 * same on both protocols.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { AccountStore } from './accounts/account-store';
import { accountService } from './accounts/account-service';
import { keyService } from './accounts/key-service';
import { QUOTA_EXEMPT_METHODS, quotaInterceptor, rateLimitDescriber, UsageStore } from './accounts/quota';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { entityService } from './entities/entity-service';
import { EntityStore } from './entities/entity-store';
import { ObservationStore } from './entities/observation-store';
import { createLogger, type Logger } from './log';
import { loadDescriptors, redactedResponseFields, DESCRIPTOR_IMAGE, type Descriptors } from './rpc/descriptors';
import { CursorCodec } from './rpc/pagination';
import { DEPRECATIONS, type DeprecationNotice } from './rpc/deprecations';
import { idempotencyInterceptor, IdempotencyStore } from './rpc/idempotency';
import { Pipeline } from './rpc/pipeline';
import { buildMethodTable, type ServiceBinding } from './rpc/registry';
import { openDatabase, type Database } from './store/database';
import { loadSecretBox } from './store/master-key';
import type { SecretBox } from './store/secret-box';
import { serverSecret, verifyMasterKey } from './store/secrets';
import { bindGrpc, createGrpcServer, shutdownGrpc } from './transport/grpc/server';
import type { RequestHandler, Express } from 'express';
import { RequestIntake } from './transport/request-intake';
import { createRestApp } from './transport/rest/app';
import { createHttpServer } from './transport/rest/http-server';
import { RouteTable } from './transport/rest/route-table';
import { siteHandlers } from './web/site';
import { forensicsService } from './forensics/forensics-service';
import { CanonicalJson } from './manifests/canonical';
import type { EngineIdentity } from './manifests/manifest-builder';
import { manifestService } from './manifests/manifest-service';
import { ManifestSigner } from './manifests/manifest-signer';
import { ManifestStore } from './manifests/manifest-store';
import { SigningKeyStore } from './manifests/signing-keys';
import { ENGINE_INFO } from './oracle/engine-info';
import { ForecastPool } from './oracle/forecast-pool';
import { oracleService } from './oracle/oracle-service';
import { QueryStore } from './oracle/query-store';
import { SeriesLoader } from './oracle/series-loader';
import { graphService } from './graph/graph-service';
import { DepthQueries } from './graph/hierarchy-query';
import { nodeForecaster } from './graph/node-forecasts';
import { ReconcilePool } from './graph/reconcile-pool';
import { RelationStore } from './graph/relation-store';
import { WebhookRuntime } from './subscriptions/runtime';
import type { Resolver } from './subscriptions/ssrf-guard';
import { subscriptionService } from './subscriptions/subscription-service';


/** Everything the endpoints may need. */
export interface ServiceContext {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly database: Database;
  /** Seals secrets at rest under the master key (`store/secret-box.ts`). */
  readonly secrets: SecretBox;
  readonly accounts: AccountStore;
  readonly usage: UsageStore;
  readonly entities: EntityStore;
  readonly relations: RelationStore;
  readonly observations: ObservationStore;
  readonly idempotency: IdempotencyStore;
  readonly cursors: CursorCodec;
  readonly series: SeriesLoader;
  readonly pool: ForecastPool;
  readonly queries: QueryStore;
  /** The reconciliation thread of depth queries. */
  readonly reconcilePool: ReconcilePool;
  /** Oracle queries with depth ≥ 1 (graph/hierarchy-query.ts). */
  readonly depthQueries: DepthQueries;
  /** Subscriptions, drift scoring and webhook delivery (`subscriptions/`). */
  readonly webhooks: WebhookRuntime;
  /** The engine identity recorded in manifests and compared by forensics. */
  readonly engine: EngineIdentity;
  readonly canonical: CanonicalJson;
  readonly signingKeys: SigningKeyStore;
  readonly signer: ManifestSigner;
  readonly manifests: ManifestStore;
}

export interface ServiceOptions {
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Extra descriptor images (tests add a test-only contract). */
  readonly extraDescriptors?: readonly string[];
  /** Extra services (tests bind test-only endpoints). */
  readonly extraServices?: (ctx: ServiceContext) => readonly ServiceBinding[];
  /** Deprecation notices (default: the served contract's table). */
  readonly deprecations?: Readonly<Record<string, DeprecationNotice>>;
  /** Express middleware to run in front of the REST API (after security headers, CORS, compression). */
  readonly httpMiddleware?: readonly RequestHandler[];
  /** Resolves webhook hosts (default: the system resolver; tests inject their own). */
  readonly webhookResolver?: Resolver;
  /** The engine identity to record (default `ENGINE_INFO`; tests pose as another engine version). */
  readonly engine?: EngineIdentity;
  /** Most grid steps of series a depth query reads (default `MAX_DEPTH_QUERY_STEPS`; tests lower it). */
  readonly depthQuerySteps?: number;
}

export interface RunningService {
  readonly ctx: ServiceContext;
  readonly pipeline: Pipeline;
  readonly routes: RouteTable;
  /** The Express app serving REST (the API gateway and the site). */
  readonly app: Express;
  readonly grpcServer: grpc.Server;
  /** The budget of request bytes still arriving, both servers together (request-intake.ts). */
  readonly intake: RequestIntake;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** Drain in-flight calls (up to the grace period), close servers and the database. */
  stop(): Promise<void>;
}

/** Build the service without binding ports. */
export async function createService(config: Config, options: ServiceOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.logLevel);
  // The master key first: a misconfigured one fails before the database is touched.
  const secrets = loadSecretBox(config);
  // gRPC health follows the database's reachability (PostgreSQL); the server is made further down.
  let onAvailability: (available: boolean) => void = () => {};
  // Unreachable while opening: `openDatabase` fails with the reason, no need to log it twice.
  let opened = false;
  const database = await openDatabase(config.databaseUrl, {
    backgroundCheckpoints: true,
    onCheckpointFailure: (error) => log.warn('background WAL checkpoints failed; the writer checkpoints itself again', { error }),
    postgres: {
      poolSize: config.databasePoolSize,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      onAvailability: (available, error) => {
        if (available) log.info('database reachable again: serving');
        else if (opened) log.error('database unreachable: calls answer 503 unavailable and gRPC health is NOT_SERVING until it returns', { error });
        onAvailability(available);
      },
      onAnalyzeFailure: (table, error) => log.warn('refreshing planner statistics failed', { table, error }),
    },
  });
  opened = true;
  if (database.appliedMigrations.length > 0) log.info('database migrated', { migrations: database.appliedMigrations });
  await verifyMasterKey(database, secrets).catch(async (err) => {
    await database.close();
    throw err;
  });
  const descriptors: Descriptors = loadDescriptors([DESCRIPTOR_IMAGE, ...(options.extraDescriptors ?? [])]);
  const observations = new ObservationStore(database);
  const canonical = new CanonicalJson(descriptors.registry);
  const signingKeys = new SigningKeyStore(database, secrets, clock);
  // The first start makes the first signing key (replicas starting together make one between them).
  await signingKeys.ensure().catch(async (err) => {
    await database.close();
    throw err;
  });
  const entities = new EntityStore(database);
  const relations = new RelationStore(database);
  const series = new SeriesLoader(observations);
  const pool = new ForecastPool();
  const reconcilePool = new ReconcilePool();
  const ctx: ServiceContext = {
    config,
    clock,
    log,
    database,
    secrets,
    accounts: new AccountStore(database, clock),
    usage: new UsageStore(database, (error) => log.warn('usage count flush failed; retrying', { error })),
    entities,
    relations,
    observations,
    idempotency: new IdempotencyStore(database, secrets),
    cursors: new CursorCodec(await serverSecret(database, secrets, 'cursor')),
    series,
    pool,
    queries: new QueryStore(database),
    reconcilePool,
    depthQueries: new DepthQueries({ entities, relations, series, pool, reconcile: reconcilePool, maxSteps: options.depthQuerySteps }),
    webhooks: new WebhookRuntime({ config, database, secrets, clock, log, entities, observations, resolver: options.webhookResolver }),
    engine: options.engine ?? ENGINE_INFO,
    canonical,
    signingKeys,
    signer: new ManifestSigner(signingKeys, canonical),
    manifests: new ManifestStore(database),
  };
  // A deleted entity takes its subscriptions (and their pending deliveries) with it.
  entities.onDelete((trx, accountId, entity) => ctx.webhooks.subscriptions.deleteOnEntity(trx, accountId, entity));
  const bindings = [
    entityService(ctx),
    accountService(ctx),
    keyService(ctx),
    oracleService(ctx),
    graphService({ ...ctx, nodeForecasts: nodeForecaster(ctx) }),
    subscriptionService({
      subscriptions: ctx.webhooks.subscriptions,
      deliveries: ctx.webhooks.deliveries,
      urls: ctx.webhooks.urls,
      entities,
      cursors: ctx.cursors,
      clock,
      onDelivery: () => ctx.webhooks.dispatcher.poke(),
    }),
    manifestService(ctx),
    forensicsService(ctx),
    ...(options.extraServices?.(ctx) ?? []),
  ];
  const methods = buildMethodTable(bindings, descriptors.registry, options.deprecations ?? DEPRECATIONS);
  const routes = RouteTable.compile(methods, descriptors.registry);
  const secretFields = redactedResponseFields(descriptors.registry);
  const pipeline = new Pipeline(
    {
      accounts: ctx.accounts,
      clock,
      log,
      // Every answer to a caller of a tier with a quota carries its RateLimit headers (API.md section 12).
      describeCaller: rateLimitDescriber(ctx.usage, clock),
      // Idempotency first: a replay returns before the quota interceptor, so it does not count.
      interceptors: [
        // (A replay's RateLimit headers, not stored, come from describeCaller.)
        idempotencyInterceptor(ctx.idempotency, clock, { appliesTo: (path) => routes.idempotentMethods.has(path), secretFields: (path) => secretFields.get(path) }),
        // Reads of the account itself are free (API.md section 12): a user over quota still sees their usage.
        quotaInterceptor(ctx.usage, clock, { exempt: (path) => QUOTA_EXEMPT_METHODS.has(path) }),
      ],
    },
    methods,
  );
  // One budget for the bytes of requests still arriving, both servers together.
  const intake = new RequestIntake({
    maxPendingBytes: config.maxPendingRequestBytes,
    accountShare: config.pendingRequestShares.account,
    freeAccountShare: config.pendingRequestShares.freeAccount,
    freeTierShare: config.pendingRequestShares.freeTier,
    unclaimedShare: config.pendingRequestShares.unclaimed,
    idleTimeoutMs: config.requestIdleTimeoutMs,
  });
  const app = createRestApp(pipeline, routes, {
    maxBodyBytes: config.maxBodyBytes,
    maxStreamBytes: config.maxStreamBytes,
    maxLineBytes: config.maxGrpcMessageBytes,
    intake,
    clock,
    log,
    corsOrigins: config.corsOrigins,
    compression: config.compression,
    middleware: options.httpMiddleware,
    site: siteHandlers(pipeline, routes, { publicBaseUrl: config.publicBaseUrl }),
  });
  const { server: grpcServer, health, connections: grpcConnections } = createGrpcServer(pipeline, {
    maxMessageBytes: config.maxGrpcMessageBytes,
    maxStreamBytes: config.maxStreamBytes,
    descriptorBytes: descriptors.bytes,
    intake,
    maxConnections: config.maxConnections,
    log,
    clock,
  });
  const served = ['', ...new Set([...methods.values()].map((m) => m.service))];
  let draining = false;
  const setServing = (serving: boolean) => {
    for (const name of served) health.setStatus(name, serving ? 'SERVING' : 'NOT_SERVING');
  };
  onAvailability = (available) => {
    if (!draining) setServing(available);
  };
  /** Report NOT_SERVING from now on (a graceful stop), whatever the database does. */
  const startDraining = () => {
    draining = true;
    setServing(false);
  };
  return { ctx, pipeline, routes, app, grpcServer, grpcConnections, health, intake, startDraining };
}

/** Build the service and bind both ports (0 = any free port). */
export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  const built = await createService(config, options);
  const { ctx, app, grpcServer, grpcConnections, startDraining } = built;
  const grpcListener = await bindGrpc(grpcServer, config.host, config.grpcPort, grpcConnections);
  const grpcPort = grpcListener.port;
  const http: HttpServer = await new Promise((resolve, reject) => {
    const s = createHttpServer(app, { maxConnections: config.maxConnections, idleTimeoutMs: config.requestIdleTimeoutMs, clock: ctx.clock, log: ctx.log });
    s.once('error', reject);
    s.listen(config.httpPort, config.host, () => {
      s.off('error', reject);
      resolve(s);
    });
  });
  const httpPort = (http.address() as AddressInfo).port;
  // Idempotency entries live 24 hours; purge expired ones hourly (and once at start).
  const purge = () => ctx.idempotency.purgeExpired(ctx.clock.now()).catch((error) => ctx.log.warn('idempotency purge failed', { error }));
  void purge();
  const purgeTimer = setInterval(purge, 3600_000);
  purgeTimer.unref();
  await ctx.webhooks.start();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(purgeTimer);
      startDraining();
      // The webhook workers stop alongside the drain, not after it: a stopping process starts no
      // new scoring or delivery (both wait in the database for another replica or the next start),
      // and its attempts in flight end within their timeout while calls drain.
      const webhooksStopped = ctx.webhooks.stop().catch((error: unknown) => ctx.log.error('the webhook workers failed to stop', { error }));
      const httpClosed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      // A keep-alive connection whose last call drains becomes idle only then: close those as they
      // appear, or the drain would wait for the grace period whenever a client kept its connection.
      const idle = setInterval(() => http.closeIdleConnections(), 50);
      const force = setTimeout(() => http.closeAllConnections(), config.shutdownGraceMs);
      await Promise.all([shutdownGrpc(grpcServer, grpcListener, config.shutdownGraceMs), httpClosed]);
      clearTimeout(force);
      clearInterval(idle);
      await webhooksStopped;
      await ctx.pool.close();
      await ctx.reconcilePool.close();
      await ctx.usage.close().catch((error) => ctx.log.error('usage counts lost at stop', { error }));
      await ctx.database.close();
    })());
  return { ...built, httpPort, grpcPort, stop };
}
