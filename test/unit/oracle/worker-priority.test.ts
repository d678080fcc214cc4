/** Fitting threads run below the event loop's priority, so a burst of cold fits cannot starve it. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { ForecastPool } from '../../../src/oracle/forecast-pool';
import { WORKER_NICE } from '../../../src/oracle/forecast-worker';

/** Nice value of each thread of this process (Linux /proc). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]));
}

// Thread priorities are read from Linux's /proc; elsewhere the test is skipped with its reason printed.
const onLinux = existsSync('/proc/thread-self');
if (!onLinux) console.warn('worker-priority: skipped, needs Linux /proc/thread-self');
(onLinux ? test : test.skip)('forecast workers lower their own priority; the event loop keeps its own', async () => {
  const before = threadNices().filter((n) => n === WORKER_NICE).length;
  const pool = new ForecastPool(2);
  try {
    const series = Float64Array.from({ length: 120 }, (_, i) => 50 + (i % 7) + 0.1 * i);
    const r = await pool.run({ fitKey: 'priority-test', series, info: { period: 7 }, horizon: 3, seed: 1, model: 'auto', levels: [0.5] });
    assert.ok(r.summary);
    // the second worker starts (and lowers its priority) while the first fits: wait until it has
    for (let i = 0; threadNices().filter((n) => n === WORKER_NICE).length - before < 2 && i < 3000; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(threadNices().filter((n) => n === WORKER_NICE).length - before, 2, 'both workers at the lower priority');
    assert.equal(Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16]), 0, 'the event loop is not lowered');
  } finally {
    await pool.close();
  }
});
