/**
 * Subscriptions and webhooks wired together for the service: the stores, the SSRF guard, the
 * drift outbox listener on ingest, the drift worker and the webhook dispatcher, started and
 * stopped with the server.
 */
import type { Clock } from '../clock';
import type { Config } from '../config';
import type { EntityStore } from '../entities/entity-store';
import type { ObservationStore } from '../entities/observation-store';
import { newId } from '../ids';
import type { Logger } from '../log';
import type { Database } from '../store/database';
import type { SecretBox } from '../store/secret-box';
import { DeliveryStore } from './delivery-store';
import { WebhookDispatcher } from './dispatcher';
import { DriftOutbox, driftOutboxListener } from './drift-outbox';
import { DriftScorer } from './drift-scorer';
import { DriftWorker } from './drift-worker';
import { AddressGuard, systemResolver, type Resolver } from './ssrf-guard';
import { SubscriptionStore } from './subscription-store';
import type { UrlPolicy } from './subscription-validation';

/** What the runtime is built from (the service context's parts). */
export interface WebhookRuntimeDeps {
  readonly config: Config;
  readonly database: Database;
  readonly secrets: SecretBox;
  readonly clock: Clock;
  readonly log: Logger;
  readonly entities: EntityStore;
  readonly observations: ObservationStore;
  /** Resolves webhook hosts (default: the system resolver); tests inject their own. */
  readonly resolver?: Resolver;
}

/** See the file comment. */
export class WebhookRuntime {
  readonly subscriptions: SubscriptionStore;
  readonly deliveries: DeliveryStore;
  readonly outbox: DriftOutbox;
  readonly dispatcher: WebhookDispatcher;
  readonly drift: DriftWorker;
  readonly urls: UrlPolicy;
  private readonly scorer = new DriftScorer();

  constructor(private readonly deps: WebhookRuntimeDeps) {
    const { config, database, clock, log } = deps;
    const guard = new AddressGuard({ allowPrivate: config.webhookAllowPrivate, allowCidrs: config.webhookAllowCidrs });
    this.urls = { allowHttp: config.webhookAllowHttp, guard, resolver: deps.resolver ?? systemResolver };
    this.subscriptions = new SubscriptionStore(database, deps.secrets);
    this.deliveries = new DeliveryStore(database);
    this.outbox = new DriftOutbox(database);
    this.dispatcher = new WebhookDispatcher({
      deliveries: this.deliveries,
      subscriptions: this.subscriptions,
      clock,
      log,
      sender: { ...this.urls, timeoutMs: config.webhookTimeoutMs },
      retryBaseMs: config.webhookRetryBaseMs,
      owner: newId('wkr', clock),
    });
    this.drift = new DriftWorker({
      database,
      outbox: this.outbox,
      subscriptions: this.subscriptions,
      deliveries: this.deliveries,
      entities: deps.entities,
      observations: deps.observations,
      scorer: this.scorer,
      clock,
      log,
      onEvents: () => this.dispatcher.poke(),
    });
    const listener = driftOutboxListener();
    deps.observations.onIngest(async (trx, ingest) => {
      await listener(trx, ingest);
      setImmediate(() => this.drift.poke()); // after the commit, usually; the worker's poll covers the rest
    });
  }

  /** Start the workers. On SQLite (one writing process) claims left by a killed process are released first. */
  async start(): Promise<void> {
    if (this.deps.database.dialect === 'sqlite') {
      await this.deliveries.releaseAll();
      await this.outbox.releaseAll();
    }
    this.drift.start();
    this.dispatcher.start();
  }

  /** Stop the workers (attempts in flight finish first, each bounded by its timeout). */
  async stop(): Promise<void> {
    await Promise.all([this.drift.stop(), this.dispatcher.stop()]);
    await this.scorer.close();
  }
}
