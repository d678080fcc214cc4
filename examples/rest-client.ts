/**
 * The generated REST client (gen/rest_clients.ts, from the protos by `make generate`): typed
 * requests and responses (the ts-proto message types), one ApiError for every failure, async
 * iteration over paginated lists. It needs only the global fetch (Node 20+, browsers).
 * Creates its own entity, so the demo data stays as it is.
 *
 *   FORECAST_KEY=fk_live_… npx tsx examples/rest-client.ts
 */
import { ApiError, createRestClients } from '../gen/rest_clients';

const api = createRestClients({ baseUrl: process.env.FORECAST_URL ?? 'http://127.0.0.1:8080', apiKey: process.env.FORECAST_KEY });

async function main(): Promise<void> {
  const entity = 'store:rest-client-example';
  await api.entityService.createEntity({ entity, displayName: 'REST client example', frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] });

  // Eight weeks of daily demand. The idempotency key makes a retry of this call safe.
  const start = Date.UTC(2026, 0, 1);
  const observations = Array.from({ length: 56 }, (_, d) => ({ axis: 'demand', time: new Date(start + d * 86_400_000).toISOString(), value: 40 + (d % 7) * 3 + Math.floor(d / 7) + ((d * 37) % 5) }));
  const ingested = await api.entityService.ingestObservations({ entity, observations }, { idempotencyKey: 'rest-client-example-batch-1' });
  console.log(`ingested ${ingested.accepted} observations (data revision ${ingested.revision})`);

  const { forecast, dataAsOf } = await api.oracleService.query({ entity, horizon: 7, quantiles: [0.1, 0.5, 0.9] }, { timeoutMs: 30_000 });
  console.log(`demand on ${forecast?.targetTime}: mean ${forecast?.axesResolved.demand.toFixed(1)}, 80% interval ${forecast?.quantiles['0.1']}–${forecast?.quantiles['0.9']}, model ${forecast?.model} (data revision ${dataAsOf})`);

  for await (const e of api.entityService.listEntitiesAll({ type: 'store', pageSize: 50 })) console.log(`entity ${e.entity} (${e.frequency})`);

  try {
    await api.entityService.getEntity({ entity: 'store:does-not-exist' });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    console.log(`HTTP ${err.status} ${err.code}: ${err.message} (request ${err.requestId})`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
