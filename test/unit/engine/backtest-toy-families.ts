/** Small, exact model families for testing the evaluation machinery without the real models. */
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { InsufficientDataError } from '../../../src/engine/errors';
import { Rng } from '../../../src/engine/rng';
import type { Fitted, ModelFamily, PredictiveDistribution, Series } from '../../../src/engine/types';

function normalForecast(model: string, means: Float64Array, sds: Float64Array): PredictiveDistribution {
  return {
    model,
    mean: means,
    steps: Array.from(means, (m, i) => new NormalStep(m, sds[i])),
    intervalMethod: 'analytic',
    samplePaths(n, seed) {
      const rng = new Rng(seed);
      return Array.from({ length: n }, () => {
        const p = new Float64Array(means.length);
        let walk = 0;
        for (let i = 0; i < p.length; i++) {
          walk += rng.normal();
          p[i] = means[i] + (sds[i] / Math.sqrt(i + 1)) * walk;
        }
        return p;
      });
    },
  };
}

/** Random-walk forecast with innovation sd from the differences, times `spread`. */
export function toyNaive(spread = 1, name = 'toy-naive'): ModelFamily {
  return {
    name,
    minObservations: () => 3,
    fit(y: Series): Fitted {
      if (y.length < 3) throw new InsufficientDataError(y.length, 3, name);
      let ss = 0;
      for (let t = 1; t < y.length; t++) ss += (y[t] - y[t - 1]) ** 2;
      const sigma = Math.sqrt(ss / (y.length - 1)) * spread;
      const last = y[y.length - 1];
      return {
        model: name,
        params: { sigma },
        nobs: y.length,
        warnings: [],
        forecast: (h) =>
          normalForecast(name, new Float64Array(h).fill(last), Float64Array.from({ length: h }, (_, i) => sigma * Math.sqrt(i + 1))),
      };
    },
  };
}

/** Global mean with the sample sd. */
export function toyMean(name = 'toy-mean'): ModelFamily {
  return {
    name,
    minObservations: () => 2,
    fit(y: Series): Fitted {
      let s = 0;
      for (let t = 0; t < y.length; t++) s += y[t];
      const m = s / y.length;
      let ss = 0;
      for (let t = 0; t < y.length; t++) ss += (y[t] - m) ** 2;
      const sd = Math.sqrt(ss / (y.length - 1));
      return {
        model: name,
        params: { mean: m },
        nobs: y.length,
        warnings: [],
        forecast: (h) => normalForecast(name, new Float64Array(h).fill(m), new Float64Array(h).fill(sd)),
      };
    },
  };
}

/** A Gaussian random walk of length n. */
export function randomWalk(n: number, seed: number, sd = 1): Float64Array {
  const rng = new Rng(seed);
  const y = new Float64Array(n);
  let v = 100;
  for (let i = 0; i < n; i++) y[i] = v += sd * rng.normal();
  return y;
}

/** White noise around 50. */
export function whiteNoise(n: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  return Float64Array.from({ length: n }, () => 50 + rng.normal());
}
