/**
 * A small, realistic demo data set for `make run`, generated deterministically (seeded PRNG, fixed
 * dates): a region with two stores (daily demand as counts and revenue, weekly and yearly cycles,
 * a slow trend) and an API server (hourly CPU load with daily and weekly cycles).
 */
import { Rng } from '../engine/rng';
import type { EntityStore } from '../entities/entity-store';
import type { ObservationStore } from '../entities/observation-store';
import { RelationStore } from '../graph/relation-store';
import type { Database } from '../store/database';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Last day of the demo's daily data. */
export const DEMO_END = Date.UTC(2026, 9, 31);

interface StoreShape {
  readonly entity: string;
  readonly name: string;
  readonly base: number;
  readonly weekend: number;
  readonly price: number;
  readonly seed: number;
}

const STORES: readonly StoreShape[] = [
  { entity: 'store:berlin', name: 'Berlin Mitte', base: 140, weekend: 1.35, price: 12.4, seed: 11 },
  { entity: 'store:paris', name: 'Paris Marais', base: 95, weekend: 1.6, price: 14.1, seed: 23 },
];

/** Create the demo entities and observations in the account (one revision per entity). */
export async function loadDemoData(accountId: string, database: Database, entities: EntityStore, observations: ObservationStore, now: number): Promise<string[]> {
  const created: string[] = [];
  const relations = new RelationStore(database);
  const storeAxes = [
    { name: 'demand', unit: 'units', kind: 'count' as const },
    { name: 'revenue', unit: 'EUR', kind: 'continuous' as const },
  ];
  await database.transaction(async (trx) => {
    // The region has the stores' axes but no observations: a `depth` query forecasts it from them.
    await entities.upsertRow(trx, accountId, { entity: 'region:eu', type: 'region', displayName: 'Europe', frequency: 'P1D', seasonLength: 7 }, now);
    await entities.upsertAxes(trx, accountId, 'region:eu', storeAxes);
    for (const s of STORES) {
      await entities.upsertRow(trx, accountId, { entity: s.entity, type: 'store', displayName: s.name, frequency: 'P1D', seasonLength: 7 }, now);
      await entities.upsertAxes(trx, accountId, s.entity, storeAxes);
      await relations.add(trx, accountId, 'region:eu', s.entity, 'contains', now);
    }
    await entities.upsertRow(trx, accountId, { entity: 'server:api-1', type: 'server', displayName: 'API server 1', frequency: 'PT1H', seasonLength: 24 }, now);
    await entities.upsertAxes(trx, accountId, 'server:api-1', [{ name: 'cpu', unit: 'percent', kind: 'continuous' }]);
  });
  created.push('region:eu');
  for (const s of STORES) {
    await observations.ingest(accountId, [{ entity: s.entity, rows: storeRows(s) }], now);
    created.push(s.entity);
  }
  await observations.ingest(accountId, [{ entity: 'server:api-1', rows: serverRows() }], now);
  created.push('server:api-1');
  return created;
}

function storeRows(s: StoreShape): { axis: string; time: number; value: number }[] {
  const rng = new Rng(s.seed);
  const rows: { axis: string; time: number; value: number }[] = [];
  const days = 730;
  for (let i = 0; i < days; i++) {
    const time = DEMO_END - (days - 1 - i) * DAY;
    const dow = new Date(time).getUTCDay();
    const weekly = dow === 0 || dow === 6 ? s.weekend : dow === 5 ? 1.15 : 1;
    const yearly = 1 + 0.18 * Math.sin((2 * Math.PI * (i + 40)) / 365.25);
    const level = s.base * (1 + (0.12 * i) / days) * weekly * yearly;
    const demand = Math.max(0, Math.round(level + Math.sqrt(level) * rng.normal()));
    rows.push({ axis: 'demand', time, value: demand });
    rows.push({ axis: 'revenue', time, value: Math.round(demand * s.price * (1 + 0.04 * rng.normal()) * 100) / 100 });
  }
  return rows;
}

function serverRows(): { axis: string; time: number; value: number }[] {
  const rng = new Rng(7);
  const hours = 8 * 7 * 24;
  const end = DEMO_END + 23 * HOUR;
  const rows: { axis: string; time: number; value: number }[] = [];
  let noise = 0;
  for (let i = 0; i < hours; i++) {
    const time = end - (hours - 1 - i) * HOUR;
    const d = new Date(time);
    const hourOfDay = d.getUTCHours();
    const weekday = d.getUTCDay() >= 1 && d.getUTCDay() <= 5;
    const daily = Math.max(0, Math.sin((Math.PI * (hourOfDay - 6)) / 14));
    noise = 0.6 * noise + rng.normal() * 2.5;
    const cpu = 18 + (weekday ? 42 : 20) * daily + noise;
    rows.push({ axis: 'cpu', time, value: Math.round(Math.min(100, Math.max(0, cpu)) * 10) / 10 });
  }
  return rows;
}
