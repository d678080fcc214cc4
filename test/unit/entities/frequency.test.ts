import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { indexOf, parseTime, timeOf, FREQUENCY_NAMES } from '../../../src/entities/frequency';
import { ServiceError } from '../../../src/rpc/errors';

test('grid alignment per frequency', () => {
  assert.equal(indexOf('P1D', Date.UTC(2026, 0, 5)), Date.UTC(2026, 0, 5) / 86_400_000);
  assert.equal(indexOf('P1D', Date.UTC(2026, 0, 5, 1)), undefined);
  assert.notEqual(indexOf('P1W', Date.UTC(2026, 0, 5)), undefined); // a Monday
  assert.equal(indexOf('P1W', Date.UTC(2026, 0, 6)), undefined);
  assert.equal(indexOf('P1M', Date.UTC(2026, 1, 1)), 2026 * 12 + 1);
  assert.equal(indexOf('P1M', Date.UTC(2026, 1, 2)), undefined);
  assert.notEqual(indexOf('P3M', Date.UTC(2026, 3, 1)), undefined);
  assert.equal(indexOf('P3M', Date.UTC(2026, 1, 1)), undefined);
  assert.equal(indexOf('P1Y', Date.UTC(2026, 0, 1)), 2026);
  assert.equal(indexOf('PT15M', Date.UTC(2026, 0, 1, 3, 45)), Date.UTC(2026, 0, 1, 3, 45) / 900_000);
  assert.equal(indexOf('PT15M', Date.UTC(2026, 0, 1, 3, 40)), undefined);
});

test('timeOf inverts indexOf on every frequency', () => {
  for (const f of FREQUENCY_NAMES) {
    const t0 = timeOf(f, 1000);
    assert.equal(indexOf(f, t0), 1000, f);
    assert.equal(timeOf(f, indexOf(f, t0)! + 1) > t0, true, f);
  }
});

test('RFC 3339 parsing is strict', () => {
  assert.equal(parseTime('2026-01-02T00:00:00Z', 't'), Date.UTC(2026, 0, 2));
  assert.equal(parseTime('2026-01-02T01:00:00+01:00', 't'), Date.UTC(2026, 0, 2));
  assert.equal(parseTime('2026-01-02T00:00:00.000Z', 't'), Date.UTC(2026, 0, 2));
  assert.equal(parseTime('2026-01-02T00:00:00.123000000Z', 't'), Date.UTC(2026, 0, 2) + 123);
  // digits below the millisecond are refused, not dropped: 00:00:00.0009Z is not midnight (found by QA)
  for (const fine of ['2026-01-02T00:00:00.0009Z', '2026-01-02T00:00:00.000000001Z', '2026-01-02T00:00:00.1234+01:00']) {
    assert.throws(() => parseTime(fine, 'observations[0].time'), (e: ServiceError) => e.code === 'invalid_argument' && /^observations\[0\]\.time: .* below the millisecond/.test(e.message), fine);
  }
  // a filter bound is rounded up to the next millisecond instead (exact for >= start and < end)
  assert.equal(parseTime('2026-01-02T00:00:00.0009Z', 'start', 'ceil'), Date.UTC(2026, 0, 2) + 1);
  assert.equal(parseTime('2026-01-02T00:00:00.123456+00:00', 'end', 'ceil'), Date.UTC(2026, 0, 2) + 124);
  assert.equal(parseTime('1960-01-02T00:00:00.000001Z', 'start', 'ceil'), Date.UTC(1960, 0, 2) + 1);
  assert.equal(parseTime('2026-01-02T00:00:00.123000Z', 'start', 'ceil'), Date.UTC(2026, 0, 2) + 123);
  for (const bad of ['2026-01-02', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', 'yesterday', '2026-01-02 00:00:00', '1767312000']) {
    assert.throws(() => parseTime(bad, 'observations[3].time'), (e: ServiceError) => e.code === 'invalid_argument' && e.message.startsWith('observations[3].time'), bad);
  }
});
