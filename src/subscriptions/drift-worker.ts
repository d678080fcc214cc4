/**
 * The drift worker: takes outbox rows (`drift-outbox.ts`), finds the subscriptions that cover
 * each entity, scores the new observations of each covered axis in the scoring thread
 * (`drift-scorer.ts`, rule in `engine/drift`), and stores in one transaction the new drift
 * states, the events with their deliveries, and the removal of the rows. A state is written only
 * if nobody else wrote it meanwhile (a version check), so two replicas never both score the same
 * observations: the loser rolls back and its rows are retried, finding nothing new to score.
 */
import type { Clock } from '../clock';
import type { EntityStore } from '../entities/entity-store';
import { timeOf } from '../entities/frequency';
import type { ObservationStore } from '../entities/observation-store';
import type { DriftState } from '../engine/drift/score';
import { driftHistoryLength } from '../engine/drift/one-step';
import { newId } from '../ids';
import { InFlight } from '../in-flight';
import type { Logger } from '../log';
import { seasonalInfo, withBounds } from '../oracle/engine-info';
import type { Database } from '../store/database';
import { nextTurn, STATEMENTS_PER_TURN } from '../store/turns';
import { BackgroundLoop, type RoundResult } from './background-loop';
import type { DeliveryStore, NewEvent } from './delivery-store';
import type { DriftJobItem } from './drift-job';
import type { DriftOutbox, OutboxRow } from './drift-outbox';
import type { DriftScorer } from './drift-scorer';
import { DriftSeriesCache, frontierBefore } from './drift-series';
import { driftEventData, eventBody } from './events';
import type { SubscriptionRecord, SubscriptionStore } from './subscription-store';

/** Outbox rows taken per batch (its entities scored, and written as they are scored: `batch`). */
const BATCH = 200;
/**
 * Batches scored at once. Why more than one: one entity's scoring may take seconds (thousands of
 * new values for hundreds of subscriptions), and rows written meanwhile must not wait for it:
 * found by QA, another account's alert waited 14 s behind one 10,000-value ingest, and 32 s behind
 * two. While batches are being scored the outbox is looked at again every GATHER_MS for rows of
 * other entities, and their jobs take turns with the running ones in the scoring thread.
 */
const MAX_BATCHES = 4;
/** Entities of one batch scored at once (each reads its window and states: the database's connections are shared with requests). */
const ENTITIES_AT_ONCE = 4;
/** A claim outlives any round with a wide margin. */
const LEASE_MS = 120_000;
/**
 * How long an entity whose scoring failed waits before it is claimed again. Why wait: a failure
 * that repeats (a stored state that cannot be read) had the worker claim it again at once, round
 * after round (found by review); why not the whole lease: a passing failure (a connection lost)
 * would hold the entity's alerts back for minutes.
 */
const RETRY_MS = 5_000;

/** Longest seasonal period the service declares (a year of daily data). */
const MAX_PERIOD = 366;
/** How long a poke waits before a round, so one round takes what several ingests wrote. */
const GATHER_MS = 250;
/** Longest sleep between looks at the outbox (rows written by other replicas). */
const POLL_MS = 1000;

/** A state write that lost to another writer: the rows of that write are given back and scored again. */
class StaleStateError extends Error {}

/** What the drift worker works with. */
export interface DriftWorkerDeps {
  readonly database: Database;
  readonly outbox: DriftOutbox;
  readonly subscriptions: SubscriptionStore;
  readonly deliveries: DeliveryStore;
  readonly entities: EntityStore;
  readonly observations: ObservationStore;
  readonly scorer: DriftScorer;
  readonly clock: Clock;
  readonly log: Logger;
  /** Called after events were stored (pokes the dispatcher). */
  readonly onEvents: () => void;
}

/** What scoring one entity produced, to be written with the rest of its batch. */
interface EntityOutcome {
  readonly entity: string;
  /** The outbox rows it consumed. */
  readonly ids: readonly number[];
  readonly writes: { readonly sub: SubscriptionRecord; readonly axis: string; readonly state: DriftState; readonly incarnation: string; readonly version: number }[];
  readonly events: NewEvent[];
}

/** One stored state with the version it was read at (0 = none stored). */
interface StoredState {
  readonly state: DriftState | null;
  readonly version: number;
}

