import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import {
  compareTemplates,
  parseTemplate,
  PathDecodeError,
  PathExpandError,
  TemplateSyntaxError,
} from '../../../src/transport/rest/path-template';

test('parse: segments, verb and variables', () => {
  const t = parseTemplate('/v1/{name=shelves/*/books/**}:get');
  assert.equal(t.template, '/v1/{name=shelves/*/books/**}:get');
  assert.equal(t.verb, 'get');
  assert.deepEqual(t.variables, ['name']);
  assert.deepEqual(t.segments, [
    { kind: 'literal', raw: 'v1', value: 'v1' },
    {
      kind: 'variable',
      fieldPath: 'name',
      segments: [
        { kind: 'literal', raw: 'shelves', value: 'shelves' },
        { kind: 'wildcard' },
        { kind: 'literal', raw: 'books', value: 'books' },
        { kind: 'deepWildcard' },
      ],
    },
  ]);
  assert.deepEqual(parseTemplate('/v1/{a.b_c}/{d}').variables, ['a.b_c', 'd']);
  assert.deepEqual(parseTemplate('/v1/{x}').segments[1], { kind: 'variable', fieldPath: 'x', segments: [{ kind: 'wildcard' }] });
  assert.equal(parseTemplate('/v1/entities/{entity}').verb, undefined);
  assert.equal(parseTemplate('/v1/observations:bulkIngest').verb, 'bulkIngest');
  assert.deepEqual(parseTemplate('/v1/x%2Fy').segments[1], { kind: 'literal', raw: 'x%2Fy', value: 'x/y' });
});

test('parse: accepted templates', () => {
  const cases: [string, string | undefined, string[]][] = [
    ['/v1', undefined, []],
    ['/*', undefined, []],
    ['/**', undefined, []],
    ['/**:get', 'get', []],
    ['/v1/*/x', undefined, []],
    ['/v1/{a=**}', undefined, ['a']],
    ['/v1/{a=*}/{b=x/*}', undefined, ['a', 'b']],
    ['/v1/a:b/c', undefined, []], // a colon in a non-final segment is part of the literal
    ['/v1/x:a/b', undefined, []],
    ['/v1/x:y:z', 'z', []], // last colon separates the verb
    ['/v1/{name}:archive', 'archive', ['name']],
    ['/v1/{n=a:b}:c', 'c', ['n']], // colons inside braces are never the verb
    ["/v1/@!$&'()+,;=~-._", undefined, []],
    ['/v1/***', undefined, []], // a LITERAL of pchars
    ['/v1/%E2%82%AC:%41', '%41', []],
    ['/_a/{_A1.b2}', undefined, ['_A1.b2']],
  ];
  for (const [template, verb, variables] of cases) {
    const t = parseTemplate(template);
    assert.equal(t.verb, verb, template);
    assert.deepEqual(t.variables, variables, template);
  }
});

test('parse errors carry position and reason', () => {
  const cases: [string, number, RegExp][] = [
    ['', 0, /start with "\/"/],
    ['v1/x', 0, /start with "\/"/],
    ['/', 1, /empty segment/],
    ['/v1/', 4, /empty segment/],
    ['/v1//x', 4, /empty segment/],
    ['/v1/{a=}', 7, /empty segment/],
    ['/v1/{a=x/}', 9, /empty segment/],
    ['/v1/{a', 6, /unterminated/],
    ['/v1/{a=b', 8, /unterminated/],
    ['/v1/{a.', 7, /unterminated/],
    ['/v1/a}', 5, /unbalanced "}"/],
    ['/v1/}', 4, /unbalanced "}"/],
    ['/v1/{a}}', 7, /unbalanced "}"/],
    ['/v1/{a={b}}', 7, /nested variable/],
    ['/v1/{a{b}}', 6, /nested variable/],
    ['/v1/{a=x/{b}}', 9, /nested variable/],
    ['/v1/**/x', 4, /"\*\*" must be the last segment/],
    ['/v1/{a=**}/x', 7, /"\*\*" must be the last segment/],
    ['/**/**', 1, /"\*\*" must be the last segment/],
    ['/v1/{a}/{a}', 8, /duplicate variable "a"/],
    ['/v1/{a.b}/{a.b=x/*}', 10, /duplicate variable "a.b"/],
    ['/v1/{}', 5, /bad identifier/],
    ['/v1/{1a}', 5, /bad identifier/],
    ['/v1/{a..b}', 7, /bad identifier/],
    ['/v1/{a-b}', 6, /invalid character "-" in field path/],
    ['/v1/{ a}', 5, /bad identifier/],
    ['/v1/x:', 6, /verb without literal/],
    ['/v1/{a}:', 8, /verb without literal/],
    ['/v1/x:{a}', 6, /invalid character "\{" in verb/],
    ['/v1/{a}x', 7, /unexpected "x" after a variable/],
    ['/v1/x{a}', 5, /variable must be a whole segment/],
    ['/v1/a b', 5, /invalid character " " in literal/],
    ['/v1/a?b', 5, /invalid character "\?" in literal/],
    ['/v1/é', 4, /invalid character/],
    ['/v1/%4', 4, /malformed percent-encoding/],
    ['/v1/%zz', 4, /malformed percent-encoding/],
    ['/v1/%FF', 4, /not UTF-8/],
    ['/v1/x:%G0', 6, /malformed percent-encoding in verb/],
    ['/:get', 1, /empty segment/],
  ];
  for (const [template, position, reason] of cases) {
    assert.throws(
      () => parseTemplate(template),
      (err: unknown) => {
        assert.ok(err instanceof TemplateSyntaxError, `${template}: ${String(err)}`);
        assert.equal(err.template, template);
        assert.equal(err.position, position, `${template}: ${err.message}`);
        assert.match(err.reason, reason, template);
        assert.ok(err.message.includes(`position ${position}`));
        return true;
      },
    );
  }
});

