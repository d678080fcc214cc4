/**
 * gRPC with the generated stubs (gen/*.pb.ts: ts-proto for @grpc/grpc-js). Needs the packages
 * `@grpc/grpc-js` and `@bufbuild/protobuf` (the stubs' wire format). Creates its own entity.
 *
 *   FORECAST_KEY=fk_live_… npx tsx examples/grpc-stubs.ts
 */
import * as grpc from '@grpc/grpc-js';
import { CreateEntityRequest, EntityServiceClient, IngestObservationsRequest, type IngestObservationsResponse } from '../gen/forecast/v1/entity_service.pb';
import { OracleServiceClient, QueryRequest, type QueryResponse } from '../gen/forecast/v1/oracle_service.pb';

const address = process.env.FORECAST_GRPC ?? '127.0.0.1:50051';
const metadata = new grpc.Metadata();
metadata.set('authorization', `Bearer ${process.env.FORECAST_KEY}`);

/** A unary stub method as a promise. */
function call<Req, Res>(method: (req: Req, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: Res) => void) => unknown, request: Req): Promise<Res> {
  return new Promise((resolve, reject) => method(request, metadata, (err, res) => (err ? reject(err) : resolve(res))));
}

async function main(): Promise<void> {
  const entities = new EntityServiceClient(address, grpc.credentials.createInsecure());
  const oracle = new OracleServiceClient(address, grpc.credentials.createInsecure());
  const entity = 'store:grpc-example';
  // fromPartial fills in the proto3 defaults of the fields left out.
  await call(entities.createEntity.bind(entities), CreateEntityRequest.fromPartial({ entity, frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] }));
  const start = Date.UTC(2026, 0, 1);
  const observations = Array.from({ length: 56 }, (_, d) => ({ axis: 'demand', time: new Date(start + d * 86_400_000).toISOString(), value: 40 + (d % 7) * 3 + ((d * 37) % 5) }));
  const ingested = await call<IngestObservationsRequest, IngestObservationsResponse>(entities.ingestObservations.bind(entities), IngestObservationsRequest.fromPartial({ entity, observations }));
  console.log(`ingested ${ingested.accepted} observations (data revision ${ingested.revision})`);
  const answer = await call<QueryRequest, QueryResponse>(oracle.query.bind(oracle), QueryRequest.fromPartial({ entity, horizon: 7 }));
  console.log(`demand on ${answer.forecast?.targetTime}: mean ${answer.forecast?.axesResolved.demand.toFixed(1)}, model ${answer.forecast?.model}`);
  try {
    await call(entities.getEntity.bind(entities), { entity: 'store:does-not-exist' });
  } catch (err) {
    const e = err as grpc.ServiceError;
    // The error code string (e.g. not_found) is google.rpc.ErrorInfo.reason in grpc-status-details-bin.
    console.log(`gRPC status ${e.code} (${grpc.status[e.code]}): ${e.details} (request ${e.metadata.get('request-id')[0]})`);
  }
  entities.close();
  oracle.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
