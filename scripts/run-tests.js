#!/usr/bin/env node
// Runs every test with jest (jest.config.js). Usage: node scripts/run-tests.js [jest args ...],
// e.g. a path substring to run only matching test files, or --coverage.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const jest = require.resolve('jest/bin/jest');
const res = spawnSync(process.execPath, [jest, '--ci', ...process.argv.slice(2)], { stdio: 'inherit', cwd: path.join(__dirname, '..') });
process.exit(res.status ?? 1);
