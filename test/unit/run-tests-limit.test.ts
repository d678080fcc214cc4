/**
 * The test runner stops a pass that runs past its time limit and fails, saying so (a pass once hung
 * with two files left in idle workers, past every jest timeout; CI would have waited its 90 minutes).
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const RUNNER = join(__dirname, '..', '..', 'scripts', 'run-tests.js');

test('a pass longer than TEST_PASS_MINUTES is stopped and the run fails', () => {
  // 0.001 minutes (60 ms): jest cannot even start in that time
  const r = spawnSync(process.execPath, [RUNNER, 'count-season'], { encoding: 'utf8', env: { ...process.env, TEST_DATABASES: 'sqlite', TEST_PASS_MINUTES: '0.001' }, timeout: 60_000 });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /jest ran for 0\.001 minutes without finishing \(TEST_PASS_MINUTES\): stopped as hung/);
  assert.match(r.stdout, /SQLite: jest ended without results/);
});
