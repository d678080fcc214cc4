/**
 * The canonical forms everything signed or digested is made of (see the `Manifest` proto
 * comment): a message's proto3 JSON mapping with proto field names and every implicit-presence
 * field emitted — exactly what the REST gateway returns — serialised by RFC 8785 (JCS).
 * The JSON mapping comes from the descriptor image, as the gateway's does (printing through
 * `proto-json.ts`, parsing through protobuf-es), so what is signed is what a REST client receives.
 */
import { createHash } from 'node:crypto';
import { fromJson, toBinary, type DescMessage, type JsonObject, type JsonValue, type Registry } from '@bufbuild/protobuf';
import { Manifest } from '../../gen/forecast/v1/manifest.pb';
import type { QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { protoJsonPrinter, type ProtoJsonPrinter } from './proto-json';

/** The proto3 JSON options of every canonical form (and of the REST gateway). */
export const PROTO_JSON_OPTIONS = { useProtoFieldName: true, alwaysEmitImplicit: true } as const;

/**
 * RFC 8785 canonical JSON text of a JSON value (throws on non-finite numbers). JCS's number and
 * string forms are ECMAScript's `JSON.stringify` ones (§3.2.2.3, §3.2.2.2); object members are
 * sorted by their names' UTF-16 code units (§3.2.3), which is how `Array.prototype.sort` compares
 * strings; members whose value is `undefined` are left out, as `JSON.stringify` does. Written
 * here rather than through a general library: a depth query's manifest has thousands of members
 * and is canonicalised on every query (about 10× faster than `json-canonicalize`).
 */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`JCS: ${value} is not a JSON number`);
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`JCS: a ${typeof value} is not a JSON value`);
    return text;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + jcs(value[i] === undefined ? null : value[i]);
    return out + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = object[key];
    if (member === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + jcs(member);
    first = false;
  }
  return out + '}';
}

/** SHA-256 as 64 lowercase hex characters. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Converts generated (ts-proto) messages to and from their canonical proto3 JSON. */
export class CanonicalJson {
  private readonly manifestSchema: DescMessage;
  private readonly printResponse: ProtoJsonPrinter;
  private readonly printManifest: ProtoJsonPrinter;

  constructor(registry: Registry) {
    const message = (name: string) => {
      const m = registry.getMessage(name);
      if (!m) throw new Error(`${name} is not in the descriptor image (run make generate)`);
      return m;
    };
    this.manifestSchema = message('forecast.v1.Manifest');
    this.printResponse = protoJsonPrinter(message('forecast.v1.QueryResponse'));
    this.printManifest = protoJsonPrinter(this.manifestSchema);
  }

  /**
   * The output of a query answer, as the REST API returns its parts: the object of its
   * `forecast`, `descendants` and `reconciliation` (the manifest's `output_digest` is over it).
   */
  output(response: Pick<QueryResponse, 'forecast' | 'descendants' | 'reconciliation'>): JsonObject {
    const json = this.printResponse({ ...response, manifest: undefined });
    return { forecast: json.forecast, descendants: json.descendants, reconciliation: json.reconciliation };
  }

  /** The proto3 JSON of a manifest, as the REST API returns it (signature included if set). */
  manifest(manifest: Manifest): JsonObject {
    return this.printManifest(manifest);
  }

  /** A manifest from its JSON text (as stored or exported) back to the generated message. */
  parseManifest(text: string): Manifest {
    const message = fromJson(this.manifestSchema, JSON.parse(text) as JsonValue, { ignoreUnknownFields: false });
    return Manifest.decode(toBinary(this.manifestSchema, message));
  }
}
