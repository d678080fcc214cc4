/**
 * Do the shipped calibration priors (`CALIBRATION_PRIORS`, `src/engine/calibration/prior.ts`) still
 * come out of the command their comment names, with today's engine? Runs `evaluate-prior` on the
 * documented files and compares its constants with the shipped ones printed the same way; prints
 * "reproduced" or each differing line, and exits 1 on a difference. Why: a change to a route's
 * forecasts moves its validation windows' errors even when every test figure stays the same (engine
 * 1.5.1's ridge refit moved the daily prior, unnoticed until engine 1.7.0).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { sharedDataDir } from '../src/cli/evaluate-data';
import { printPriors } from '../src/cli/evaluate-prior';
import { CALIBRATION_PRIORS, WEEKLY_SHORT_HISTORIES } from '../src/engine/calibration/prior';

/** The files the priors' comment names, under `shared/data`, and the weekly one cut short (`--cut`). */
const PRIOR_SOURCES = ['m3/m3.jsonl', 'm4/m4-weekly.jsonl', 'm4/m4-hourly.jsonl', 'daily/web-traffic.jsonl', 'hierarchy/australian-tourism.json'];

function main(): number {
  const data = PRIOR_SOURCES.map((f) => join(sharedDataDir(), f)).join(',');
  const cut = `${join(sharedDataDir(), 'm4/m4-weekly.jsonl')}:${WEEKLY_SHORT_HISTORIES.join('/')}`;
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(__dirname, '..', 'src', 'cli', 'evaluate-prior.js'), '--data', data, '--cut', cut], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    return 1;
  }
  const printed = /export const CALIBRATION_PRIORS[\s\S]*?\n\];/.exec(r.stdout)?.[0] ?? '';
  const shipped = printPriors(CALIBRATION_PRIORS);
  const a = printed.split('\n');
  const b = shipped.split('\n');
  const differ = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => i).filter((i) => a[i] !== b[i]);
  console.log(`\ncalibration priors (${CALIBRATION_PRIORS.length} classes) refitted in ${seconds.toFixed(0)} s: ${differ.length === 0 ? 'reproduced' : `${differ.length} lines differ`}`);
  for (const i of differ) console.log(`  shipped: ${b[i] ?? '(none)'}\n  fitted:  ${a[i] ?? '(none)'}`);
  return differ.length === 0 ? 0 : 1;
}

process.exitCode = main();