type Vars = Record<string, string> | null;

test('match: table', () => {
  const cases: [string, string, Vars][] = [
    ['/v1/account', '/v1/account', {}],
    ['/v1/account', '/v1/account/', null],
    ['/v1/account', '/v1/accounts', null],
    ['/v1/account', 'v1/account', null],
    ['/v1/account', '/%76%31/account', {}], // literals compare decoded
    ['/v1/x%2Fy', '/v1/x%2fy', {}],
    ['/v1/x%2Fy', '/v1/x/y', null],
    ['/v1/entities/{entity}', '/v1/entities/store:berlin', { entity: 'store:berlin' }],
    ['/v1/entities/{entity}', '/v1/entities/store%3Aberlin', { entity: 'store:berlin' }],
    ['/v1/entities/{entity}', '/v1/entities/a%2Fb', { entity: 'a/b' }],
    ['/v1/entities/{entity}', '/v1/entities/caf%C3%A9%20x+y', { entity: 'café x+y' }],
    ['/v1/entities/{entity}', '/v1/entities/', null],
    ['/v1/entities/{entity}', '/v1/entities', null],
    ['/v1/entities/{entity}', '/v1/entities/a/b', null],
    ['/v1/entities/{entity}', '/v1/entities/x:bulkIngest', { entity: 'x:bulkIngest' }],
    ['/v1/entities/{entity}/observations', '/v1/entities/store:berlin/observations', { entity: 'store:berlin' }],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/sub_123:test', { id: 'sub_123' }],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/sub_123', null],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/sub_123%3Atest', null],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/sub_123:other', null],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/:test', null],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/a%3Ab:test', { id: 'a:b' }],
    ['/v1/subscriptions/{id}:test', '/v1/subscriptions/x:%74est', { id: 'x' }],
    ['/v1/things/{name}:archive', '/v1/things/a:b:archive', { name: 'a:b' }],
    ['/v1/observations:bulkIngest', '/v1/observations:bulkIngest', {}],
    ['/v1/observations:bulkIngest', '/v1/observations', null],
    ['/v1/observations:bulkIngest', '/v1/observations:bulkingest', null],
    ['/v1/x:y:z', '/v1/x:y:z', {}],
    ['/v1/x:y:z', '/v1/x%3Ay:z', {}],
    ['/v1/{a}/{b}', '/v1/p/q', { a: 'p', b: 'q' }],
    ['/v1/*/{b}', '/v1/p/q', { b: 'q' }],
    ['/v1/{name=shelves/*}', '/v1/shelves/s1', { name: 'shelves/s1' }],
    ['/v1/{name=shelves/*}', '/v1/books/s1', null],
    ['/v1/{name=shelves/*}', '/v1/shelves/a%2Fb', { name: 'shelves/a/b' }],
    ['/v1/{name=**}', '/v1/a/b/c', { name: 'a/b/c' }],
    ['/v1/{name=**}', '/v1', { name: '' }],
    ['/v1/{name=**}', '/v1/', { name: '' }],
    ['/v1/{name=**}', '/v1/a//b', { name: 'a//b' }],
    ['/v1/{name=**}', '/v1/a%2Fb/c%3Ad', { name: 'a/b/c:d' }],
    ['/v1/{name=**}:get', '/v1/a/b:c:get', { name: 'a/b:c' }],
    ['/v1/{name=**}:get', '/v1:get', { name: '' }],
    ['/v1/{name=**}:get', '/v1/a/b', null],
    ['/v1/{p=x/**}', '/v1/x', { p: 'x' }],
    ['/v1/{p=x/**}', '/v1/x/y/z', { p: 'x/y/z' }],
    ['/v1/{p=x/**}', '/v1/y/z', null],
    ['/{a}/{b.c=*}/**', '/1/2/3/4', { a: '1', 'b.c': '2' }],
    ['/v1/{__proto__}', '/v1/x', JSON.parse('{"__proto__":"x"}') as Record<string, string>],
  ];
  for (const [template, path, expected] of cases) {
    assert.deepEqual(parseTemplate(template).match(path), expected, `${template} ~ ${path}`);
  }
});

