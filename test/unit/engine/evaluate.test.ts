import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aggregateSeries, reshapeSeries, rollingOrigins, type BenchmarkSeries } from '../../../src/cli/evaluate-data';
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
  for (const bad of [['--kind', 'integer'], ['--quantiles', '0.5,2'], ['--every', '0'], ['--group', 'none'], ['--origins', '0'], ['--horizon', '-1'], ['--aggregate', '5'], ['--group', 'yearly', '--aggregate', '60']]) {
    const b = spawnSync(process.execPath, [CLI, '--data', smallFile(), ...bad], { encoding: 'utf8' });
    assert.equal(b.status, 2, `${bad.join(' ')}: ${b.stderr}`);
  }
  // evaluate-prior's --cut: whole lengths from 8 (a cut into the full histories' own class is refused by fitPriors)
  const PRIOR_CLI = join(REPO_ROOT, 'dist/src/cli/evaluate-prior.js');
  const file = smallFile();
  for (const cut of [`${file}:7`, `${file}:12.5`, `${file}:12/x`, `${file}`]) {
    const b = spawnSync(process.execPath, [PRIOR_CLI, '--data', file, '--cut', cut], { encoding: 'utf8' });
    assert.equal(b.status, 2, `--cut ${cut}: ${b.stderr}`);
    assert.match(b.stderr, /--cut wants FILE:N/);
  }
});

const quarterly = (n: number, h: number): BenchmarkSeries => {
  const all = Array.from({ length: n }, (_, t) => t + 1);
  return { id: 'Q', group: 'quarterly', period: 4, horizon: h, train: all.slice(0, n - h), test: all.slice(n - h) };
};

test('aggregateSeries sums blocks aligned to the end and names the frequency the sum is', () => {
  // 1..42: two values before the first whole year are dropped; the years are 3+4+5+6, …, 39+40+41+42
  const y = aggregateSeries(quarterly(42, 8), 4);
  assert.equal(y.group, 'yearly');
  assert.equal(y.period, 1);
  assert.equal(y.horizon, 2);
  assert.deepEqual([...y.train, ...y.test], Array.from({ length: 10 }, (_, b) => 4 * (4 * b + 3) + 6));
  assert.deepEqual(y.test, [4 * 35 + 6, 4 * 39 + 6]);
  assert.equal(aggregateSeries(quarterly(42, 8), 4, 3).test.length, 3);
  // a missing value makes its block missing; an unknown group keeps its name with the factor
  const gap = { ...quarterly(16, 4), group: 'q', train: [1, NaN, ...quarterly(16, 4).train.slice(2)] };
  const g = aggregateSeries(gap, 2);
  assert.equal(g.group, 'q×2');
  assert.equal(g.period, 2);
  assert.ok(Number.isNaN(g.train[0]));
  assert.equal(g.train[1], 3 + 4);
  assert.throws(() => aggregateSeries(quarterly(40, 8), 3), /period 4, which is not a multiple of 3/);
});

test('rollingOrigins scores whole windows from earlier origins and stops before too short a history', () => {
  const s = quarterly(20, 4);
  const r = rollingOrigins(s, 20);
  // histories of 16, 15, …, 8 values: 9 origins
  assert.deepEqual(r.map((x) => x.origin), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(r[0].train, s.train);
  assert.deepEqual(r[0].test, s.test);
  assert.deepEqual(r[3].train, s.train.slice(0, 13));
  assert.deepEqual(r[3].test, [14, 15, 16, 17]);
  assert.ok(r.every((x) => x.test.length === 4 && x.horizon === 4));
});

test('reshapeSeries re-splits with a new horizon, shortens histories, drops short ones, and leaves series alone without options', () => {
  const s = quarterly(20, 4);
  assert.deepEqual(reshapeSeries([s]), [s]);
  const [h6] = reshapeSeries([s], { horizon: 6 });
  assert.equal(h6.train.length, 14);
  assert.deepEqual(h6.test, [15, 16, 17, 18, 19, 20]);
  assert.equal(h6.origin, undefined);
  assert.deepEqual(reshapeSeries([s], { horizon: 13 }), []);
  // 20 quarters are 5 years: too short a history as yearly data
  assert.deepEqual(reshapeSeries([s], { aggregate: 4 }), []);
  assert.equal(reshapeSeries([quarterly(48, 8)], { aggregate: 4, horizon: 2, origins: 3 }).length, 3);
  // --history keeps the last values before each origin, and drops a record left with fewer than 8
  const short = reshapeSeries([s], { origins: 3, history: 9 });
  assert.deepEqual(short.map((r) => r.train), [s.train.slice(-9), s.train.slice(-10, -1), s.train.slice(-11, -2)]);
  assert.deepEqual(short.map((r) => r.test), [s.test, [16, 17, 18, 19], [15, 16, 17, 18]]);
  assert.deepEqual(reshapeSeries([s], { history: 7 }), []);
});

test('evaluate --aggregate and --origins score reshaped series and report per origin', () => {
  const r = spawnSync(process.execPath, [CLI, '--data', smallFile(), '--group', 'monthly', '--aggregate', '3', '--horizon', '2', '--origins', '3', '--models', 'naive', '--workers', '1', '--json'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  // 10 monthly series of 60 values: 20 quarters each, 3 origins each
  assert.equal(summary.series, 30);
  assert.deepEqual(Object.keys(summary.groups), ['quarterly']);
  assert.deepEqual(Object.keys(summary.by_origin), ['0', '1', '2']);
  for (const o of Object.values(summary.by_origin) as Record<string, number>[]) assert.equal(o.series, 10);
  assert.equal(summary.coverage_by_step.length, 2);
  assert.match(r.stderr, /by forecast origin/);
  assert.match(r.stderr, /naive\s+2\s+10\s/);
});
