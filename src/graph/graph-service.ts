/** GraphService.QueryPaths (API.md section 9): paginated path traversal, optionally with node forecasts. */
import { GraphServiceService, type Path, type QueryPathsRequest } from '../../gen/forecast/v1/graph_service.pb';
import { checkAxisName, parseEntityId } from '../entities/entity-id';
import { MAX_AXES } from '../entities/entity-validation';
import type { EntityStore } from '../entities/entity-store';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError } from '../rpc/errors';
import { pageSize, type CursorCodec } from '../rpc/pagination';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { checkRelationKind } from './relation-endpoints';
import type { RelationStore } from './relation-store';
import { loadNeighbourhood, pagePaths, type Direction } from './traversal';
import type { NodeForecaster } from './node-forecasts';

/** Most steps of a path (API.md: depth ≤ 8). */
export const MAX_PATH_DEPTH = 8;
/** Horizon range: as the oracle query. */
const MAX_HORIZON = 1000;

export interface GraphServiceDeps {
  readonly entities: EntityStore;
  readonly relations: RelationStore;
  readonly cursors: CursorCodec;
  readonly nodeForecasts: NodeForecaster;
}

interface CheckedPathsRequest {
  readonly from: string;
  readonly to: string | undefined;
  readonly direction: Direction;
  readonly relation: string;
  readonly depth: number;
  readonly axes: readonly string[];
  readonly horizon: number;
}

/** Validate every field that does not need the database; defaults applied. */
function checkPathsRequest(req: QueryPathsRequest): CheckedPathsRequest {
  const { entity: from } = parseEntityId(req.from, 'from');
  const to = req.to ? parseEntityId(req.to, 'to').entity : undefined;
  const direction = (req.direction || 'down') as Direction;
  if (!['down', 'up', 'both'].includes(direction)) throw invalidArgument('direction', `must be down, up or both, got ${JSON.stringify(req.direction.slice(0, 20))}`);
  const relation = checkRelationKind(req.relation, 'relation');
  const depth = req.depth || 1;
  if (!Number.isInteger(depth) || depth < 1 || depth > MAX_PATH_DEPTH) throw invalidArgument('depth', `must be 1..${MAX_PATH_DEPTH}, got ${req.depth}`);
  if (req.axes.length > MAX_AXES) throw invalidArgument('axes', `at most ${MAX_AXES}, got ${req.axes.length}`);
  const seen = new Set<string>();
  req.axes.forEach((a, i) => {
    checkAxisName(a, `axes[${i}]`);
    if (seen.has(a)) throw invalidArgument(`axes[${i}]`, `duplicate axis ${a}`);
    seen.add(a);
  });
  const horizon = req.horizon || 1;
  if (!Number.isInteger(horizon) || horizon < 1 || horizon > MAX_HORIZON) throw invalidArgument('horizon', `must be 1..${MAX_HORIZON}, got ${req.horizon}`);
  return { from, to, direction, relation, depth, axes: [...req.axes], horizon };
}

export function graphService(deps: GraphServiceDeps): ServiceBinding {
  const { entities, relations, cursors, nodeForecasts } = deps;
  return bindService(GraphServiceService, {
    queryPaths: {
      access: 'forecast:read',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const q = checkPathsRequest(req);
        const size = pageSize(req.pageSize);
        const query = `QueryPaths|${JSON.stringify(q)}`;
        const after = req.cursor ? cursors.decode<string[]>(accountId, query, req.cursor) : undefined;
        const named = q.to === undefined ? [q.from] : [q.from, q.to];
        const found = await entities.existing(entities.database.db, accountId, named);
        for (const e of named) if (!found.has(e)) throw new NotFoundError('entity', e);
        const adjacency = await loadNeighbourhood(relations, accountId, q.from, q.relation, q.direction, q.depth);
        const { paths, resume } = pagePaths(adjacency, q.from, { depth: q.depth, to: q.to }, after, size);
        const onPage = [...new Set(paths.flatMap((p) => p.map((s) => s.entity)))];
        const forecasts = q.axes.length > 0 ? await nodeForecasts.means(accountId, onPage, q.axes, q.horizon, ctx.signal) : undefined;
        const out: Path[] = paths.map((p) => ({
          nodes: p.map((s) => {
            const f = forecasts?.get(s.entity);
            return { entity: s.entity, step: s.step, axesResolved: f?.axesResolved ?? {}, warnings: f ? [...f.warnings] : [] };
          }),
        }));
        // a page can be short, even empty, with a cursor: the walk's work per page is bounded (`MAX_STEPS_PER_PAGE`)
        return { paths: out, nextCursor: resume ? cursors.encode(accountId, query, resume) : '' };
      },
    },
  });
}
