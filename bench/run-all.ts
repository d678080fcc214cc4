/**
 * `make bench`: every benchmark in turn, each in a fresh process (a load generator's heap and JIT
 * state must not colour the next measurement); each prints its own numbers.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const BENCHES = ['transport.js', 'oracle.js', 'graph.js', 'fairness.js', 'postgres.js', 'engine-vs-r.js', 'priors.js', 'drift.js', 'gaps.js'];

let failed = false;
for (const file of BENCHES) {
  const r = spawnSync(process.execPath, [join(__dirname, file)], { stdio: 'inherit' });
  if (r.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
