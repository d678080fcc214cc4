#!/usr/bin/env node
// The operator CLI. Build first (`make build`); this runs the compiled code in dist/.
'use strict';
const path = require('node:path');
let cli;
try {
  cli = require(path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js'));
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    process.stderr.write('forecast: not built yet; run `make build` first\n');
    process.exit(1);
  }
  throw err;
}
cli.main(process.argv.slice(2)).then((code) => {
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
});
