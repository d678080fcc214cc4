/** `forecast webhooks listen` prints drift events for a person: numbers rounded to what can be read. */
import { expect, test } from '@jest/globals';
import { describeEvent } from '../../../src/cli/webhooks';

const drift = (data: Record<string, unknown>) => ({ id: 'evt_1', type: 'drift.detected', created_at: '2026-11-23T15:10:31Z', data: { entity: 'server:api-1', axis: 'cpu', time: '2026-11-23T15:00:00Z', ...data } });

test('drift numbers are printed to 4 significant digits, whole from 1,000 up, PIT to 3 decimals', () => {
  const line = describeEvent(drift({ actual: 181.4, expected: 20.614812116054257, interval: { level: 0.95, lower: 15.935983424709281, upper: 26.66735194523899 }, pit: 0.21995512557655644 }));
  expect(line).toBe('2026-11-23T15:10:31Z drift.detected server:api-1 cpu at 2026-11-23T15:00:00Z: actual 181.4, expected 20.61, 95% interval [15.94, 26.67], PIT 0.22 (evt_1)');
  expect(describeEvent(drift({ actual: 123456.789, expected: -0.000123456, interval: { level: 0.9, lower: 1000.4, upper: 999.96 }, pit: 1 }))).toContain('actual 123457, expected -0.0001235, 90% interval [1000, 1000], PIT 1');
});

test('fields that are missing or not numbers are printed as they came', () => {
  expect(describeEvent(drift({ actual: 'n/a' }))).toContain('actual n/a, expected undefined, 0% interval [undefined, undefined], PIT undefined');
  expect(describeEvent({ id: 'evt_2', type: 'subscription.test', created_at: '2026-11-23T15:10:31Z', data: { a: 1 } })).toBe('2026-11-23T15:10:31Z subscription.test {"a":1} (evt_2)');
});
