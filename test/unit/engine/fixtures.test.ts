/**
 * The R fixtures that the engine's golden tests loop over are complete: each holds exactly the
 * cases its script in scripts/r produced. A truncated or emptied fixture would otherwise let those
 * loops pass having checked little or nothing.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { fixtureJson } from '../../helpers/files';

const COUNTS: readonly [file: string, cases: (f: any) => number, expected: number][] = [
  ['arima-fixed.json', (f) => Object.keys(f).length, 10],
  ['arima-auto.json', (f) => Object.keys(f).length, 7],
  ['arima-m3.json', (f) => Object.keys(f.series).length, 51],
  ['arima-tests.json', (f) => f.length, 41],
  ['autoreg-lm.json', (f) => f.cases.length, 3],
  ['ets-fits.json', (f) => f.fits.length, 24],
  ['ets-initstate.json', (f) => f.cases.length, 42],
  ['ets-admissible.json', (f) => f.cases.length, 500],
  ['ets-auto.json', (f) => f.auto.length, 22],
  ['naive-cases.json', (f) => f.length, 5],
  ['stl-stl.json', (f) => f.length, 4],
  ['theta-thetaf.json', (f) => f.length, 5],
];

test.each(COUNTS)('%s holds all its cases', (file, cases, expected) => {
  assert.equal(cases(fixtureJson(`r/${file}`)), expected);
});
