/**
 * The generated REST client's proto3 JSON (field tables in gen/*.rest.ts, runtime in
 * gen/rest_runtime.ts) against protobuf-es, the library the gateway uses: for random messages of
 * every type the client sends or receives, the client writes the same JSON as protobuf-es, and
 * reads the gateway's JSON (every field emitted) into exactly what ts-proto decodes from the
 * same message's binary form.
 */
import { describe, expect, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { create, fromBinary, fromJson as esFromJson, toBinary, toJson as esToJson, type DescField, type DescMessage, type JsonValue, type Message } from '@bufbuild/protobuf';
import { Rng } from '../../../src/engine/rng';
import { loadDescriptors } from '../../../src/rpc/descriptors';
import { REST_SERVICES } from '../../../gen/rest_clients';
import { REST_SERVICES as TEST_SERVICES } from '../../gen/rest_clients';
import { fromJson, toJson, type FieldSpec, type MessageCodec } from '../../../gen/rest_runtime';
import * as accountPb from '../../../gen/forecast/v1/account_service.pb';
import * as entityPb from '../../../gen/forecast/v1/entity.pb';
import * as entityServicePb from '../../../gen/forecast/v1/entity_service.pb';
import * as graphPb from '../../../gen/forecast/v1/graph_service.pb';
import * as forensicsPb from '../../../gen/forecast/v1/forensics_service.pb';
import * as keyPb from '../../../gen/forecast/v1/key_service.pb';
import * as manifestPb from '../../../gen/forecast/v1/manifest.pb';
import * as manifestServicePb from '../../../gen/forecast/v1/manifest_service.pb';
import * as oraclePb from '../../../gen/forecast/v1/oracle_service.pb';
import * as subscriptionPb from '../../../gen/forecast/v1/subscription_service.pb';
import * as echoPb from '../../gen/forecast/testing/v1/echo_service.pb';
import { ECHO_DESCRIPTORS } from '../../helpers/echo';
import { DESCRIPTOR_IMAGE } from '../../../src/rpc/descriptors';
import { requiredFields } from '../../../src/transport/rest/field-behavior';

const { registry } = loadDescriptors([DESCRIPTOR_IMAGE, ECHO_DESCRIPTORS]);
const modules: Record<string, unknown>[] = [accountPb, entityPb, entityServicePb, forensicsPb, graphPb, keyPb, manifestPb, manifestServicePb, oraclePb, subscriptionPb, echoPb];

interface TsProtoFns {
  encode(m: unknown): { finish(): Uint8Array };
  decode(b: Uint8Array): unknown;
}

/** ts-proto's encoder/decoder of a message type (`forecast.v1.Forecast` → export `Forecast`). */
function tsProto(desc: DescMessage): TsProtoFns {
  const name = desc.typeName.slice(desc.file.proto.package.length + 1).replace(/\./g, '_');
  for (const m of modules) if (m[name] && typeof (m[name] as TsProtoFns).decode === 'function') return m[name] as TsProtoFns;
  throw new Error(`no ts-proto export for ${desc.typeName}`);
}

/** Every field table reachable from the generated services. */
function allCodecs(): MessageCodec<unknown>[] {
  const seen = new Map<string, MessageCodec<unknown>>();
  const visit = (c: MessageCodec<unknown>) => {
    if (seen.has(c.typeName)) return;
    seen.set(c.typeName, c);
    for (const f of Object.values(c.fields as Record<string, FieldSpec>)) if (typeof f.type === 'function') visit(f.type());
  };
  for (const service of [...Object.values(REST_SERVICES), ...Object.values(TEST_SERVICES)]) {
    for (const m of Object.values(service.methods) as { input: MessageCodec<unknown>; output: MessageCodec<unknown> }[]) {
      visit(m.input);
      visit(m.output);
    }
  }
  return [...seen.values()];
}

function randomScalar(rng: Rng, field: DescField & { scalar: number }): unknown {
  const pick = <T>(xs: T[]) => xs[rng.int(xs.length)];
  switch (field.scalar) {
    case 9: // string
      return pick(['', 'a', 'store:berlin', 'ünï ☃', 'x'.repeat(rng.int(40))]);
    case 8:
      return rng.int(2) === 1;
    case 1:
    case 2:
      return pick([0, -0.5, 1e-300, 3.25, -1e21, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, rng.normal() * 1e6]);
    case 3:
    case 18:
    case 16:
      return BigInt(pick(['0', '-1', '9007199254740993', '-9223372036854775808', String(rng.int(1000))]));
    case 7: // fixed32
    case 13: // uint32
      return pick([0, 1, 2147483648, 4294967295, rng.int(1000)]);
    default:
      return pick([0, 1, -1, 2147483647, -2147483648, rng.int(1000)]).valueOf();
  }
}

/** Random plain JSON (what a google.protobuf.Struct/Value/ListValue holds), nested to a bounded depth. */
function randomJson(rng: Rng, depth: number): JsonValue {
  switch (depth < 2 ? rng.int(6) : rng.int(4)) {
    case 0:
      return null;
    case 1:
      return rng.int(2) === 1;
    case 2:
      return [0, -0.5, 3.25, 1e21, rng.normal() * 1e6][rng.int(5)];
    case 3:
      return ['', 'a', 'NaN', 'ünï ☃'][rng.int(4)];
    case 4:
      return Array.from({ length: rng.int(3) }, () => randomJson(rng, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: rng.int(3) }, (_, i) => [`k${i}`, randomJson(rng, depth + 1)]));
  }
}

