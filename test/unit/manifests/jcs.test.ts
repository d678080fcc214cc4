/**
 * The manifests' RFC 8785 serialiser against the specification's own examples and, on random
 * JSON values (keys outside the BMP, escapes, numbers of every magnitude), against an
 * independent implementation (`json-canonicalize`, a development dependency only).
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { canonicalize } from 'json-canonicalize';
import { jcs } from '../../../src/manifests/canonical';
import { Rng } from '../../../src/engine/rng';

test('RFC 8785 §3.2.2 and §3.2.3 examples', () => {
  // §3.2.2: numbers, literals and string escapes
  const numbers = [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001];
  assert.equal(jcs({ numbers, string: '\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/', literals: [null, true, false] }),
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  // §3.2.3: members sorted by UTF-16 code units
  const sorted = jcs({ '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' });
  // (read back by position: JSON.parse would put the integer-like key "1" first)
  const order = ['\\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => sorted.indexOf(`"${k}":`));
  assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1])), `${sorted} is not in UTF-16 order`);
  assert.equal(jcs(-0), '0');
  assert.throws(() => jcs(Number.NaN), /not a JSON number/);
  assert.throws(() => jcs({ a: Infinity }), /not a JSON number/);
  assert.equal(jcs({ a: undefined, b: [undefined] }), '{"b":[null]}');
});

test('equal to an independent implementation on 2,000 random JSON values', () => {
  const rng = new Rng(8785);
  const rand = () => rng.uniform();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const chars = ['a', 'B', '0', ' ', '"', '\\', '\n', '\u0001', '\u007f', 'é', '\u20ac', '\ud83d\ude00', '\ufb33', '/'];
  const text = () => Array.from({ length: Math.floor(rand() * 6) }, () => pick(chars)).join('');
  const number = () => pick([0, -1, 1.5, 1e21, 1e-7, 123456789.123, -2.5e-300, Number.MAX_SAFE_INTEGER, rand() * 1e6 - 5e5, Math.round(rand() * 1000)]);
  const value = (depth: number): unknown => {
    const kind = depth > 3 ? Math.floor(rand() * 4) : Math.floor(rand() * 6);
    if (kind === 0) return number();
    if (kind === 1) return text();
    if (kind === 2) return pick([true, false, null]);
    if (kind === 3) return rand() < 0.5 ? number() : text();
    if (kind === 4) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(rand() * 5) }, () => [text(), value(depth + 1)]));
  };
  let compared = 0;
  for (let i = 0; i < 2000; i++) {
    const v = value(0);
    assert.equal(jcs(v), canonicalize(v), JSON.stringify(v));
    compared++;
  }
  assert.equal(compared, 2000);
});
