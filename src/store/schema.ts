/**
 * Table types for the query layer (kysely). Times are epoch milliseconds (BIGINT) so they sort
 * and compare the same way on SQLite and PostgreSQL; booleans are 0/1 integers for the same reason.
 */
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  /** Unique; set by the operator CLI (`accounts create --email`). */
  email: string | null;
  /** The email a sign-up gave (not unique: see migration 0010); null for operator-made accounts. */
  contact_email: Generated<string | null>;
  tier: string;
  create_time: number;
  /** The account's latest data revision (0 before its first ingest); each ingest increments it. */
  data_revision: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  /** SHA-256 (hex) of the whole key: the key itself is never stored. */
  hash: string;
  /** First characters of the key, for display (`fk_live_AbCd`). */
  prefix: string;
  /** Space-separated scopes. */
  scopes: string;
  name: string;
  create_time: number;
  expire_time: number | null;
  revoke_time: number | null;
}

export interface EntitiesTable {
  account_id: string;
  entity: string;
  type: string;
  display_name: string;
  frequency: string;
  season_length: number;
  create_time: number;
  update_time: number;
  /**
   * Which incarnation of the entity this row is: random (32 hex digits), set when the row is
   * inserted, never updated, so an entity deleted and made again under the same name differs even
   * within one millisecond or across skewed clocks (`create_time` does not). Internal: never in
   * an answer. Since 0012_entity_incarnation.
   */
  incarnation: string;
}

export interface AxesTable {
  account_id: string;
  entity: string;
  name: string;
  unit: string;
  kind: string;
  /** Null when unset. */
  lower_bound: number | null;
  upper_bound: number | null;
}

export interface RelationsTable {
  account_id: string;
  parent: string;
  child: string;
  kind: string;
  create_time: number;
}

export interface RevisionsTable {
  /** Per account: (account_id, revision) is the key. */
  revision: number;
  account_id: string;
  create_time: number;
  observation_count: number;
}

export interface ObservationsTable {
  account_id: string;
  entity: string;
  axis: string;
  time: number;
  revision: number;
  value: number;
}

export interface UsageTable {
  account_id: string;
  /** Calendar month (UTC) as `YYYY-MM`. */
  month: string;
  count: number;
}

export interface IdempotencyTable {
  account_id: string;
  /** gRPC path of the method: keys are scoped to account + method. */
  method: string;
  key: string;
  /** SHA-256 (hex) of the request's binary encoding. */
  fingerprint: string;
  /**
   * `running` while the first call executes and nothing of it is committed; `applied` once a
   * transaction of it committed (set in that transaction: such a claim never lapses into a second
   * execution); `done` once its outcome is recorded.
   */
  state: string;
  /** `ok` or the stored error code. */
  outcome: string | null;
  /** base64 of the response encoding, or JSON of the error {message, details}, sealed under the master key (`sb1.…`, see rpc/idempotency.ts). */
  response: string | null;
  /** JSON of the response headers to replay. */
  headers: string | null;
  /** When the claim was taken; also the claim's fencing token (`rpc/idempotency.ts`). */
  create_time: number;
  /**
   * A `running` claim older than this was abandoned (crash) and may be taken over; an `applied`
   * one is answered 409 until then (its outcome may still be recorded), `already_exists` after.
   */
  lock_expire_time: number;
  /** End of the 24-hour window. */
  expire_time: number;
}

export interface SignupsTable {
  /** Client address that signed up (for the per-address limit). */
  address: string;
  create_time: number;
  account_id: string;
}

export interface QueriesTable {
  query_id: string;
  account_id: string;
  entity: string;
  create_time: number;
  /** The data revision the query read. */
  data_revision: number;
  key_id: string;
  /** JSON: the normalised request. `{}` since 0006_manifests: the manifest's `request` holds it. */
  request: string;
  /**
   * JSON: per axis the inputs (count, first/last time, series digest) and model (name, params,
   * seed). `{}` since 0006_manifests: the manifest carries all of it.
   */
  record: string;
  /**
   * The forecast returned: since 0006_manifests the RFC 8785 canonical JSON of its proto3 JSON
   * form (proto field names), before that canonical JSON of the generated object (camelCase).
   */
  output: string;
  /** SHA-256 (hex) of `output`: the manifest's `output_digest`. */
  output_digest: string;
  /** The signed manifest, RFC 8785 canonical JSON with its signature; null before 0006_manifests. */
  manifest: string | null;
}

export interface SigningKeysTable {
  key_id: string;
  /** 1, 2, …: the highest generation is the key that signs now. */
  generation: number;
  /** base64url of the raw 32-byte Ed25519 public key. */
  public_key: string;
  /** PKCS #8 DER of the private key, sealed with the master key (`store/secret-box.ts`). */
  private_key: string;
  create_time: number;
}

export interface ServerSecretsTable {
  name: string;
  value: string;
}

export interface SubscriptionsTable {
  /** `sub_…`. */
  id: string;
  account_id: string;
  entity: string;
  /** JSON array of axis names; empty = every axis. */
  axes: string;
  /** 0/1. */
  include_descendants: number;
  url: string;
  /** JSON array of event types. */
  events: string;
  level: number;
  /** `active` or `paused`. */
  state: string;
  pause_reason: string;
  /** The signing secret, sealed (store/secret-box.ts, context `webhook-secret:<id>`). */
  secret: string;
  /** The previous secret during a rotation's grace period, sealed (`webhook-secret-previous:<id>`). */
  previous_secret: string | null;
  previous_secret_expire_time: number | null;
  create_time: number;
  update_time: number;
  /** The account's data revision when the subscription was made; null in those made before it was recorded. */
  start_revision: number | null;
}

export interface DriftOutboxTable {
  /** Insertion order. */
  id: Generated<number>;
  account_id: string;
  entity: string;
  /** The data revision whose observations are to be scored. */
  revision: number;
  create_time: number;
  /** A worker's claim ends at this time (null: unclaimed). */
  lease_expire_time: number | null;
}

export interface DriftStatesTable {
  subscription_id: string;
  entity: string;
  axis: string;
  /** JSON of the engine's DriftState (engine/drift/score.ts). */
  state: string;
  /** Bumped on every write: a concurrent writer's stale update matches no row. */
  version: number;
  update_time: number;
}

export interface WebhookEventsTable {
  /** `evt_…`: the webhook-id. */
  id: string;
  account_id: string;
  subscription_id: string;
  type: string;
  create_time: number;
  /** The exact JSON body sent (signatures cover these bytes). */
  payload: string;
}

export interface WebhookDeliveriesTable {
  /** `dlv_…`. */
  id: string;
  account_id: string;
  subscription_id: string;
  event_id: string;
  /** `pending`, `succeeded` or `failed`. */
  state: string;
  attempt_count: number;
  /** When the next attempt is due (pending only). */
  next_attempt_time: number | null;
  /** Which process holds the claim, until when. */
  lease_owner: string | null;
  lease_expire_time: number | null;
  create_time: number;
  update_time: number;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  time: number;
  /** HTTP status, 0 without an answer. */
  status_code: number;
  error: string;
  latency_ms: number;
}

export interface Schema {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  entities: EntitiesTable;
  axes: AxesTable;
  relations: RelationsTable;
  revisions: RevisionsTable;
  observations: ObservationsTable;
  usage: UsageTable;
  idempotency: IdempotencyTable;
  signups: SignupsTable;
  queries: QueriesTable;
  signing_keys: SigningKeysTable;
  server_secrets: ServerSecretsTable;
  subscriptions: SubscriptionsTable;
  drift_outbox: DriftOutboxTable;
  drift_states: DriftStatesTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
