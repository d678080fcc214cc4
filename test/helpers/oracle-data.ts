/**
 * Entities with daily data for tests that query the oracle: created and ingested through the
 * REST API like any client would.
 */
import assert from 'node:assert/strict';
import { OracleServiceClient, type QueryRequest } from '../../gen/forecast/v1/oracle_service.pb';
import { grpcCall, rest, type Outcome } from './dual';
import type { TestService } from './service';
import type { Frequency } from '../../src/entities/frequency';

export const DAY = 86_400_000;
/** First observation of the test series: a Monday. */
export const START = Date.UTC(2025, 0, 6);

/** RFC 3339 time of day `i` of the test series. */
export function dayTime(i: number): string {
  return new Date(START + i * DAY).toISOString().replace('.000Z', 'Z');
}

/** One axis of a test entity: its name and kind, its grid step (ms) and `n` values of `value(i)` from `START`. */
export interface SeriesSpec {
  readonly frequency: Frequency;
  readonly axis: string;
  readonly kind?: 'continuous' | 'count';
  readonly step: number;
  readonly n: number;
  readonly value: (i: number) => number;
}

/** Create an entity with one axis and ingest its values (`SeriesSpec`), through REST. */
export async function seriesEntity(t: TestService, key: string, entity: string, spec: SeriesSpec): Promise<void> {
  const axis = spec.kind ? { name: spec.axis, kind: spec.kind } : { name: spec.axis };
  const created = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: spec.frequency, axes: [axis] } });
  assert.equal(created.code, 'ok', created.message);
  const time = (i: number): string => new Date(START + i * spec.step).toISOString().replace('.000Z', 'Z');
  const observations = Array.from({ length: spec.n }, (_, i) => ({ axis: spec.axis, time: time(i), value: spec.value(i) }));
  const ingested = await rest(t, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations } });
  assert.equal(ingested.code, 'ok', ingested.message);
}

/** Create a daily entity with one `demand` axis and ingest `days` values of `value(i)`. */
export function dailyEntity(t: TestService, key: string, entity: string, value: (i: number) => number, days = 120): Promise<void> {
  return seriesEntity(t, key, entity, { frequency: 'P1D', axis: 'demand', step: DAY, n: days, value });
}

/** A weekly pattern with a little deterministic wiggle. */
export function weekly(i: number): number {
  return 100 + [0, 5, 10, 5, 0, 40, 60][i % 7] + ((i * 37) % 11) / 5;
}

/** An oracle query's fields, as REST's JSON names them; absent fields take the request's defaults. */
export type OracleQueryBody = Partial<{
  entity: string;
  depth: number;
  include_manifest: boolean;
  axes: string[];
  horizon: number;
  thresholds: number[];
  quantiles: number[];
  reconciliation: string;
}>;

const oracleClients = new WeakMap<TestService, OracleServiceClient>();

/** OracleService.Query over `protocol`: REST sends `body` as written, gRPC the same fields. */
export function oracleQuery(t: TestService, key: string, protocol: 'rest' | 'grpc', body: OracleQueryBody): Promise<Outcome> {
  if (protocol === 'rest') return rest(t, key, { method: 'POST', path: '/v1/oracle/query', body });
  if (!oracleClients.has(t)) oracleClients.set(t, t.client(OracleServiceClient));
  const client = oracleClients.get(t)!;
  const req: QueryRequest = {
    entity: body.entity ?? '',
    depth: body.depth ?? 0,
    includeManifest: body.include_manifest ?? false,
    axes: body.axes ?? [],
    horizon: body.horizon ?? 0,
    thresholds: body.thresholds ?? [],
    quantiles: body.quantiles ?? [],
    reconciliation: body.reconciliation ?? '',
  };
  return grpcCall(client, client.query, key, req);
}
