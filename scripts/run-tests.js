#!/usr/bin/env node
// Runs every test with jest (jest.config.js), in two passes:
//  1. every test file on SQLite;
//  2. every test file that depends on the store (imports src/store/database.ts, directly or
//     through the service or a feature store — jest's own dependency graph decides) again on
//     PostgreSQL, on a throwaway server started here (scripts/postgres.js) and stopped at the
//     end, even on failure or Ctrl-C. Each test service gets a fresh database of its own
//     (test/helpers/database.ts). Files that never reach the store (the pure engine, parsers)
//     would run identically, so they run once.
// After each pass it prints the counts and every skipped test (a test skipped on one database
// says why in its name). Exit status: non-zero if either pass failed.
//
// Usage: node scripts/run-tests.js [jest args ...], e.g. a path substring to run only matching
// test files, or --coverage. TEST_DATABASES=sqlite (or postgres) runs one pass only.
// TEST_PASS_MINUTES (default 30) stops a pass that runs longer, and the run fails (`PASS_MINUTES`).
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const jest = require.resolve('jest/bin/jest');
const args = process.argv.slice(2);
const passes = (process.env.TEST_DATABASES ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean);
for (const p of passes) if (p !== 'sqlite' && p !== 'postgres') throw new Error(`TEST_DATABASES: unknown database ${p}`);

let child;
let server;
let interrupted;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted = signal;
    // Ctrl-C reached jest and PostgreSQL already (one process group); a signal sent to this
    // process alone is passed on. Whatever runs is stopped and cleaned up below, then we exit.
    if (child && child.exitCode === null) child.kill(signal);
  });
}

/** Test files jest selects with `extra` arguments (absolute paths). */
function listTests(extra) {
  const r = spawnSync(process.execPath, [jest, '--listTests', '--json', ...extra], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`jest --listTests failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * Longest a pass may run (minutes; `TEST_PASS_MINUTES` overrides): a pass takes about 5 here.
 * Why: a pass once hung with its last two files in idle workers, past every jest timeout; without
 * a limit it would hold CI until CI's own 90 minutes ran out, saying nothing. (Its cause, found
 * when it recurred: a Node 20 deadlock exporting a new Ed25519 key as a JWK, a worker's main thread
 * blocked for good; fixed in `src/manifests/signing-keys.ts`. The limit stays for anything else.)
 */
const PASS_MINUTES = Number(process.env.TEST_PASS_MINUTES ?? 30);

/** Run jest with `extra` arguments and `env`; resolves its exit code and its JSON results. */
function runJest(extra, env) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'forecast-jest-')), 'results.json');
  return new Promise((resolve) => {
    const processor = `--testResultsProcessor=${path.join(__dirname, 'jest-results.js')}`;
    child = spawn(process.execPath, [jest, '--ci', processor, ...args, ...extra], { stdio: 'inherit', cwd: root, env: { ...process.env, ...env, FORECAST_JEST_RESULTS: out } });
    const running = child;
    const limit = setTimeout(() => {
      console.error(`\njest ran for ${PASS_MINUTES} minutes without finishing (TEST_PASS_MINUTES): stopped as hung; the files not reported above as PASS or FAIL were still running`);
      running.kill('SIGTERM');
      setTimeout(() => running.exitCode === null && running.kill('SIGKILL'), 10_000).unref();
    }, PASS_MINUTES * 60_000);
    child.on('exit', (code, signal) => {
      clearTimeout(limit);
      child = undefined;
      let results;
      try {
        results = JSON.parse(fs.readFileSync(out, 'utf8'));
      } catch {
        results = undefined;
      }
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
      resolve({ code: code ?? (signal ? 1 : 0), results });
    });
  });
}

/** The pass's counts and its skipped tests, as printed after it. */
function report(name, { code, results }) {
  if (!results) return `${name}: jest ended without results (exit ${code})`;
  const lines = [
    `${name}: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped, ` +
      `${results.numTotalTests} tests in ${results.numTotalTestSuites} files` + (code === 0 ? '' : ` — FAILED (exit ${code})`),
  ];
  for (const file of results.testResults) {
    for (const t of file.testResults) {
      if (t.status === 'pending' || t.status === 'skipped' || t.status === 'todo') lines.push(`  skipped: ${path.relative(root, file.testFilePath)}: ${t.fullName}`);
    }
  }
  return lines.join('\n');
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function main() {
  const summaries = [];
  let failed = false;
  if (passes.includes('sqlite') && !interrupted) {
    console.log('\n=== Tests on SQLite ===\n');
    const r = await runJest([], { TEST_DATABASE: 'sqlite' });
    summaries.push(report('SQLite', r));
    failed ||= r.code !== 0;
  }
  if (passes.includes('postgres') && !interrupted) {
    const selected = listTests(args.filter((a) => !a.startsWith('--coverage')));
    const usesStore = new Set(listTests(['--roots', '<rootDir>/test', '--roots', '<rootDir>/src', '--findRelatedTests', path.join(root, 'src', 'store', 'database.ts')]));
    const onPostgres = selected.filter((f) => usesStore.has(f));
    const elsewhere = selected.filter((f) => !usesStore.has(f));
    if (onPostgres.length === 0) {
      summaries.push('PostgreSQL: no selected test file uses the database; pass skipped');
    } else {
      console.log(`\n=== Tests on PostgreSQL: the ${onPostgres.length} test files that use the database (${elsewhere.length} others do not and ran on the SQLite pass only) ===\n`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { startPostgres } = require('./postgres');
      server = await startPostgres();
      console.log(`PostgreSQL ${path.basename(path.dirname(server.binDir))} on 127.0.0.1:${server.port} (throwaway, in ${server.dataDir})\n`);
      const ignore = elsewhere.length > 0 ? ['--testPathIgnorePatterns', ...elsewhere.map((f) => `^${escape(f)}$`)] : [];
      const r = await runJest(ignore, { TEST_DATABASE: 'postgres', TEST_POSTGRES_URL: server.url() });
      summaries.push(report('PostgreSQL', r));
      failed ||= r.code !== 0;
    }
  }
  console.log(`\n${summaries.join('\n')}`);
  return failed ? 1 : 0;
}

main()
  .catch((err) => {
    console.error(err);
    return 1;
  })
  .then(async (code) => {
    await server?.destroy();
    process.exit(interrupted ? 130 : code);
  });
