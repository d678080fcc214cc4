/** Poisson draws for tests with counts of a known rate, and the hourly shape they share. */
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

/** Events per hour at hour t (from a Monday, midnight): quiet nights (0.15·level), a busy weekday afternoon (2.7·level), weekends at 60%. */
export function hourlyRate(t: number, level = 1): number {
  const hour = t % 24;
  const weekend = Math.floor(t / 24) % 7 >= 5;
  return level * (0.15 + 2.2 * Math.max(0, Math.sin((Math.PI * (hour - 6)) / 14))) * (weekend ? 0.6 : 1.15);
}
