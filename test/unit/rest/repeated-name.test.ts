/**
 * `repeatedName` and `parseJson` (transport/rest/body.ts): a name given twice in one object is
 * found wherever it is (nested, in arrays, spelt with escapes), and only there (the same name in
 * sibling objects, inside strings, after escaped quotes is fine), in time linear in the text.
 */
import { describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ServiceError } from '../../../src/rpc/errors';
import { parseJson, repeatedName } from '../../../src/transport/rest/body';

describe('repeatedName', () => {
  test.each([
    ['{"horizon":1,"horizon":1000}', 'horizon'],
    ['{"a":{"b":1,"c":2,"b":3}}', 'a.b'],
    ['[{"a":1},{"a":2,"x":[1,{"y":1}],"a":3}]', '[1].a'],
    ['{"o":[{"v":1},{"w":[[],[{"v":1,"v":2}]]}]}', 'o[1].w[1][0].v'],
    ['{"\\u0061":1,"a":2}', 'a'],
    ['{"x\\\\":1,"x\\\\":2}', 'x\\'],
    ['{"a":{},"a":1}', 'a'],
    ['{"a":[],"a":[]}', 'a'],
    [' { "a" : 1 , "a" : 2 } ', 'a'],
  ])('%s repeats %s', (text, path) => {
    assert.equal(repeatedName(text), path);
  });

  test.each([
    '{"a":1,"b":{"a":2}}',
    '[{"a":1},{"a":2}]',
    '{"a":"a","b":"a"}',
    '{"a":"\\",\\"a\\":","b":1}',
    '{"a":"\\\\","b":"{\\"a\\":1,\\"a\\":2}"}',
    '{"a":["a","a"],"b":{"c":{"a":1}},"c":1}',
    '"just a string"',
    '[1,2,3]',
    '{}',
  ])('%s repeats none', (text) => {
    assert.equal(repeatedName(text), undefined);
  });

  test('an object of 200,000 names is read in linear time, and its one repeat found', () => {
    const names = Array.from({ length: 200_000 }, (_, i) => `"n${i}":${i}`);
    const text = `{${names.join(',')},"n199999":0}`;
    const started = process.hrtime.bigint();
    assert.equal(repeatedName(text), 'n199999');
    // Quadratic would be 2 × 10¹⁰ comparisons (minutes); linear takes milliseconds.
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 5_000);
  });
});

describe('parseJson', () => {
  test('a repeated name is 400 invalid_argument naming its path, within the message named', () => {
    const text = '{"observations":[{"axis":"demand","value":1,"value":2}]}';
    const refused = (what: string | undefined, field: string) => (err: unknown) =>
      err instanceof ServiceError && err.code === 'invalid_argument' && err.message === `${field}: is given twice in one object; give each field once` && err.details?.field === field;
    assert.throws(() => parseJson(text, 'messages[3]'), refused('messages[3]', 'messages[3].observations[0].value'));
    assert.throws(() => parseJson(text), refused(undefined, 'observations[0].value'));
  });

  test('malformed JSON is still reported as such, and good JSON parsed', () => {
    assert.throws(() => parseJson('{"a":1,"a"'), /body: malformed JSON/);
    assert.deepEqual(parseJson('{"a":[1,{"b":"}"}]}'), { a: [1, { b: '}' }] });
  });
});
