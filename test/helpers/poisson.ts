/** Poisson draws for tests with counts of a known rate. */
import { Rng } from '../../src/engine/rng';

/** One Poisson draw of mean `mean` by multiplying uniforms (small means only: the loop runs about `mean` times). */
export function poisson(rng: Rng, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rng.uniform();
  while (p > limit) {
    k++;
    p *= rng.uniform();
  }
  return k;
}
