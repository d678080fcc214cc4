import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../../src/engine/rng';
import { REPO_ROOT } from '../../helpers/files';

// The compiled CLI (`make build`): it runs its own worker threads, which load compiled scripts.
const CLI = join(REPO_ROOT, 'dist/src/cli/evaluate.js');

function smallFile(): string {
  const rng = new Rng(5);
  const lines: string[] = [];
  for (let i = 0; i < 30; i++) {
    const period = i % 3 === 0 ? 12 : 1;
    const y = Array.from({ length: 60 }, (_, t) => 100 + t * (i % 4) + (period > 1 ? 10 * Math.sin((2 * Math.PI * t) / 12) : 0) + 3 * rng.normal());
    lines.push(JSON.stringify({ id: `S${i}`, group: period > 1 ? 'monthly' : 'yearly', period, horizon: 6, train: y.slice(0, 54), test: y.slice(54) }));
  }
  const dir = mkdtempSync(join(tmpdir(), 'evaluate-test-'));
  const file = join(dir, 'small.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

test('evaluate --json --limit 20 prints one JSON line with every key last', () => {
  const r = spawnSync(process.execPath, [CLI, '--data', smallFile(), '--json', '--limit', '20', '--models', 'auto,naive2'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  const summary = JSON.parse(lines[lines.length - 1]);
  for (const k of ['smape', 'mase', 'owa', 'msis', 'coverage', 'seconds_per_series', 'series', 'groups']) assert.ok(k in summary, k);
  assert.equal(summary.series, 20);
  assert.deepEqual(Object.keys(summary.groups).sort(), ['monthly', 'yearly']);
  for (const g of Object.values(summary.groups) as Record<string, number>[]) for (const k of ['smape', 'mase', 'owa', 'msis', 'coverage']) assert.equal(typeof g[k], 'number');
  assert.equal(summary.models.naive2.owa, 1);
});

test('evaluate refuses bad usage with exit code 2', () => {
  const r = spawnSync(process.execPath, [CLI, '--data', smallFile(), '--models', 'nonsense'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown model/);
  assert.equal(spawnSync(process.execPath, [CLI], { encoding: 'utf8' }).status, 2);
});