test('match: malformed percent-encoding throws PathDecodeError for every template', () => {
  const templates = ['/v1/entities/{entity}', '/v1/account', '/v2/{x=**}', '/v1/{id}:test'];
  for (const path of ['/v1/entities/%zz', '/v1/entities/%4', '/v1/%FF', '/v1/x%C3:test', '/x/%E2%82']) {
    for (const template of templates) {
      assert.throws(() => parseTemplate(template).match(path), PathDecodeError, `${template} ~ ${path}`);
    }
  }
  assert.equal(parseTemplate('/v1/account').match('v1/%zz'), null); // not a path at all
});

test('expand: encoding and round trip', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['/v1/entities/{entity}', { entity: 'store:berlin' }, '/v1/entities/store%3Aberlin'],
    ['/v1/entities/{entity}/observations', { entity: 'a/b c' }, '/v1/entities/a%2Fb%20c/observations'],
    ['/v1/e/{x}', { x: "-_.~!*'()é" }, "/v1/e/-_.~%21%2A%27%28%29%C3%A9"],
    ['/v1/subscriptions/{id}:test', { id: 'sub_1' }, '/v1/subscriptions/sub_1:test'],
    ['/v1/things/{name}:archive', { name: 'a:b' }, '/v1/things/a%3Ab:archive'],
    ['/v1/{name=**}', { name: 'a/b c/d:e' }, '/v1/a/b%20c/d%3Ae'],
    ['/v1/{name=**}', { name: '' }, '/v1'],
    ['/{name=**}', { name: '' }, '/'],
    ['/v1/{name=**}:get', { name: '' }, '/v1:get'],
    ['/v1/{name=shelves/*}', { name: 'shelves/s 1' }, '/v1/shelves/s%201'],
    ['/v1/{a.b}/{c}', { 'a.b': '1', c: '2' }, '/v1/1/2'],
    ['/v1/observations:bulkIngest', {}, '/v1/observations:bulkIngest'],
  ];
  for (const [template, values, expected] of cases) {
    const t = parseTemplate(template);
    const path = t.expand(values);
    assert.equal(path, expected, template);
    assert.deepEqual(t.match(path), values, `round trip ${template}`);
  }
});

test('expand: errors', () => {
  const e = (template: string, values: Record<string, string>) => assert.throws(() => parseTemplate(template).expand(values), PathExpandError, template);
  e('/v1/{x}', {});
  e('/v1/{x}', { x: '' });
  e('/v1/{toString}', {}); // inherited properties are not values
  e('/v1/*/{x}', { x: 'a' });
  e('/v1/{x}/**', { x: 'a' });
  e('/v1/{name=shelves/*}', { name: 'books/1' });
  e('/v1/{name=shelves/*}', { name: 'shelves/a/b' });
  e('/v1/{name=shelves/*}', { name: 'shelves/' });
  e('/v1/{x}', { x: '\uD800' });
  e('/v1/{p=x%2Fy/*}', { p: 'x/y/z' }); // the literal's decoded "/" cannot be told from a separator
});

test('compareTemplates orders routes deterministically', () => {
  const expected = [
    '/v1/entities/{entity}/observations', // 3 literals
    '/v1/subscriptions/{id}:test', // 2 literals, 3 segments, verb
    '/v1/entities/{entity}', // 2 literals, 3 segments (then by template string)
    '/v1/subscriptions/{id}',
    '/v1/observations:bulkIngest', // 2 literals, 2 segments, verb
    '/v1/account',
    '/v1/entities',
    '/v1/{a}/{b}',
    '/v1/{a}/{b=**}',
    '/v1/{a=**}',
  ];
  const shuffled = [...expected].reverse().map(parseTemplate);
  shuffled.sort(compareTemplates);
  assert.deepEqual(shuffled.map((t) => t.template), expected);
  // The verb route wins over the plain one for a path both match.
  const first = shuffled.find((t) => t.match('/v1/subscriptions/sub_9:test'));
  assert.equal(first?.template, '/v1/subscriptions/{id}:test');
  assert.equal(shuffled.find((t) => t.match('/v1/x/y'))?.template, '/v1/{a}/{b}');
  assert.equal(compareTemplates(parseTemplate('/v1/{a}'), parseTemplate('/v1/{a}')), 0);
});

