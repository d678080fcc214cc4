/**
 * The relation RPCs of EntityService (CreateRelation, ListRelations, DeleteRelation): written
 * once here and bound with the rest of the service in `entities/entity-service.ts`.
 */
import type { Relation } from '../../gen/forecast/v1/entity.pb';
import type { EntityServiceService } from '../../gen/forecast/v1/entity_service.pb';
import { formatTime } from '../clock';
import { parseEntityId } from '../entities/entity-id';
import type { EntityStore } from '../entities/entity-store';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError } from '../rpc/errors';
import type { ServiceImpl } from '../rpc/method';
import { pageSize, splitPage, type CursorCodec } from '../rpc/pagination';
import type { RelationPosition, RelationRecord, RelationStore } from './relation-store';

/** The kind that defines aggregation, and the default everywhere a kind may be omitted. */
export const CONTAINS = 'contains';

const KIND = /^[a-z][a-z_]{0,31}$/;

/** A relation kind (`[a-z][a-z_]{0,31}`), `contains` when empty. Throws 400 naming `field`. */
export function checkRelationKind(value: string, field: string): string {
  if (value === '') return CONTAINS;
  if (!KIND.test(value)) throw invalidArgument(field, `${JSON.stringify(value.slice(0, 40))} is not a valid relation kind: expected [a-z][a-z_]{0,31}`);
  return value;
}

/** The wire form of a relation. */
export function toRelationMessage(r: RelationRecord): Relation {
  return { parent: r.parent, child: r.child, kind: r.kind, createTime: formatTime(r.createTime) };
}

export interface RelationEndpointDeps {
  readonly entities: EntityStore;
  readonly relations: RelationStore;
  readonly cursors: CursorCodec;
}

type RelationMethods = 'createRelation' | 'listRelations' | 'deleteRelation';

/** The relation endpoints, to spread into EntityService's binding. */
export function relationEndpoints(deps: RelationEndpointDeps): Pick<ServiceImpl<typeof EntityServiceService>, RelationMethods> {
  const { entities, relations, cursors } = deps;
  return {
    createRelation: {
      access: 'data:write',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const { entity: parent } = parseEntityId(req.parent, 'parent');
        const { entity: child } = parseEntityId(req.child, 'child');
        const kind = checkRelationKind(req.kind, 'kind');
        if (parent === child) throw invalidArgument('child', 'must differ from parent');
        const relation = await relations.database.transaction(async (trx) => {
          await relations.lockKind(trx, accountId, kind);
          // The write comes first: on SQLite the transaction then holds the write lock before it
          // reads, so its reads cannot go stale (a checkpoint that restarts the WAL between a read
          // and the first write fails that write with SQLITE_BUSY). The checks below roll it back.
          const added = await relations.add(trx, accountId, parent, child, kind, ctx.clock.now());
          // locked: neither can be deleted before this commits (a delete then removes the edge too)
          const found = await entities.lock(trx, accountId, [parent, child], 'share');
          if (!found.has(parent)) throw invalidArgument('parent', `entity ${parent} does not exist`);
          if (!found.has(child)) throw invalidArgument('child', `entity ${child} does not exist`);
          // The new edge runs parent → child, so it cannot itself make child reach parent.
          if (await relations.reaches(trx, accountId, child, parent, kind)) {
            throw invalidArgument('child', `${child} already reaches ${parent} by ${kind} relations: the relation would close a cycle`);
          }
          return added;
        }, { signal: ctx.signal });
        return { relation: toRelationMessage(relation) };
      },
    },

    listRelations: {
      access: 'forecast:read',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const parent = req.parent ? parseEntityId(req.parent, 'parent').entity : undefined;
        const child = req.child ? parseEntityId(req.child, 'child').entity : undefined;
        const kind = req.kind ? checkRelationKind(req.kind, 'kind') : undefined;
        const size = pageSize(req.pageSize);
        const query = `ListRelations|${parent ?? ''}|${child ?? ''}|${kind ?? ''}`;
        const after = req.cursor ? cursors.decode<RelationPosition>(accountId, query, req.cursor) : undefined;
        if (!after) {
          // A filter naming a missing (or another account's) entity is 404, not an empty page.
          const named = [parent, child].filter((e): e is string => e !== undefined);
          const found = await entities.existing(entities.database.db, accountId, named);
          for (const e of named) if (!found.has(e)) throw new NotFoundError('entity', e);
        }
        const { page, more } = splitPage(await relations.list(accountId, { parent, child, kind }, after, size + 1), size);
        const last = page[page.length - 1];
        return {
          relations: page.map(toRelationMessage),
          nextCursor: more ? cursors.encode(accountId, query, [last.parent, last.kind, last.child] satisfies RelationPosition) : '',
        };
      },
    },

    deleteRelation: {
      access: 'data:write',
      async handle(req, ctx) {
        const { entity: parent } = parseEntityId(req.parent, 'parent');
        const { entity: child } = parseEntityId(req.child, 'child');
        if (!req.kind) throw invalidArgument('kind', 'is required');
        const kind = checkRelationKind(req.kind, 'kind');
        const deleted = await relations.delete(accountOf(ctx), parent, child, kind);
        if (!deleted) throw new NotFoundError('relation', `${parent} ${kind} ${child}`);
        return { relation: toRelationMessage(deleted), deleted: true };
      },
    },
  };
}
