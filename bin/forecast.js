#!/usr/bin/env node
// The operator CLI. Build first (`make build`); this runs the compiled code in dist/.
'use strict';
const path = require('node:path');
const dist = path.join(__dirname, '..', 'dist', 'src');
let cli;
try {
  cli = require(path.join(dist, 'cli', 'main.js'));
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    process.stderr.write('forecast: not built yet; run `make build` first\n');
    process.exit(1);
  }
  throw err;
}

// The server runs with its V8 settings (src/server-flags.ts): they can only be given at start-up,
// so `serve` without them re-executes itself with them, forwarding signals and the exit status.
if (process.argv[2] === 'serve') {
  const { SERVER_NODE_FLAGS } = require(path.join(dist, 'server-flags.js'));
  const missing = SERVER_NODE_FLAGS.filter((f) => !process.execArgv.includes(f));
  if (missing.length > 0) {
    const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, [...process.execArgv, ...missing, __filename, ...process.argv.slice(2)], { stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + require('node:os').constants.signals[signal] : 1)));
    return;
  }
}

cli.main(process.argv.slice(2)).then((code) => {
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
});