/** mulberry32: a tiny seeded PRNG so the fuzz test is the same on every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('fuzz: parse, match, expand (seeded, 5,000 cases each)', () => {
  const rnd = prng(20240601);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const str = (alphabet: readonly string[], max: number) => Array.from({ length: int(max + 1) }, () => pick(alphabet)).join('');

  // 1. Arbitrary strings: parse succeeds or throws a TemplateSyntaxError pointing into the string.
  const tchars = ['/', '/', '{', '}', '*', '=', '.', ':', '%', '2', 'F', 'a', 'b', '_', '1', ' ', '?', 'é', '@'];
  for (let i = 0; i < 5000; i++) {
    const template = (rnd() < 0.9 ? '/' : '') + str(tchars, 12);
    try {
      parseTemplate(template);
    } catch (err) {
      assert.ok(err instanceof TemplateSyntaxError, `${JSON.stringify(template)}: ${String(err)}`);
      assert.ok(err.position >= 0 && err.position <= template.length, template);
    }
  }

  // 2. Valid templates: random paths only ever match or throw PathDecodeError; generated values round-trip.
  const literals = ['v1', 'a', 'b:c', 'x%2Fy', '~', "it's", '%C3%A9'];
  const vchars = ['a', 'Z', '0', ':', '/', '%', ' ', '?', '#', '+', 'é', '😀', '.', '-', '~', '*'];
  const pchars = ['a', 'b', ':', '/', '/', '%', '2', 'F', 'A', '3', 'C', '9', 'é', '~', 'x', 'v', '1'];
  let matched = 0;
  for (let i = 0; i < 5000; i++) {
    const names: string[] = [];
    const segs: string[] = [];
    const n = 1 + int(4);
    for (let k = 0; k < n; k++) {
      const r = rnd();
      if (r < 0.4) segs.push(pick(literals));
      else {
        names.push(`f${k}`);
        segs.push(r < 0.8 ? `{f${k}}` : `{f${k}=${pick(['*', 'shelves/*', 'a/*/b'])}}`);
      }
    }
    if (rnd() < 0.3) {
      names.push('rest');
      segs.push(rnd() < 0.5 ? '{rest=**}' : '{rest=p/**}');
    }
    const template = `/${segs.join('/')}${rnd() < 0.4 ? `:${pick(['get', 'do', 'x%41'])}` : ''}`;
    const t = parseTemplate(template);
    assert.deepEqual(t.variables, names, template);

    const values: Record<string, string> = {};
    for (const s of t.segments) {
      if (s.kind !== 'variable') continue;
      values[s.fieldPath] = s.segments
        .map((p) => (p.kind === 'literal' ? p.value : p.kind === 'wildcard' ? 'q' + str(vchars.filter((c) => c !== '/' || s.segments.length === 1), 5) : str(vchars, 8)))
        .join('/');
    }
    const path = t.expand(values);
    assert.deepEqual(t.match(path), values, `${template} <- ${JSON.stringify(values)} = ${path}`);

    for (const candidate of [path.slice(0, 1 + int(path.length)) + str(pchars, 3), '/' + str(pchars, 14)]) {
      let vars: Record<string, string> | null;
      try {
        vars = t.match(candidate);
      } catch (err) {
        assert.ok(err instanceof PathDecodeError, `${template} ~ ${candidate}: ${String(err)}`);
        continue;
      }
      if (!vars) continue;
      matched++;
      assert.deepEqual(Object.keys(vars), [...t.variables]);
      try {
        assert.deepEqual(t.match(t.expand(vars)), vars, `${template} ~ ${candidate}`);
      } catch (err) {
        assert.ok(err instanceof PathExpandError, `${template} ~ ${candidate}: ${String(err)}`);
      }
    }
  }
  assert.ok(matched > 500, `only ${matched} random paths matched`);

  // 3. The order is a total order: antisymmetric and transitive on random triples.
  const pool = ['/v1/{a}', '/v1/{a}:x', '/v1/b', '/v1/{a=**}', '/v1/b/{c=**}', '/{a}/{b}/{c}', '/v1/*/c', '/**', '/v1/b:x'].map(parseTemplate);
  const sign = (x: number) => Math.sign(x);
  for (let i = 0; i < 2000; i++) {
    const [a, b, c] = [pick(pool), pick(pool), pick(pool)];
    assert.equal(sign(compareTemplates(a, b)), 0 - sign(compareTemplates(b, a)));
    if (compareTemplates(a, b) <= 0 && compareTemplates(b, c) <= 0) assert.ok(compareTemplates(a, c) <= 0);
  }
});
