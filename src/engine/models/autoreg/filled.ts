/**
 * The uncertainty of filled-in regressors. Missing values inside the AR's window are filled by
 * linear interpolation for its lags (`fillMissingLinear`); where the forecast's own recursion reads
 * such values (a gap within the last max-lag steps), it treated them as data, and its intervals
 * ignored that the straight line may be far from what happened (found by QA: sine-plus-noise
 * series with a day missing near the end, 95% coverage 0.37–0.58; the seasonal lags read a
 * straight line across the missing day). Here each filled value x_t read by the forecast gets an
 * error variance v_t, measured on the series itself — the squared errors of the same straight-line
 * fill at the same place in every fully observed stretch of the same length — and step k's
 * forecast gets the variance Σ_t w_{k,t}² v_t, where w_{k,t} is the effect of x_t on the mean
 * forecast at step k (the recursion's impulse response). The errors are taken as independent
 * (a gap's are positively correlated along it, so the sum is a lower bound where the weights share
 * a sign); series without a gap near the end are unchanged.
 */
import type { ArFit } from './fit';

/**
 * Most fully observed stretches a gap's fill errors are measured on (evenly spaced). Why 64: the
 * work is stretches × filled values read × steps (a 1-minute series with 20 hours missing, 1,000
 * steps: 0.14 s without this term, 2.9 s with 200 stretches, 1.4 s with 64), and 64 errors give a
 * variance within about ±18%.
 */
const MAX_STRETCHES = 64;

/**
 * Per-step standard deviations (length `h`) of the forecast error that filled-in regressors add,
 * for a fit on `x` (`observed[t]` 0 where `x[t]` was filled in); null when the forecast reads no
 * filled value.
 */
export function filledRegressorSd(fit: ArFit, x: Float64Array, observed: Uint8Array, h: number): Float64Array | null {
  const n = x.length;
  const maxLag = fit.lags[fit.lags.length - 1] ?? 0;
  // the gaps [a, b) holding a filled value the forecast reads, and those values' positions in them
  const gaps = new Map<number, { a: number; b: number; read: number[] }>();
  for (let t = Math.max(0, n - maxLag); t < n; t++) {
    if (observed[t]) continue;
    let a = t;
    while (a > 0 && !observed[a - 1]) a--;
    let b = t + 1;
    while (b < n && !observed[b]) b++;
    const gap = gaps.get(a) ?? { a, b, read: [] };
    gap.read.push(t);
    gaps.set(a, gap);
  }
  if (gaps.size === 0) return null;
  const variance = new Float64Array(h);
  for (const { a, b, read } of gaps.values()) {
    const w = read.map((t) => impulse(fit, n, t, h));
    const errors = fillErrors(x, observed, b - a, read.map((t) => t - a));
    if (errors.length > 0) {
      // E[(wₖ·e)²] over the measured stretches: the fill errors' covariances, correlations included
      for (const e of errors) {
        for (let k = 0; k < h; k++) {
          let d = 0;
          for (let i = 0; i < e.length; i++) d += w[i][k] * e[i];
          variance[k] += (d * d) / errors.length;
        }
      }
    } else {
      // nothing to measure a fill with: the observed values' variance, each filled value on its own
      const v = observedVariance(x, observed);
      for (const wi of w) for (let k = 0; k < h; k++) variance[k] += wi[k] * wi[k] * v;
    }
  }
  return variance.map(Math.sqrt);
}

/**
 * The errors of a straight-line fill at positions `at` of a gap of `g` values, one vector per
 * fully observed stretch of `g` values between two observed ends (at most `MAX_STRETCHES`, evenly
 * spaced): the stretch's values minus the line between its ends.
 */
export function fillErrors(x: Float64Array, observed: Uint8Array, g: number, at: readonly number[]): Float64Array[] {
  const n = x.length;
  const starts: number[] = [];
  let run = 0; // observed values ending at t
  for (let t = 0; t < n; t++) {
    run = observed[t] ? run + 1 : 0;
    // the stretch [t − g, t − 1] with its ends t − g − 1 and t, all observed
    if (run >= g + 2) starts.push(t - g);
  }
  const step = Math.max(1, starts.length / MAX_STRETCHES);
  const out: Float64Array[] = [];
  for (let j = 0; j < starts.length && out.length < MAX_STRETCHES; j = Math.floor(out.length * step)) {
    const s = starts[j];
    const left = x[s - 1];
    const slope = (x[s + g] - left) / (g + 1);
    out.push(Float64Array.from(at, (i) => x[s + i] - (left + slope * (i + 1))));
  }
  return out;
}

function observedVariance(x: Float64Array, observed: Uint8Array): number {
  let mean = 0;
  let c = 0;
  for (let t = 0; t < x.length; t++) if (observed[t]) (mean += x[t]), c++;
  if (c < 2) return 0;
  mean /= c;
  let v = 0;
  for (let t = 0; t < x.length; t++) if (observed[t]) v += (x[t] - mean) ** 2;
  return v / (c - 1);
}

/** The effect of a unit change in x[t] (t < n) on the mean forecast at steps 1..h: the recursion run on that impulse alone. */
function impulse(fit: ArFit, n: number, t: number, h: number): Float64Array {
  const ext = new Float64Array(n + h);
  ext[t] = 1;
  for (let s = 0; s < h; s++) {
    let f = 0;
    for (let j = 0; j < fit.lags.length; j++) f += fit.phi[j] * ext[n + s - fit.lags[j]];
    ext[n + s] = f;
  }
  return ext.slice(n);
}
