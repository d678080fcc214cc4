/** EntityService: entities, relations, observations. Written once, served over gRPC and REST. */
import type { Entity, Observation } from '../../gen/forecast/v1/entity.pb';
import { EntityServiceService, type BulkIngestObservationsRequest, type BulkIngestObservationsResponse } from '../../gen/forecast/v1/entity_service.pb';
import { formatTime } from '../clock';
import { InFlight } from '../in-flight';
import { accountOf, type CallContext } from '../rpc/context';
import { invalidArgument, NotFoundError, ServiceError, quote } from '../rpc/errors';
import type { CursorCodec } from '../rpc/pagination';
import { pageSize, splitPage } from '../rpc/pagination';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { checkEntityType, parseEntityId } from './entity-id';
import type { EntityRecord, EntityStore } from './entity-store';
import {
  checkAxes,
  checkParents,
  checkRows,
  MAX_AXES,
  MAX_OBSERVATIONS_PER_REQUEST,
  MAX_OBSERVATIONS_PER_STREAM,
  sameRowContext,
  type RowContext,
} from './entity-validation';
import { checkFrequency, defaultSeasonLength, MAX_SEASON_LENGTH, parseTime } from './frequency';
import type { IngestBatch, IngestGuard, ObservationStore } from './observation-store';
import { CONTAINS, relationEndpoints } from '../graph/relation-endpoints';
import type { RelationStore } from '../graph/relation-store';

/** An ingest message as checked before its transaction: what `ingestGuard` checks again. */
interface CheckedMessage {
  readonly entity: string;
  readonly observations: readonly Observation[];
  /** How the request names its rows (`messages[2].observations`). */
  readonly field: string;
  readonly checked: RowContext;
  /** The entity's incarnation the rows were checked for (`EntityRecord.incarnation`). */
  readonly incarnation: string;
}

export interface EntityServiceDeps {
  readonly entities: EntityStore;
  readonly observations: ObservationStore;
  readonly relations: RelationStore;
  readonly cursors: CursorCodec;
}

/** The wire form of an entity. */
export function toEntityMessage(e: EntityRecord): Entity {
  let message = entityMessages.get(e);
  if (!message) entityMessages.set(e, (message = buildEntityMessage(e)));
  return message;
}

/** Messages already built for a record (records of the hot read are shared while unchanged); treat as read-only. */
const entityMessages = new WeakMap<EntityRecord, Entity>();

function buildEntityMessage(e: EntityRecord): Entity {
  return {
    entity: e.entity,
    type: e.type,
    displayName: e.displayName,
    frequency: e.frequency,
    seasonLength: e.seasonLength,
    axes: e.axes.map((a) => ({ name: a.name, unit: a.unit, kind: a.kind, lowerBound: a.lowerBound, upperBound: a.upperBound })),
    parents: [...e.parents],
    createTime: formatTime(e.createTime),
    updateTime: formatTime(e.updateTime),
  };
}

/**
 * An int64 request field (string under forceLong=string) as a non-negative safe integer. One
 * beyond 2^53 − 1 is a revision no account reaches: said so (found by QA: 9223372036854775807 was
 * refused as "must be a non-negative integer").
 */
function parseRevision(value: string, field: string): number {
  const n = Number(value || '0');
  if (n < 0) throw invalidArgument(field, `must be a non-negative integer, got ${value}`);
  if (!Number.isSafeInteger(n)) throw invalidArgument(field, `${value} is newer than any data revision (they stay below 2^53)`);
  return n;
}

/**
 * Bulk ingest streams one account may have open at once, per process. Why: a stream's rows are
 * held until its one transaction (all or nothing), about 600 MB for the 1,000,000 rows one may
 * carry; found by QA, one free account held three such streams open at once (RSS +570 MB, never
 * given back) and nothing stopped it opening more.
 */
export const MAX_OPEN_STREAMS = 2;

