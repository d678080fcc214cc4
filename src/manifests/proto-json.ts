/**
 * The proto3 JSON mapping of generated (ts-proto) objects, compiled once per message type from
 * the descriptor image: proto field names, every implicit-presence field emitted, 64-bit integers
 * as decimal strings, non-finite doubles as "NaN"/"Infinity"/"-Infinity", enums by name, bytes as
 * base64, Struct/Value/ListValue as the plain JSON ts-proto already holds them in. It gives what
 * protobuf-es `toJson(schema, fromBinary(schema, encode(value)), { useProtoFieldName: true,
 * alwaysEmitImplicit: true })` gives — a test compares the two — without the encode, decode and
 * reflective walk. Why: every oracle query prints its forecast and its manifest this way, and the
 * reflective round trip cost more CPU than signing.
 */
import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from '@bufbuild/protobuf';
import { FeatureSet_FieldPresence } from '@bufbuild/protobuf/wkt';

/** Converts a generated object of one message type to its proto3 JSON. */
export type ProtoJsonPrinter = (value: object) => JsonObject;

/** Well-known types ts-proto unwraps to plain JSON (their proto3 JSON is that JSON). */
const PLAIN_JSON_TYPES = new Set(['google.protobuf.Struct', 'google.protobuf.Value', 'google.protobuf.ListValue']);

const LONG_TYPES = new Set<ScalarType>([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

type ValuePrinter = (value: any) => JsonValue;

function scalarPrinter(type: ScalarType): ValuePrinter {
  if (type === ScalarType.DOUBLE || type === ScalarType.FLOAT) return (v: number) => (Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');
  if (LONG_TYPES.has(type)) return (v: string | number) => String(v);
  if (type === ScalarType.BYTES) return (v: Uint8Array) => Buffer.from(v).toString('base64');
  return (v: JsonValue) => v;
}

function scalarDefault(type: ScalarType): JsonValue {
  if (type === ScalarType.STRING) return '';
  if (type === ScalarType.BOOL) return false;
  if (LONG_TYPES.has(type)) return '0';
  return type === ScalarType.BYTES ? '' : 0;
}

/** One field: writes its JSON member into `out`, or nothing when it is absent. */
function fieldWriter(field: DescField, printers: Map<string, ProtoJsonPrinter>): (value: any, out: JsonObject) => void {
  const name = field.name;
  const local = field.localName;
  switch (field.fieldKind) {
    case 'scalar': {
      const print = scalarPrinter(field.scalar);
      const fallback = scalarDefault(field.scalar);
      if (field.presence !== FeatureSet_FieldPresence.IMPLICIT) return (v, out) => v[local] !== undefined && (out[name] = print(v[local]));
      return (v, out) => (out[name] = v[local] === undefined ? fallback : print(v[local]));
    }
    case 'enum': {
      const names = new Map(field.enum.values.map((e) => [e.number, e.name]));
      const print = (n: number) => names.get(n) ?? n;
      if (field.presence !== FeatureSet_FieldPresence.IMPLICIT) return (v, out) => v[local] !== undefined && (out[name] = print(v[local]));
      return (v, out) => (out[name] = print(v[local] ?? 0));
    }
    case 'message': {
      const print = messagePrinter(field.message, printers);
      // a Value field holding null is JSON null; only undefined is absent
      if (PLAIN_JSON_TYPES.has(field.message.typeName)) return (v, out) => v[local] !== undefined && (out[name] = print(v[local]));
      return (v, out) => v[local] !== undefined && v[local] !== null && (out[name] = print(v[local]));
    }
    case 'list': {
      const print: ValuePrinter = field.listKind === 'message' ? messagePrinter(field.message, printers) : field.listKind === 'enum' ? (n) => field.enum.values.find((e) => e.number === n)?.name ?? n : scalarPrinter(field.scalar);
      return (v, out) => (out[name] = ((v[local] ?? []) as unknown[]).map(print));
    }
    case 'map': {
      const print: ValuePrinter = field.mapKind === 'message' ? messagePrinter(field.message, printers) : field.mapKind === 'enum' ? (n) => field.enum.values.find((e) => e.number === n)?.name ?? n : scalarPrinter(field.scalar);
      return (v, out) => {
        const entries: JsonObject = {};
        for (const [k, x] of Object.entries((v[local] ?? {}) as Record<string, unknown>)) entries[k] = print(x);
        out[name] = entries;
      };
    }
  }
}

function messagePrinter(message: DescMessage, printers: Map<string, ProtoJsonPrinter>): ValuePrinter {
  if (PLAIN_JSON_TYPES.has(message.typeName)) return (v: JsonValue) => v;
  if (message.typeName.startsWith('google.protobuf.')) throw new Error(`proto3 JSON of ${message.typeName} is not supported here`);
  let printer = printers.get(message.typeName);
  if (!printer) {
    // Registered before its fields are compiled, so recursive types terminate.
    let writers: ((value: any, out: JsonObject) => void)[] = [];
    printer = (value) => {
      const out: JsonObject = {};
      for (const write of writers) write(value, out);
      return out;
    };
    printers.set(message.typeName, printer);
    writers = message.fields.map((f) => fieldWriter(f, printers));
  }
  return printer as ValuePrinter;
}

/** A printer for generated objects of `message`. */
export function protoJsonPrinter(message: DescMessage): ProtoJsonPrinter {
  return messagePrinter(message, new Map()) as ProtoJsonPrinter;
}
