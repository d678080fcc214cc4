/**
 * The engine is pure (STYLE 6): nothing under src/engine reads the clock, calls Math.random, or
 * imports anything but other engine files. This test is the lint rule that keeps it so.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const ENGINE = resolve('src/engine');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const FORBIDDEN: [RegExp, string][] = [
  [/\bMath\.random\s*\(/, 'Math.random (use the seeded Rng)'],
  [/\bDate\.now\s*\(|\bnew Date\s*\(|\bperformance\.now\s*\(|process\.hrtime/, 'the clock'],
  [/\bprocess\.env\b/, 'the environment'],
  [/\bconsole\.(log|warn|error|info)\s*\(/, 'console output (record warnings in the result)'],
];

test('engine files use no clock, no Math.random, no environment, no console', () => {
  const problems: string[] = [];
  for (const f of files(ENGINE)) {
    const text = readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const [re, what] of FORBIDDEN) if (re.test(text)) problems.push(`${relative(ENGINE, f)}: ${what}`);
  }
  assert.deepEqual(problems, []);
});

test('engine files import only other engine files', () => {
  const problems: string[] = [];
  for (const f of files(ENGINE)) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith('.')) {
        problems.push(`${relative(ENGINE, f)} imports package ${spec}`);
        continue;
      }
      const target = resolve(dirname(f), spec);
      if (!target.startsWith(ENGINE)) problems.push(`${relative(ENGINE, f)} imports ${spec} outside the engine`);
    }
  }
  assert.deepEqual(problems, []);
});
