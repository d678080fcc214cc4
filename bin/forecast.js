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
// A reader that goes away (`forecast … | head -1`) ends a command quietly, with the status a
// SIGPIPE gives (141); the server keeps serving without its output (src/cli/closed-output.ts).
require(path.join(dist, 'cli', 'closed-output.js')).handleClosedOutput(
  [process.stdout, process.stderr],
  process.argv[2] === 'serve' ? undefined : () => process.exit(141),
);

// The server runs with its V8 settings (src/server-flags.ts): they can only be given at start-up,
// so `serve` without them re-executes itself with them. This launcher then stays between whoever
// started it (npx, a shell, a process manager) and the server, and must never leave the server
// running on its own:
// - signals it gets (SIGINT, SIGTERM, SIGHUP) are passed to the server, which drains and exits,
//   and the launcher exits with the server's status;
// - if its own parent dies without passing a signal on (npx under `sh -c` does: the shell dies of
//   SIGTERM and leaves its child behind), the launcher notices (it is re-parented) and stops the
//   server as on SIGTERM;
// - if the launcher itself dies (even by SIGKILL), the server sees its IPC channel close and
//   drains and exits (src/cli/serve.ts).
if (process.argv[2] === 'serve') {
  const { SERVER_NODE_FLAGS } = require(path.join(dist, 'server-flags.js'));
  const missing = SERVER_NODE_FLAGS.filter((f) => !process.execArgv.includes(f));
  if (missing.length > 0) {
    const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, [...process.execArgv, ...missing, __filename, ...process.argv.slice(2)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
    const parent = process.ppid;
    const orphaned = setInterval(() => {
      if (parentAlive(parent)) return;
      clearInterval(orphaned);
      child.kill('SIGTERM');
    }, 500);
    orphaned.unref();
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + require('node:os').constants.signals[signal] : 1)));
    return;
  }
}

/** Whether the process that started us is still our parent (`process.ppid` is read once, at start). */
function parentAlive(pid) {
  try {
    // Linux: the current parent, field 4 of /proc/self/stat (after the parenthesised name).
    const stat = require('node:fs').readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return err.code === 'EPERM';
    }
  }
}

cli.main(process.argv.slice(2)).then((code) => {
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
});
