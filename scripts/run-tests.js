#!/usr/bin/env node
// Runs the compiled tests (dist/test/**/*.test.js) with node's built-in test runner.
// Usage: node scripts/run-tests.js [substring ...]  — only files whose path contains a substring.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', 'dist', 'test');
function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.name.endsWith('.test.js') ? [p] : [];
  });
}
const filters = process.argv.slice(2);
const files = walk(root)
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no compiled test files found under dist/test (run `make build` first)');
  process.exit(1);
}
const res = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(res.status ?? 1);