/** The JSON well-known types: their messages are made from random JSON, not field by field. */
const JSON_TYPES: Record<string, (rng: Rng, depth: number) => JsonValue> = {
  'google.protobuf.Value': (rng, depth) => randomJson(rng, depth),
  'google.protobuf.ListValue': (rng, depth) => Array.from({ length: rng.int(3) }, () => randomJson(rng, depth + 1)),
  'google.protobuf.Struct': (rng, depth) => Object.fromEntries(Array.from({ length: rng.int(3) }, (_, i) => [`k${i}`, randomJson(rng, depth + 1)])),
};

/** A random message of `desc` (protobuf-es reflection), nested messages to a bounded depth. */
function randomMessage(rng: Rng, desc: DescMessage, depth = 0): Message {
  const json = JSON_TYPES[desc.typeName];
  if (json) return esFromJson(desc, json(rng, depth));
  const m = create(desc) as unknown as Record<string, unknown>;
  for (const field of desc.fields) {
    if (rng.int(3) === 0) continue; // leave some at their defaults
    const value = (): unknown =>
      field.message ? (depth < 3 ? randomMessage(rng, field.message, depth + 1) : create(field.message)) : field.enum ? field.enum.values[rng.int(field.enum.values.length)].number : randomScalar(rng, field as never);
    if (field.fieldKind === 'list') m[field.localName] = Array.from({ length: rng.int(4) }, value);
    else if (field.fieldKind === 'map') m[field.localName] = Object.fromEntries(Array.from({ length: rng.int(4) }, (_, i) => [`k${i}`, value()]));
    else if (field.fieldKind !== 'message' || depth < 3) m[field.localName] = value();
  }
  return m as unknown as Message;
}

/** A message with a google.api.HttpBody field: never JSON (the client hands over the raw body). */
const hasRawBody = (c: MessageCodec<unknown>) => Object.values(c.fields as Record<string, FieldSpec>).some((f) => f.type === 'raw');
const everyCodec = allCodecs();
const codecs = everyCodec.filter((c) => !hasRawBody(c));

test('the messages left out of the JSON round trips are the raw answers of methods that hand over the body', () => {
  const raw = everyCodec.filter(hasRawBody).map((c) => c.typeName);
  assert.deepEqual(raw, ['forecast.v1.GetManifestResponse']);
  const methods = Object.values(REST_SERVICES).flatMap((s) => Object.values(s.methods) as { output: MessageCodec<unknown>; rawBody?: boolean }[]);
  for (const m of methods.filter((m) => raw.includes(m.output.typeName))) assert.equal(m.rawBody, true, m.output.typeName);
});