/**
 * A drift state as stored: the state and the incarnation of the entity it was scored on (absent in
 * states stored before). Why: a state is keyed by subscription, entity name and axis, and a
 * subscription on a parent with `include_descendants` outlives a child deleted and made again
 * under its name; found by QA, the new child's values up to the old one's last time were never
 * scored and later ones were judged with the old model and verdict (a `drift.resolved` of the
 * deleted entity's drift, then a false `drift.detected`). A state of another incarnation is read as
 * none (and overwritten at its version); entity deletion also removes the states (`deleteOnEntity`).
 */
type StoredDriftState = DriftState & { readonly incarnation?: string };

/** See the file comment. */
export class DriftWorker {
  private running = false;
  /** Aborted by `stop`: scoring requests queued or running in the thread are dropped. */
  private stopping = new AbortController();
  private gathering: NodeJS.Timeout | undefined;
  private readonly series: DriftSeriesCache;
  private readonly loop: BackgroundLoop;

  constructor(private readonly deps: DriftWorkerDeps) {
    // the longest window a job needs is the fit window plus lags before the oldest new observation (hourly: ~2,200 steps)
    this.series = new DriftSeriesCache(deps.database, deps.observations, 2 * driftHistoryLength({ period: 1, periods: [MAX_PERIOD] }));
    this.loop = new BackgroundLoop({
      round: () => this.drain(),
      sleepMs: async () => POLL_MS,
      onError: (error) => deps.log.warn('drift scoring failed; retrying', { error }),
    });
  }

  start(): void {
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.running = true;
    this.loop.start();
  }

  /** Look at the outbox soon (after an ingest in this process): within GATHER_MS, so rounds batch. */
  poke(): void {
    if (!this.running || this.gathering) return;
    this.gathering = setTimeout(() => {
      this.gathering = undefined;
      this.loop.kick();
    }, GATHER_MS);
  }

  /** Resolves once the outbox has nothing left to claim. For tests and the benchmark. */
  settled(): Promise<void> {
    return this.loop.settled();
  }

  /**
   * Stop: no new rows are claimed, and scoring in progress is dropped (its rows are given back,
   * or lapse with their lease, and are scored again after a restart). Why not finish it: found by
   * QA, a SIGTERM during one 10,000-value ingest for 300 subscriptions waited 24 s for the
   * scoring, past the shutdown grace of 10 s.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort(new Error('the drift worker is stopping'));
    if (this.gathering) clearTimeout(this.gathering);
    await this.loop.stop();
  }

  /**
   * Score everything in the outbox, a claimed batch at a time (`batch`). Up to MAX_BATCHES batches
   * run at once, never two with the same entity (a claim leaves out the entities being scored), so
   * rows written meanwhile are not held back by a long batch.
   */
  private async drain(): Promise<RoundResult> {
    const running = new Set<Promise<void>>();
    // `account entity` of the rows being scored (neither holds a space)
    const busy = new InFlight();
    let failure: { error: unknown } | undefined;
    try {
      while (!failure && this.running) {
        if (running.size >= MAX_BATCHES) {
          await Promise.race(running);
          continue;
        }
        const rows = await this.deps.outbox.claim(this.deps.clock.now(), LEASE_MS, BATCH, busy.atLeast(1));
        if (!this.running) {
          // stopped while claiming: the rows go back at once, for the next process or replica
          await this.deps.outbox.release(rows.map((r) => r.id));
          break;
        }
        if (rows.length === 0) {
          if (running.size === 0) break;
          // look again soon for rows of other entities, while the batches in progress run
          await Promise.race([...running, delay(GATHER_MS)]);
          continue;
        }
        const held = rows.map((r) => busy.enter(`${r.accountId} ${r.entity}`));
        const batch: Promise<void> = this.batch(rows)
          .catch((error: unknown) => void (failure ??= { error }))
          .finally(() => {
            for (const release of held) release();
            running.delete(batch);
          });
        running.add(batch);
      }
    } finally {
      await Promise.all(running);
    }
    if (failure) throw failure.error;
    return 'idle';
  }

