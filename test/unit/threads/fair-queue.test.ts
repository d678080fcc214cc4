/** The fair queue: accounts served in turn, each in its own order; items taken back in place. */
import { expect, test } from '@jest/globals';
import { FairQueue } from '../../../src/fair-queue';

const item = (owner: string, n: number) => ({ owner, n });

function drain(q: FairQueue<{ owner: string; n: number }>): string[] {
  const out: string[] = [];
  for (let i = q.shift(); i; i = q.shift()) out.push(`${i.owner}${i.n}`);
  return out;
}

test('owners take turns, each owner first in first out', () => {
  const q = new FairQueue<{ owner: string; n: number }>();
  for (let n = 1; n <= 4; n++) q.push('a', item('a', n));
  q.push('b', item('b', 1));
  q.push('c', item('c', 1));
  q.push('b', item('b', 2));
  expect(q.size).toBe(7);
  expect(drain(q)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  expect(q.size).toBe(0);
  expect(q.shift()).toBeUndefined();
});

test('an owner that arrives while another is being served waits one item, not all of them', () => {
  const q = new FairQueue<{ owner: string; n: number }>();
  for (let n = 1; n <= 1000; n++) q.push('big', item('big', n));
  const first = q.shift()!;
  q.push('small', item('small', 1));
  expect([first, q.shift(), q.shift()].map((i) => `${i!.owner}${i!.n}`)).toEqual(['big1', 'big2', 'small1']);
});

test('an item taken back is not served; taking it twice, or one never queued, says false', () => {
  const q = new FairQueue<{ owner: string; n: number }>();
  const a1 = item('a', 1);
  const a2 = item('a', 2);
  const b1 = item('b', 1);
  q.push('a', a1);
  q.push('a', a2);
  q.push('b', b1);
  expect(q.delete('a', a2)).toBe(true);
  expect(q.delete('a', a2)).toBe(false);
  expect(q.delete('b', a1)).toBe(false);
  expect(q.delete('c', item('c', 1))).toBe(false);
  expect(q.size).toBe(2);
  expect(q.delete('b', b1)).toBe(true);
  // b had nothing left: it is out of the line, and comes back at its end
  q.push('b', item('b', 2));
  q.push('a', item('a', 3));
  expect(drain(q)).toEqual(['a1', 'b2', 'a3']);
});
