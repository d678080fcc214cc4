/**
 * The proto3 JSON form of a generated (ts-proto) message, as any client's stock protobuf
 * library prints it with proto field names and defaults emitted (here protobuf-es, reading the
 * descriptor image): how a gRPC client turns what it received into the JSON a manifest signs.
 */
import { readFileSync } from 'node:fs';
import { createFileRegistry, fromBinary, toJson, type JsonValue } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { DESCRIPTOR_IMAGE } from '../../src/rpc/descriptors';

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_IMAGE)));

/** `message` (encoded with its generated `encode`) as proto3 JSON of `typeName`. */
export function protoJson<T>(typeName: string, codec: { encode(m: T): { finish(): Uint8Array } }, message: T): any {
  const schema = registry.getMessage(typeName);
  if (!schema) throw new Error(`${typeName} is not in the descriptor image`);
  return toJson(schema, fromBinary(schema, codec.encode(message).finish()), { useProtoFieldName: true, alwaysEmitImplicit: true }) as JsonValue;
}