  /**
   * Score one claimed batch, ENTITIES_AT_ONCE entities at a time, and write what is scored as it
   * comes: entities scored while a write runs go together in the next one (so a batch of small
   * ones is still written in a few transactions — a commit per entity was most of the worker's
   * cost on the event loop it shares with requests — and one entity scored for seconds holds back
   * no other's events). An entity whose scoring fails is claimed again after RETRY_MS. Settles only
   * when every entity has (none is left running), and fails with the first error other than a
   * lost state race; rows that could not be given back lapse with their lease.
   */
  private async batch(rows: readonly OutboxRow[]): Promise<void> {
    const groups = new Map<string, OutboxRow[]>();
    for (const r of rows) {
      const key = `${r.accountId}\u0000${r.entity}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    let failure: { error: unknown } | undefined;
    const fail = (error: unknown) => void (failure ??= { error });
    const giveBack = (ids: readonly number[]) => this.deps.outbox.release(ids).catch(fail);
    const retryLater = (ids: readonly number[]) => this.deps.outbox.postpone(ids, this.deps.clock.now() + RETRY_MS).catch(fail);
    const ready: EntityOutcome[] = [];
    let writing = Promise.resolve();
    const write = async () => {
      const outcomes = ready.splice(0);
      if (outcomes.length === 0) return;
      try {
        await this.commit(outcomes);
      } catch (error) {
        await giveBack(outcomes.flatMap((o) => o.ids));
        if (!(error instanceof StaleStateError)) fail(error);
      }
    };
    const queue = [...groups.values()];
    const score = async (): Promise<void> => {
      for (let group = queue.shift(); group; group = queue.shift()) {
        // stopping: what is not scored yet goes back at once, for the next process or replica
        if (!this.running) return giveBack([group, ...queue.splice(0)].flatMap((g) => g.map((r) => r.id)));
        try {
          ready.push(await this.scoreEntity(group));
        } catch (error) {
          if (!this.running) await giveBack(group.map((r) => r.id));
          else {
            await retryLater(group.map((r) => r.id));
            this.deps.log.warn('drift scoring of an entity failed; it is retried', { entity: group[0].entity, error, retryInMs: RETRY_MS });
          }
          continue;
        }
        writing = writing.then(write);
      }
    };
    await Promise.all(Array.from({ length: Math.min(ENTITIES_AT_ONCE, queue.length) }, score));
    await writing;
    if (failure) throw failure.error;
  }

  /** Score one entity's new observations for every subscription that covers it (nothing written yet). */
  private async scoreEntity(rows: readonly OutboxRow[]): Promise<EntityOutcome> {
    const { accountId, entity } = rows[0];
    const revision = Math.min(...rows.map((r) => r.revision));
    const subs = await this.deps.subscriptions.covering(accountId, entity);
    const record = subs.length > 0 ? await this.deps.entities.get(accountId, entity) : undefined;
    if (record) await this.series.refresh(accountId, record, rows.map((r) => r.revision));
    const outcome: EntityOutcome = { entity, ids: rows.map((r) => r.id), writes: [], events: [] };
    for (const axis of record?.axes ?? []) {
      const covering = subs.filter((s) => s.axes.length === 0 || s.axes.includes(axis.name));
      if (covering.length === 0) continue;
      const stored = await this.loadStates(covering, entity, axis.name, record!.incarnation);
      // where a subscription without a state starts: after the newest observation before the first
      // revision to score, which is the first after the subscription was made (`startRevision`:
      // found by QA, values ingested right after it while the ingest before it was still in the
      // outbox were all history) unless the rows begin later (a new entity's first ingest is history)
      const startFrom = (s: SubscriptionRecord) => (s.startRevision === null ? revision : Math.max(revision, s.startRevision + 1));
      const frontiers = new Map<number, number>();
      for (const s of covering) {
        const from = startFrom(s);
        if (!stored.get(s.id)?.state && !frontiers.has(from)) frontiers.set(from, (await frontierBefore(this.deps.database, accountId, record!, axis.name, from)) ?? -Infinity);
      }
      const frontierOf = (s: SubscriptionRecord) => frontiers.get(startFrom(s)) ?? -Infinity;
      // with the axis's bounds: an alert's expected value and interval are censored to them
      const info = withBounds(seasonalInfo(record!), axis);
      const oldest = Math.min(...covering.map((s) => stored.get(s.id)?.state?.lastIndex ?? frontierOf(s)));
      const from = Number.isFinite(oldest) ? oldest - driftHistoryLength(info) : undefined;
      const window = await this.series.window(accountId, record!, axis.name, from);
      if (window.values.length === 0) continue;
      const items: DriftJobItem[] = covering.map((s) => {
        const frontier = frontierOf(s);
        return { key: s.id, state: stored.get(s.id)?.state ?? null, frontier: Number.isFinite(frontier) ? frontier : window.firstIndex - 1, level: s.level };
      });
      const results = await this.deps.scorer.scoreJob({ info, values: window.values, firstIndex: window.firstIndex, items }, accountId, this.stopping.signal);
      for (const r of results) {
        const sub = covering.find((s) => s.id === r.key)!;
        outcome.writes.push({ sub, axis: axis.name, state: r.state, incarnation: record!.incarnation, version: stored.get(sub.id)?.version ?? 0 });
        for (const t of r.transitions) {
          if (!sub.events.includes(t.type)) continue;
          const id = newId('evt', this.deps.clock);
          const context = { subscriptionId: sub.id, entity, axis: axis.name, level: sub.level, timeOf: (i: number) => timeOf(record!.frequency, i) };
          outcome.events.push({ id, accountId, subscriptionId: sub.id, type: t.type, payload: eventBody(id, t.type, this.deps.clock.now(), driftEventData(t, context)) });
        }
      }
    }
    return outcome;
  }

  /** Write scored entities: states (each only if nobody wrote it meanwhile), events with deliveries, outbox rows removed. */
  private async commit(outcomes: readonly EntityOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const now = this.deps.clock.now();
    const events = outcomes.flatMap((o) => o.events);
    await this.deps.database.transaction(async (trx) => {
      await trx.deleteFrom('drift_outbox').where('id', 'in', outcomes.flatMap((o) => o.ids)).execute();
      // In one order on every replica (subscription, entity, axis): two batches touching the same
      // states in opposite orders deadlocked on PostgreSQL (found by QA; retried, but wasted).
      const ordered = outcomes
        .flatMap(({ entity, writes }) => writes.map((w) => ({ entity, w })))
        .sort((a, b) => compareKeys([a.w.sub.id, a.entity, a.w.axis], [b.w.sub.id, b.entity, b.w.axis]));
      let written = 0;
      for (const { entity, w } of ordered) {
        // other requests get a turn between slices of a large commit (`store/turns.ts`)
        if (++written % STATEMENTS_PER_TURN === 0) await nextTurn();
        const state = JSON.stringify({ ...w.state, incarnation: w.incarnation } satisfies StoredDriftState);
        if (w.version === 0) {
          const res = await trx
            .insertInto('drift_states')
            .values({ subscription_id: w.sub.id, entity, axis: w.axis, state, version: 1, update_time: now })
            .onConflict((oc) => oc.columns(['subscription_id', 'entity', 'axis']).doNothing())
            .executeTakeFirst();
          if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) throw new StaleStateError();
        } else {
          const res = await trx
            .updateTable('drift_states')
            .set({ state, version: w.version + 1, update_time: now })
            .where('subscription_id', '=', w.sub.id)
            .where('entity', '=', entity)
            .where('axis', '=', w.axis)
            .where('version', '=', w.version)
            .executeTakeFirst();
          if (Number(res.numUpdatedRows) === 0) throw new StaleStateError();
        }
      }
      await this.deps.deliveries.enqueue(trx, events, events.map(() => newId('dlv', this.deps.clock)), now);
    });
    if (events.length > 0) this.deps.onEvents();
  }

  /** The subscriptions' stored states of the axis; a state scored on another incarnation of the entity is none (`StoredDriftState`). */
  private async loadStates(subs: readonly SubscriptionRecord[], entity: string, axis: string, incarnation: string): Promise<Map<string, StoredState>> {
    const rows = await this.deps.database.db
      .selectFrom('drift_states')
      .select(['subscription_id', 'state', 'version'])
      .where('subscription_id', 'in', subs.map((s) => s.id))
      .where('entity', '=', entity)
      .where('axis', '=', axis)
      .execute();
    return new Map(
      rows.map((r) => {
        const { incarnation: of, ...state } = JSON.parse(r.state) as StoredDriftState;
        return [r.subscription_id, { state: of === undefined || of === incarnation ? state : null, version: Number(r.version) }];
      }),
    );
  }
}

/** Resolves after `ms` (a timer that never holds the process open). */
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Byte order of two keys of strings, field by field (as the database's "C" collation sorts). */
function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
