/**
 * `forecast evaluate-hierarchy` end to end (compiled CLI, worker threads) on a slice of the
 * Australian tourism hierarchy: two states, every level of the grouped structure.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, sharedDataFile } from '../helpers/files';

const BIN = join(REPO_ROOT, 'bin', 'forecast.js');

function slice(states: readonly string[]): string {
  const data = JSON.parse(readFileSync(sharedDataFile('hierarchy/australian-tourism.json'), 'utf8'));
  data.series = data.series.filter((s: { path: string[] }) => states.includes(s.path[1]));
  const file = join(mkdtempSync(join(tmpdir(), 'evaluate-hierarchy-')), 'slice.json');
  writeFileSync(file, JSON.stringify(data));
  return file;
}

const run = (args: string[]) => spawnSync(process.execPath, [BIN, 'evaluate-hierarchy', ...args], { encoding: 'utf8' });

test('evaluate-hierarchy --json: every method, every level, coherent; stdout is the JSON alone, the table on stderr', () => {
  const r = run(['--data', slice(['ACT', 'Tasmania']), '--horizon', '4', '--json', '--workers', '2', '--draws', '200']);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  // ACT: 1 region, TAS: 5 regions; 4 purposes → 1 + 2 + 6 + 4 + 8 + 24
  assert.equal(out.series, 45);
  assert.equal(out.horizon, 4);
  assert.deepEqual(Object.keys(out.methods), ['base', 'mint_shrink', 'wls_struct', 'ols', 'bottom_up']);
  const levels = ['Total', 'State', 'Region', 'Purpose', 'State × Purpose', 'Region × Purpose'];
  for (const m of Object.values(out.methods) as any[]) {
    assert.deepEqual(Object.keys(m.levels), levels);
    for (const s of [m, ...Object.values(m.levels)] as any[]) {
      for (const k of ['mase', 'rmsse', 'crps', 'coverage']) assert.ok(Number.isFinite(s[k]) && s[k] >= 0, `${k}: ${s[k]}`);
      assert.ok(s.coverage <= 1);
    }
  }
  // bottom-up keeps the bottom level's forecasts, but for the floor at 0: where the band censors a
  // series at 0 its reconciled mean is the censored law's, above the point forecast (0.996 vs 0.990)
  const [bu, base] = [out.methods.bottom_up.levels['Region × Purpose'], out.methods.base.levels['Region × Purpose']];
  assert.ok(Math.abs(bu.mase - base.mase) <= 0.02 * base.mase, `${bu.mase} vs ${base.mase}`);
  assert.ok(out.coherence_error <= 1e-9, String(out.coherence_error));
  assert.match(r.stderr, /mint_shrink: covariance of the backtest errors, shrinkage intensity/);
});

test('evaluate-hierarchy refuses bad usage (exit 2) and bad files (exit 1, naming the record)', () => {
  assert.equal(run([]).status, 2);
  assert.equal(run(['--data', slice(['ACT']), '--horizon', 'x']).status, 2);
  const bad = JSON.parse(readFileSync(slice(['ACT']), 'utf8'));
  bad.series[1].path = ['Total'];
  const file = join(mkdtempSync(join(tmpdir(), 'evaluate-hierarchy-')), 'bad.json');
  writeFileSync(file, JSON.stringify(bad));
  const r = run(['--data', file]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /series\[1\]\.path: must name one value per level/);
  const long = run(['--data', slice(['ACT']), '--horizon', '9']);
  assert.equal(long.status, 1);
  assert.match(long.stderr, /horizon: must be 1\.\.8/);
});
