/**
 * gRPC with no generated code and no .proto files: ask the server's reflection service for the
 * contract, load it with @grpc/proto-loader, call it with plain @grpc/grpc-js. What grpcurl does.
 *
 *   FORECAST_KEY=fk_live_… npx tsx examples/grpc-reflection.ts
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const address = process.env.FORECAST_GRPC ?? '127.0.0.1:50051';
const credentials = grpc.credentials.createInsecure();

/** The serialized FileDescriptorProtos defining `symbol` (and what they import), from reflection. */
function reflect(symbol: string): Promise<Buffer[]> {
  const reflectionProto = require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(reflectionProto, { keepCase: true })) as any;
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, credentials);
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo();
    stream.on('data', (res: any) => {
      stream.end();
      client.close();
      if (res.error_response) reject(new Error(res.error_response.error_message));
      else resolve(res.file_descriptor_response.file_descriptor_proto);
    });
    stream.on('error', reject);
    stream.write({ file_containing_symbol: symbol });
  });
}

/** A FileDescriptorSet from FileDescriptorProtos: field 1, length-delimited, once per file. */
function descriptorSet(files: Buffer[]): Buffer {
  const varint = (n: number) => {
    const bytes: number[] = [];
    for (; n > 127; n >>>= 7) bytes.push((n & 127) | 128);
    return Buffer.from([...bytes, n]);
  };
  return Buffer.concat(files.flatMap((f) => [Buffer.from([0x0a]), varint(f.length), f]));
}

async function main(): Promise<void> {
  const files = await reflect('forecast.v1.EntityService');
  const definition = protoLoader.loadFileDescriptorSetFromBuffer(descriptorSet(files), { keepCase: true, longs: String, defaults: true });
  const { forecast } = grpc.loadPackageDefinition(definition) as any;
  const entities = new forecast.v1.EntityService(address, credentials);
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${process.env.FORECAST_KEY}`);
  const list: any = await new Promise((resolve, reject) => entities.ListEntities({ page_size: 5 }, metadata, (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))));
  console.log(`methods: ${Object.keys(forecast.v1.EntityService.service).join(', ')}`);
  console.log(`first entities: ${list.entities.map((e: any) => e.entity).join(', ') || '(none)'}; next_cursor ${list.next_cursor ? 'set' : 'empty'}`);
  entities.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
