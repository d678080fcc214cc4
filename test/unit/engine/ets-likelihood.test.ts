import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { likelihoodFor } from '../../../src/engine/models/ets/likelihood';
import { runEts, type Kernel } from '../../../src/engine/models/ets/recursion';
import { Rng } from '../../../src/engine/rng';

const SHAPES: [number, number, number, boolean][] = [];
for (const error of [1, 2]) for (const trend of [0, 1, 2]) for (const season of [0, 1, 2]) for (const damped of [false, true]) if (trend > 0 || !damped) SHAPES.push([error, trend, season, damped]);

test('the fast likelihood kernels return bit for bit what runEts returns, on every model shape', () => {
  const rng = new Rng(3);
  const m = 7;
  const base = Float64Array.from({ length: 300 }, (_, i) => 100 + 0.1 * i + 10 * Math.sin((2 * Math.PI * i) / m) + 3 * rng.normal());
  const gappy = Float64Array.from(base, (v, i) => (i % 37 === 5 || i === 120 || i === 121 ? NaN : v));
  const ring = new Float64Array(m);
  for (const [error, trend, season, damped] of SHAPES) {
    const lik = likelihoodFor(error, trend, season);
    for (const y of [base, gappy]) {
      for (let trial = 0; trial < 5; trial++) {
        const alpha = 0.05 + 0.5 * rng.uniform();
        // scale 1 overflows the running product of |f| (the exact pass), ~|y| does not (the fast one)
        const scale = trial % 2 === 0 ? 1 : 100;
        const k: Kernel = { m, error, trend, season, alpha, beta: alpha * 0.3 * rng.uniform(), gamma: (1 - alpha) * 0.3 * rng.uniform(), phi: damped ? 0.8 + 0.18 * rng.uniform() : 1, scale };
        const x0: number[] = [95 + 10 * rng.uniform()];
        if (trend === 1) x0.push(0.2 * rng.normal());
        if (trend === 2) x0.push(1 + 0.002 * rng.normal());
        for (let j = 0; j < (season > 0 ? m : 0); j++) x0.push(season === 2 ? 1 + 0.1 * Math.sin(j) : 10 * Math.sin(j));
        const want = runEts(y, x0, k, ring);
        const got = lik(y, x0, k, ring);
        assert.ok(Object.is(got, want), `shape ${error}${trend}${season}${damped ? 'd' : ''}: ${got} vs ${want}`);
      }
    }
  }
});

test('the multiplicative-error likelihood is the same by the fast product and by the exact pass', () => {
  const rng = new Rng(4);
  const y = Float64Array.from({ length: 500 }, (_, i) => 1e6 * (1 + 0.2 * Math.sin(i / 5)) * Math.exp(0.05 * rng.normal()));
  const k: Kernel = { m: 1, error: 2, trend: 0, season: 0, alpha: 0.3, beta: 0, gamma: 0, phi: 1, scale: 1e6 };
  const ring = new Float64Array(1);
  const fast = runEts(y, [1e6], k, ring);
  const exact = runEts(y, [1e6], k, ring, undefined, true);
  assert.ok(Math.abs(fast - exact) <= 1e-10 * Math.abs(exact), `${fast} vs ${exact}`);
});
