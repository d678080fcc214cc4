// Jest runs every test (unit, integration, browser) from the TypeScript sources, transformed in
// memory by @swc/jest. Worker threads load their compiled scripts from dist/ (src/worker-script.ts),
// so `make test` builds first. Integration tests start the real servers on port 0.
'use strict';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/jest-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022', transform: { useDefineForClassFields: true } },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  // Two cores: one test file per core; the servers a file starts use the rest of its process.
  maxWorkers: 2,
  // Integration tests fit real models and start real servers: generous, never the default 5 s.
  testTimeout: 120_000,
  collectCoverageFrom: ['src/**/*.ts'],
  coverageProvider: 'v8',
  coverageReporters: ['text-summary', 'text'],
};
