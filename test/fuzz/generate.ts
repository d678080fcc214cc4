/**
 * Request generation for the fuzz suite, driven by the contract itself (the descriptor image):
 * for every method, a request message built field by field (values from a dictionary of
 * meaningful ones, boundary values, wrong types, over-long and odd strings), then mutated as a
 * careless client or an attacker would: JSON bodies, paths, query strings and headers for REST;
 * raw protobuf bytes and metadata for gRPC. Deterministic: everything comes from a seeded PRNG.
 */
import { fromJson, getOption, toBinary, type DescField, type DescMessage, type DescMethod, type JsonValue, type Registry } from '@bufbuild/protobuf';

/** mulberry32: a small, fast, seeded PRNG (the same seed gives the same requests). */
export class Rng {
  constructor(private state: number) {}
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

/** A method of the contract with its REST rule. */
export interface FuzzMethod {
  readonly desc: DescMethod;
  readonly path: string;
  readonly httpMethod: string;
  readonly template: string;
  readonly body: string;
  readonly clientStreaming: boolean;
}

/** Every method of `forecast.v1` with its `google.api.http` rule. */
export function methodsOf(registry: Registry): FuzzMethod[] {
  const ext = registry.getExtension('google.api.http')!;
  const out: FuzzMethod[] = [];
  for (const type of registry) {
    if (type.kind !== 'service' || !type.typeName.startsWith('forecast.v1.')) continue;
    for (const m of type.methods) {
      const rule = getOption(m, ext) as unknown as { pattern: { case: string; value: string }; body: string };
      out.push({
        desc: m,
        path: `/${type.typeName}/${m.name}`,
        httpMethod: rule.pattern.case.toUpperCase(),
        template: rule.pattern.value,
        body: rule.body,
        clientStreaming: m.methodKind === 'client_streaming',
      });
    }
  }
  return out;
}

const LONG = (rng: Rng) => 'x'.repeat(rng.pick([300, 2049, 5000]));
const ODD_STRINGS = ['', ' ', '\u0000', 'é', '🙂🙂', '\u202e', 'a\nb', '%00', '../..', '"\\', '<script>', 'null', '0', '-1', '1e400', 'NaN'];

/** Meaningful values by field name (valid ones, near misses, invalid ones). */
function dictionary(name: string, rng: Rng): unknown[] | undefined {
  switch (name) {
    case 'entity':
    case 'parent':
    case 'child':
    case 'parents':
    case 'from':
    case 'to':
      return ['store:fuzz', 'store:fuzz', 'store:other', 'region:eu', 'sku:A42', 'Store:x', 'store:', ':x', 'store:a:b', `store:${'e'.repeat(200)}`, 'store:%2F', 'store:é'];
    case 'type':
      return ['store', 'region', 'STORE', '', 'x'.repeat(40)];
    case 'axis':
    case 'axes':
      return ['demand', 'demand', 'revenue', 'nope', 'A', '', 'a'.repeat(80)];
    case 'name':
      return ['demand', 'revenue', 'k', '', 'x'.repeat(150)];
    case 'time':
    case 'start':
    case 'end':
    case 'start_time':
    case 'end_time':
      return ['2026-01-05T00:00:00Z', '2026-03-01T00:00:00Z', '2026-01-05T00:00:00+01:00', '0000-01-01T00:00:00Z', '9999-12-31T00:00:00Z', '1899-12-31T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-05T12:34:56Z', 'yesterday', ''];
    case 'frequency':
      return ['P1D', 'PT1H', 'P1M', 'P2D', 'p1d', ''];
    case 'kind':
      return ['continuous', 'count', 'contains', 'other', ''];
    case 'unit':
      return ['units', 'EUR', '', 'u'.repeat(40)];
    case 'key_id':
      return ['key_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'key_', '', 'k'.repeat(rng.pick([100, 3000]))];
    case 'email':
      return ['fuzz@example.com', 'not-an-email', '', `${'x'.repeat(300)}@example.com`];
    case 'scopes':
      return ['forecast:read', 'data:write', 'keys:admin', 'root', ''];
    case 'cursor':
      return ['', 'abc.def', 'eyJlIjoic3RvcmU6YSJ9.AAAAAAAAAAAAAAAAAAAAAAAA', 'eyJlIjoic3RvcmU6YSJ9.AAAAAAAAAAAAAAAAAAAAAAAA!!', 'x'.repeat(1500)];
    case 'horizon':
      return [1, 7, 1000, 1001, 0, -1];
    case 'depth':
      return [0, 1, 9, -1];
    case 'page_size':
      return [0, 1, 50, 200, 201, -1];
    case 'value':
      return [1, 0, -1, 2.5, 1e300, -1e300];
    case 'season_length':
      return [0, 7, 1001, -1];
    case 'expires_in_seconds':
    case 'grace_period_seconds':
      return ['0', '3600', '-1', '99999999999', '9223372036854775807'];
    case 'as_of_revision':
      return ['0', '1', '99999999', '-1'];
    case 'quantiles':
      return [0.5, 0.9, 0, 1, 1.5];
    case 'thresholds':
      return [0, 10, 100, -5];
    default:
      return undefined;
  }
}

/** A scalar value for `field` (JSON form). `wild` allows wrong JSON types (REST only). */
function scalar(field: DescField, rng: Rng, wild: boolean): unknown {
  const dict = dictionary(field.name, rng);
  if (dict && rng.chance(0.7)) return rng.pick(dict);
  if (wild && rng.chance(0.08)) return rng.pick([null, {}, [], true, 'text', 1.5, -0, '１２', { a: [1] }]);
  if (field.fieldKind === 'enum') return rng.int(3);
  switch (field.scalar) {
    case 9: // STRING
      if (rng.chance(0.1)) return LONG(rng);
      if (rng.chance(0.3)) return rng.pick(ODD_STRINGS);
      return Array.from({ length: rng.int(12) }, () => String.fromCharCode(32 + rng.int(95))).join('');
    case 8: // BOOL
      return rng.chance(0.5);
    case 1: // DOUBLE
    case 2: // FLOAT
      return rng.pick([0, 1, -1, 0.5, 1e308, -1e308, 'NaN', 'Infinity', '-Infinity', 5e-324]);
    case 3: // INT64
    case 4: // UINT64
    case 16:
    case 18:
      return rng.pick(['0', '1', '-1', '9223372036854775807', '-9223372036854775808', '18446744073709551615', 7, 2 ** 53]);
    case 12: // BYTES
      return Buffer.from(Array.from({ length: rng.int(8) }, () => rng.int(256))).toString('base64');
    default: // the 32-bit integers
      return rng.pick([0, 1, -1, 7, 200, 2147483647, -2147483648, 2147483648, 1.5]);
  }
}

/** A request message for `schema` in proto3 JSON form (proto field names). */
export function message(schema: DescMessage, rng: Rng, wild: boolean, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) {
    if (rng.chance(depth === 0 ? 0.15 : 0.25)) continue; // leave some fields unset
    if (field.fieldKind === 'list') {
      const n = rng.chance(0.03) ? rng.pick([33, 100, 10_001]) : rng.int(4);
      out[field.name] = Array.from({ length: n }, (_, i) =>
        field.listKind === 'message' ? (depth < 3 ? message(field.message, rng, wild, depth + 1) : {}) : n > 100 ? (field.scalar === 9 ? `v${i}` : i) : scalar(field as DescField, rng, wild),
      );
      // a long list of observations: make most rows valid so validation reaches the store
      if (field.name === 'observations' && n > 100) out[field.name] = Array.from({ length: n }, (_, i) => ({ axis: 'demand', time: new Date(Date.UTC(2000, 0, 1) + i * 86_400_000).toISOString().replace('.000Z', 'Z'), value: i }));
    } else if (field.fieldKind === 'map') {
      out[field.name] = rng.chance(0.5) ? {} : { [rng.pick(['a', '', 'x'.repeat(50)])]: rng.pick(['v', 1, true]) };
    } else if (field.fieldKind === 'message') {
      out[field.name] = depth < 3 ? message(field.message, rng, wild, depth + 1) : {};
    } else {
      out[field.name] = scalar(field, rng, wild);
    }
  }
  return out;
}

/** The binary encoding of a JSON request, or undefined when the JSON is not a valid message. */
export function encode(schema: DescMessage, json: Record<string, unknown>): Buffer | undefined {
  try {
    return Buffer.from(toBinary(schema, fromJson(schema, json as JsonValue)));
  } catch {
    return undefined;
  }
}

/** Raw protobuf bytes: a valid encoding, mutated, or noise. */
export function mutateBytes(valid: Buffer | undefined, rng: Rng): Buffer {
  const base = valid ?? Buffer.alloc(0);
  switch (rng.int(6)) {
    case 0:
      return base;
    case 1: {
      const b = Buffer.from(base.length ? base : Buffer.from([0]));
      for (let i = 0; i < 1 + rng.int(4); i++) b[rng.int(b.length)] = rng.int(256);
      return b;
    }
    case 2:
      return base.subarray(0, rng.int(base.length + 1));
    case 3:
      return Buffer.concat([base, Buffer.from(Array.from({ length: 1 + rng.int(16) }, () => rng.int(256)))]);
    case 4:
      return Buffer.from([rng.pick([0x0a, 0x12, 0x08, 0x0f, 0xff]), ...Array.from({ length: rng.int(12) }, () => 0xff), rng.int(128)]);
    default:
      return Buffer.from(Array.from({ length: rng.int(64) }, () => rng.int(256)));
  }
}

/** A JSON body as text, sometimes mangled. */
export function mangleJson(body: unknown, rng: Rng): string {
  const text = JSON.stringify(body);
  switch (rng.int(10)) {
    case 0:
      return text.slice(0, rng.int(text.length + 1));
    case 1:
      return text.replace(/:/, '::');
    case 2:
      return `${'['.repeat(rng.pick([10, 5000]))}${']'.repeat(5)}`;
    case 3:
      return rng.pick(['null', '1', '"x"', '[]', 'true', '', ' ', '{"a":1,"a":2}', '{"__proto__":{"x":1}}', '\u0000']);
    case 4:
      return text.replace(/"([a-z_]+)":/, '"$1":null,"$1":');
    default:
      return text;
  }
}

/** Fill a path template's variables from `json` (removing them), optionally mangling values. */
export function fillPath(template: string, json: Record<string, unknown>, rng: Rng): string {
  return template.replace(/\{([a-z_.]+)(?:=[^}]*)?\}/g, (_m, name: string) => {
    const value = json[name];
    delete json[name];
    let text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
    if (rng.chance(0.15)) text = rng.pick(['%zz', '%00', '%2F..%2F', 'a%2Fb', '..', '', 'x'.repeat(3000), '%C3%28', 'ok%3Ax']);
    return rng.chance(0.5) ? encodeURIComponent(text) : text.replace(/[?#\s]/g, encodeURIComponent);
  });
}

/** Whole-path mutations (unknown routes, odd encodings). */
export function manglePath(path: string, rng: Rng): string {
  switch (rng.int(8)) {
    case 0:
      return path + rng.pick(['/', '//', '/x', ':nope', ':rotate', '%00', '?', '#frag']);
    case 1:
      return path.replace('/v1/', rng.pick(['/v2/', '/V1/', '/v1//', '/']));
    case 2:
      return rng.pick(['/', '/v1', '/v1/', '/v1/%', '/v1/entities/%E0%A4%A', '/openapi.json', '/v1/..%2F..%2Fetc%2Fpasswd', `/v1/${'a/'.repeat(200)}`, '/assets/nope.css', '/assets/', '/assets/%00']);
    case 3:
      return rng.chance(0.1) ? `/v1/entities/${'x'.repeat(20_000)}` : path;
    default:
      return path;
  }
}

/** Query-string values (added to GET requests, or stray ones). */
export function mangleQuery(params: URLSearchParams, rng: Rng): void {
  if (rng.chance(0.2)) params.append(rng.pick(['page_size', 'cursor', 'colour', 'axis', 'type', '']), rng.pick(['0x10', 'abc', '-1', '1e3', '', '%', '10', 'store']));
  if (rng.chance(0.1)) params.append(rng.pick(['page_size', 'type']), '1');
}
