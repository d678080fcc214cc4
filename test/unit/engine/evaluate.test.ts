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

test('evaluate --json --limit 20 prints only one JSON object on stdout, the table on stderr', () => {
  const r = spawnSync(process.execPath, [CLI, '--data', smallFile(), '--json', '--limit', '20', '--models', 'auto,naive2'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  assert.match(r.stderr, /model\s+group\s+series/);
  for (const k of ['smape', 'mase', 'owa', 'msis', 'coverage', 'spl', 'coverage_by_step', 'seconds_per_series', 'series', 'groups']) assert.ok(k in summary, k);
  assert.equal(summary.coverage_by_step.length, 6);
  assert.ok(summary.spl > 0);
  assert.equal(summary.series, 20);
  assert.deepEqual(Object.keys(summary.groups).sort(), ['monthly', 'yearly']);
  for (const g of Object.values(summary.groups) as Record<string, number>[]) for (const k of ['smape', 'mase', 'owa', 'msis', 'coverage']) assert.equal(typeof g[k], 'number');
  assert.equal(summary.models.naive2.owa, 1);
});

test('evaluate --by-horizon prints coverage per step; --group and --every select series', () => {
  const r = spawnSync(process.execPath, [CLI, '--data', smallFile(), '--by-horizon', '--group', 'yearly', '--every', '2', '--models', 'naive', '--workers', '1'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  // 20 yearly series of the 30, every 2nd of them
  assert.match(r.stdout, /naive\s+yearly\s+10\s/);
  assert.match(r.stdout, /coverage of the central 95% interval by horizon step/);
  assert.match(r.stdout, /naive yearly:\n\s+1:\s*[\d.]+\s+2:/);
});

test('evaluate --help prints the usage and exits 0', () => {
  const r = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.match(r.stdout, /^usage: forecast evaluate --data FILE.jsonl/);
  assert.match(r.stdout, /--by-horizon/);
});

test('evaluate refuses bad usage with exit code 2', () => {
  const r = spawnSync(process.execPath, [CLI, '--data', smallFile(), '--models', 'nonsense'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown model/);
  assert.equal(spawnSync(process.execPath, [CLI], { encoding: 'utf8' }).status, 2);
  for (const bad of [['--kind', 'integer'], ['--quantiles', '0.5,2'], ['--every', '0'], ['--group', 'none']]) {
    const b = spawnSync(process.execPath, [CLI, '--data', smallFile(), ...bad], { encoding: 'utf8' });
    assert.equal(b.status, 2, `${bad.join(' ')}: ${b.stderr}`);
  }
});