export function entityService(deps: EntityServiceDeps): ServiceBinding {
  const { entities, observations, relations, cursors } = deps;
  const openStreams = new InFlight();

  const mustGet = async (accountId: string, entity: string): Promise<EntityRecord> => {
    const found = await entities.get(accountId, entity);
    if (!found) throw new NotFoundError('entity', entity);
    return found;
  };

  const rowContext = (e: EntityRecord): RowContext => ({
    frequency: e.frequency,
    axes: new Map(e.axes.map((a) => [a.name, a])),
  });

  /**
   * The ingest's check inside its transaction: every entity written is locked (a delete, or a
   * change of its frequency or an axis kind, waits for the commit or is seen here), and rows
   * checked against a definition that changed meanwhile are checked again against the new one.
   */
  const ingestGuard =
    (accountId: string, messages: readonly CheckedMessage[], missing: (m: CheckedMessage) => Error): IngestGuard =>
    async (trx) => {
      const locked = await entities.lock(trx, accountId, messages.map((m) => m.entity), 'share', { parents: false });
      for (const m of messages) {
        const record = locked.get(m.entity);
        // gone, or deleted and made again while the rows were written (even within the same
        // millisecond: the incarnation, not the create time): not the entity they were checked for
        if (!record || record.incarnation !== m.incarnation) throw missing(m);
        const now = rowContext(record);
        if (!sameRowContext(m.checked, now)) checkRows(m.observations, now, m.field, new Map(), m.entity);
      }
    };

  /** A bulk ingest stream: every message checked as it arrives, then all stored as one revision. */
  async function ingestStream(accountId: string, requests: AsyncIterable<BulkIngestObservationsRequest>, ctx: CallContext): Promise<BulkIngestObservationsResponse> {
    const known = new Map<string, { rc: RowContext; incarnation: string }>();
    const seen = new Map<string, string>();
    const batches: IngestBatch[] = [];
    const checked: CheckedMessage[] = [];
    let total = 0;
    let messages = 0;
    for await (const req of requests) {
      const at = `messages[${messages}]`;
      messages++;
      const { entity } = parseEntityId(req.entity, `${at}.entity`);
      const n = req.observations.length;
      if (n === 0) throw invalidArgument(`${at}.observations`, 'at least one observation is required');
      if (n > MAX_OBSERVATIONS_PER_REQUEST) throw invalidArgument(`${at}.observations`, `at most ${MAX_OBSERVATIONS_PER_REQUEST} per message, got ${n}`);
      total += n;
      if (total > MAX_OBSERVATIONS_PER_STREAM) throw invalidArgument('observations', `at most ${MAX_OBSERVATIONS_PER_STREAM} per stream`);
      let seenEntity = known.get(entity);
      if (!seenEntity) {
        const record = await entities.get(accountId, entity);
        if (!record) throw invalidArgument(`${at}.entity`, `entity ${entity} does not exist`);
        seenEntity = { rc: rowContext(record), incarnation: record.incarnation };
        known.set(entity, seenEntity);
      }
      const { rc, incarnation } = seenEntity;
      batches.push({ entity, field: `${at}.observations`, rows: checkRows(req.observations, rc, `${at}.observations`, seen, entity) });
      checked.push({ entity, observations: req.observations, field: `${at}.observations`, checked: rc, incarnation });
    }
    if (messages === 0) throw invalidArgument('messages', 'the stream carried no request');
    const guard = ingestGuard(accountId, checked, (m) => invalidArgument(`${m.field.slice(0, -'.observations'.length)}.entity`, `entity ${m.entity} does not exist`));
    const result = await observations.ingest(accountId, batches, ctx.clock.now(), ctx.signal, guard);
    return { revision: String(result.revision), accepted: result.accepted, corrections: result.corrections, messages };
  }

  return bindService(EntityServiceService, {
    createEntity: {
      access: 'data:write',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const { entity, type } = parseEntityId(req.entity);
        if (req.displayName.length > 200) throw invalidArgument('display_name', 'at most 200 characters');
        const frequency = req.frequency ? checkFrequency(req.frequency) : undefined;
        if (req.seasonLength !== 0 && (!Number.isInteger(req.seasonLength) || req.seasonLength < 1 || req.seasonLength > MAX_SEASON_LENGTH)) {
          throw invalidArgument('season_length', `must be 1..${MAX_SEASON_LENGTH} (0 = default), got ${req.seasonLength}`);
        }
        const axes = checkAxes(req.axes);
        const parents = checkParents(req.parents, entity);
        const now = ctx.clock.now();
        const made = await entities.database.transaction(async (trx) => {
          if (parents.length > 0) await relations.lockKind(trx, accountId, CONTAINS);
          const existing = (await entities.lock(trx, accountId, [entity], 'update')).get(entity);
          if (!existing && !frequency) throw invalidArgument('frequency', 'is required when creating an entity');
          const freq = frequency ?? existing!.frequency;
          if (existing && freq !== existing.frequency && (await entities.hasObservations(trx, accountId, entity))) {
            throw new ServiceError('failed_precondition', `frequency: cannot change from ${existing.frequency} to ${freq}: ${entity} has observations`, { field: 'frequency' });
          }
          // listed axes are added to the kept ones: the cap holds for the entity, not only the request
          // (found by QA: 32 new axes at a time made an entity of 1,024, and a default query forecast them all)
          const total = new Set([...(existing?.axes ?? []).map((a) => a.name), ...axes.map((a) => a.name)]).size;
          if (total > MAX_AXES) {
            throw invalidArgument('axes', `${entity} would have ${total} axes; an entity has at most ${MAX_AXES} (it has ${existing?.axes.length ?? 0})`);
          }
          for (const [i, a] of axes.entries()) {
            const old = existing?.axes.find((x) => x.name === a.name);
            if (!old || (old.kind === a.kind && old.lowerBound === a.lowerBound && old.upperBound === a.upperBound)) continue;
            if (!(await entities.hasObservations(trx, accountId, entity, a.name))) continue;
            if (old.kind !== a.kind) {
              throw new ServiceError('failed_precondition', `axes[${i}].kind: cannot change axis ${a.name} from ${old.kind} to ${a.kind}: it has observations`, { field: `axes[${i}].kind` });
            }
            // the bounds shaped every answer already given from its observations: a replay must meet the same ones
            const [field, from, to] = old.lowerBound !== a.lowerBound ? ['lower_bound', old.lowerBound, a.lowerBound] : ['upper_bound', old.upperBound, a.upperBound];
            throw new ServiceError('failed_precondition', `axes[${i}].${field}: cannot change axis ${a.name}'s ${field} from ${from ?? 'none'} to ${to ?? 'none'}: it has observations`, { field: `axes[${i}].${field}` });
          }
          const found = await entities.lock(trx, accountId, parents, 'share');
          for (const [i, p] of parents.entries()) {
            if (!found.has(p)) throw invalidArgument(`parents[${i}]`, `entity ${p} does not exist`);
            if (await relations.reaches(trx, accountId, entity, p, CONTAINS)) {
              throw invalidArgument(`parents[${i}]`, `${p} is contained in ${entity}: the relation would close a cycle`);
            }
          }
          const seasonLength = req.seasonLength || (existing && freq === existing.frequency ? existing.seasonLength : defaultSeasonLength(freq));
          await entities.upsertRow(trx, accountId, { entity, type, displayName: req.displayName, frequency: freq, seasonLength }, now);
          await entities.upsertAxes(trx, accountId, entity, axes);
          // again now that the row is ours: on PostgreSQL two creates of a new entity both pass the check
          // above (nothing to lock yet) and the second's upsert waits for the first (found by review: 3 × 20 made 60)
          const stored = await entities.axisCount(trx, accountId, entity);
          if (stored > MAX_AXES) throw invalidArgument('axes', `${entity} would have ${stored} axes; an entity has at most ${MAX_AXES} (it has ${stored - axes.length} or more)`);
          for (const p of parents) await relations.add(trx, accountId, p, entity, CONTAINS, now);
          // read in the transaction: a delete committed right after must not turn the answer into a 404
          return (await entities.get(accountId, entity, trx))!;
        }, { signal: ctx.signal });
        return { entity: toEntityMessage(made) };
      },
    },

    getEntity: {
      access: 'forecast:read',
      async handle(req, ctx) {
        const { entity } = parseEntityId(req.entity);
        return { entity: toEntityMessage(await mustGet(accountOf(ctx), entity)) };
      },
    },

    listEntities: {
      access: 'forecast:read',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        if (req.type) checkEntityType(req.type);
        const size = pageSize(req.pageSize);
        const query = `ListEntities|${req.type}`;
        const after = req.cursor ? cursors.decode<{ e: string }>(accountId, query, req.cursor).e : undefined;
        const { page, more } = splitPage(await entities.list(accountId, req.type || undefined, after, size + 1), size);
        return {
          entities: page.map(toEntityMessage),
          nextCursor: more ? cursors.encode(accountId, query, { e: page[page.length - 1].entity }) : '',
        };
      },
    },

    deleteEntity: {
      access: 'data:write',
      async handle(req, ctx) {
        const { entity } = parseEntityId(req.entity);
        if (!(await entities.delete(accountOf(ctx), entity, ctx.signal))) throw new NotFoundError('entity', entity);
        return { entity, deleted: true };
      },
    },

    ingestObservations: {
      access: 'data:write',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const { entity } = parseEntityId(req.entity);
        const n = req.observations.length;
        if (n === 0) throw invalidArgument('observations', 'at least one observation is required');
        if (n > MAX_OBSERVATIONS_PER_REQUEST) {
          throw invalidArgument('observations', `at most ${MAX_OBSERVATIONS_PER_REQUEST} per request, got ${n} (use BulkIngestObservations for more)`);
        }
        const record = await mustGet(accountId, entity);
        const rows = checkRows(req.observations, rowContext(record), 'observations', new Map(), entity);
        const guard = ingestGuard(accountId, [{ entity, observations: req.observations, field: 'observations', checked: rowContext(record), incarnation: record.incarnation }], () => new NotFoundError('entity', entity));
        const result = await observations.ingest(accountId, [{ entity, field: 'observations', rows }], ctx.clock.now(), ctx.signal, guard);
        return { entity, revision: String(result.revision), accepted: result.accepted, corrections: result.corrections };
      },
    },

    bulkIngestObservations: {
      access: 'data:write',
      // counted before anything reads the stream (the idempotency interceptor reads it whole first)
      admit(ctx) {
        const accountId = accountOf(ctx);
        if (openStreams.count(accountId) >= MAX_OPEN_STREAMS) {
          throw new ServiceError('quota_exceeded', `at most ${MAX_OPEN_STREAMS} bulk ingest streams of one account at once; retry when one has finished`, { limit: MAX_OPEN_STREAMS }, { 'retry-after': '1' });
        }
        return openStreams.enter(accountId);
      },
      handleStream(requests, ctx) {
        return ingestStream(accountOf(ctx), requests, ctx);
      },
    },

    listObservations: {
      access: 'forecast:read',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const { entity } = parseEntityId(req.entity);
        const record = await mustGet(accountId, entity);
        if (req.axis && !record.axes.some((a) => a.name === req.axis)) {
          throw invalidArgument('axis', `entity ${entity} has no axis ${quote(req.axis)}`);
        }
        const start = req.start ? parseTime(req.start, 'start', 'ceil') : undefined;
        const end = req.end ? parseTime(req.end, 'end', 'ceil') : undefined;
        const requested = parseRevision(req.asOfRevision, 'as_of_revision');
        const size = pageSize(req.pageSize);
        const query = `ListObservations|${entity}|${req.axis}|${start ?? ''}|${end ?? ''}|${requested}`;
        let asOf: number;
        let after: [string, number] | undefined;
        if (req.cursor) {
          const pos = cursors.decode<{ a: string; t: number; r: number }>(accountId, query, req.cursor);
          asOf = pos.r;
          after = [pos.a, pos.t];
        } else {
          const latest = await observations.latestRevision(accountId);
          if (requested > latest) throw invalidArgument('as_of_revision', `${requested} is newer than the latest revision ${latest}`);
          asOf = requested || latest;
        }
        const rows = await observations.list(accountId, entity, { axis: req.axis || undefined, start, end, asOf, after, limit: size + 1 });
        const { page, more } = splitPage(rows, size);
        const last = page[page.length - 1];
        return {
          observations: page.map((o) => ({ axis: o.axis, time: formatTime(o.time), value: o.value, revision: String(o.revision) })),
          nextCursor: more ? cursors.encode(accountId, query, { a: last.axis, t: last.time, r: asOf }) : '',
          dataRevision: String(asOf),
        };
      },
    },

    ...relationEndpoints(deps),
  });
}

export type { CallContext };