test('the client has a field table for every message its services reach', () => {
  const names = codecs.map((c) => c.typeName);
  for (const expected of ['forecast.v1.CreateEntityRequest', 'forecast.v1.Entity', 'forecast.v1.Axis', 'forecast.v1.Forecast', 'forecast.v1.QueryResponse', 'forecast.testing.v1.ShoutRequest']) {
    expect(names).toContain(expected);
  }
});

describe.each(codecs.map((c) => [c.typeName, c] as const))('%s', (typeName, codec) => {
  const desc = registry.getMessage(typeName)!;
  test('writes what protobuf-es writes and reads what the gateway sends into what ts-proto decodes (200 random messages)', () => {
    assert.ok(desc, typeName);
    const fns = tsProto(desc);
    const rng = new Rng(typeName.length * 7919);
    for (let i = 0; i < 200; i++) {
      const es = randomMessage(rng, desc);
      const bytes = toBinary(desc, es);
      const tsMessage = fns.decode(bytes);
      // Out: the client's JSON of the ts-proto object equals protobuf-es's canonical JSON, plus the
      // REQUIRED scalars at their defaults (the gateway refuses a request without them).
      const wire = JSON.parse(JSON.stringify(esToJson(desc, fromBinary(desc, bytes), { useProtoFieldName: true, alwaysEmitImplicit: true })));
      const expected = withRequired(desc, esToJson(desc, fromBinary(desc, bytes), { useProtoFieldName: true }), wire);
      assert.deepEqual(toJson(codec, tsMessage), expected);
      // In: the gateway's JSON (every field emitted) read back gives ts-proto's object.
      assert.deepEqual(fromJson(codec, wire), tsMessage);
    }
  });
});

/** `canonical` with every REQUIRED scalar of `desc` (nested too) taken from `full` where it was left out as a default. */
function withRequired(desc: DescMessage, canonical: JsonValue, full: JsonValue): JsonValue {
  const out = { ...(canonical as Record<string, JsonValue>) };
  const all = full as Record<string, JsonValue>;
  for (const f of requiredFields(desc)) if ((f.fieldKind === 'scalar' || f.fieldKind === 'enum') && !(f.name in out)) out[f.name] = all[f.name];
  for (const f of desc.fields) {
    if (!(f.name in out) || (f.fieldKind !== 'message' && f.fieldKind !== 'list' && f.fieldKind !== 'map') || !f.message || /^google\.protobuf\./.test(f.message.typeName)) continue;
    const m = f.message;
    if (f.fieldKind === 'message') out[f.name] = withRequired(m, out[f.name], all[f.name]);
    else if (f.fieldKind === 'list') out[f.name] = (out[f.name] as JsonValue[]).map((e, i) => withRequired(m, e, (all[f.name] as JsonValue[])[i]));
    else out[f.name] = Object.fromEntries(Object.entries(out[f.name] as Record<string, JsonValue>).map(([k, e]) => [k, withRequired(m, e, (all[f.name] as Record<string, JsonValue>)[k])]));
  }
  return out;
}

test('reading rejects JSON of the wrong shape, naming the field', () => {
  const axis = codecs.find((c) => c.typeName === 'forecast.v1.Entity')!;
  assert.throws(() => fromJson(axis, { entity: 5 }), /forecast\.v1\.Entity\.entity: expected a string/);
  assert.throws(() => fromJson(axis, { axes: [{ name: 'a' }, 'b'] }), /forecast\.v1\.Entity\.axes\[1\]: expected a JSON object/);
  assert.throws(() => fromJson(axis, []), /expected a JSON object/);
  assert.deepEqual((fromJson(axis, { entity: 'a:b', unknown_new_field: 1 }) as { entity: string }).entity, 'a:b', 'fields a newer server adds are ignored');
});
