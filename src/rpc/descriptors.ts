/**
 * The descriptor image (`gen/forecast.binpb`, made by `buf build` in `make generate`): the
 * contract at run time. The REST route table, the JSON mapping and gRPC reflection all read it.
 */
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createFileRegistry, fromBinary, toBinary, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type FileDescriptorSet } from '@bufbuild/protobuf/wkt';

/** The repository/package root (the folder holding package.json), found from this file. */
export function packageRoot(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}

/** Path of the service's descriptor image. */
export const DESCRIPTOR_IMAGE = join(packageRoot(), 'gen', 'forecast.binpb');

/** A loaded image: raw bytes (for reflection), the set, and a registry (for lookups). */
export interface Descriptors {
  readonly bytes: Buffer;
  readonly set: FileDescriptorSet;
  readonly registry: FileRegistry;
}

/** Load one or more images into one registry (tests add their own test-only image). */
export function loadDescriptors(paths: readonly string[] = [DESCRIPTOR_IMAGE]): Descriptors {
  const sets = paths.map((p) => ({ bytes: readFileSync(p), set: fromBinary(FileDescriptorSetSchema, readFileSync(p)) }));
  if (sets.length === 1) return { bytes: sets[0].bytes, set: sets[0].set, registry: createFileRegistry(sets[0].set) };
  // Merge: keep the first copy of each file (shared imports appear in every image).
  const seen = new Set<string>();
  const file = sets.flatMap((s) => s.set.file).filter((f) => (seen.has(f.name) ? false : (seen.add(f.name), true)));
  const merged = { ...sets[0].set, file } as FileDescriptorSet;
  const bytes = Buffer.from(toBinary(FileDescriptorSetSchema, merged));
  return { bytes, set: merged, registry: createFileRegistry(merged) };
}

/**
 * Per method (gRPC path `/package.Service/Method`), the response fields marked
 * `[debug_redact = true]` in the contract, by their generated names (`apiKey`): the secrets a
 * response shows once. The idempotency interceptor never stores them for replay.
 */
export function redactedResponseFields(registry: FileRegistry): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of registry.files) {
    for (const service of file.services) {
      for (const method of service.methods) {
        const fields = method.output.fields.filter((f) => f.proto.options?.debugRedact === true).map((f) => f.localName);
        if (fields.length > 0) out.set(`/${service.typeName}/${method.name}`, fields);
      }
    }
  }
  return out;
}
