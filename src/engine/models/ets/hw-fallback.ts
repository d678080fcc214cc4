/**
 * The fallback R `ets()` uses when a series is too short for the requested model
 * (n <= npars + 4): `HoltWintersZZ`, i.e. simple exponential smoothing or Holt's linear method
 * with start values `l = y_1`, `b = y_2 − y_1` and smoothing parameters chosen by least squares
 * of the one-step errors. Non-seasonal only (see `index.ts` for how seasonality is dropped).
 *
 * Deviations: R optimises with L-BFGS-B, we use the shared bounded Nelder–Mead (same box
 * [0, 1]); and R stores Holt's conventional beta where the state-space beta (= alpha·beta) belongs
 * when it later computes class 1 variances, we convert it (the state-space form is what the
 * variance formula needs).
 */
import { nelderMead } from '../../optim/nelder-mead';

/** Result of the least-squares SES/Holt fit, in state-space terms. */
export interface HwFit {
  trend: boolean;
  alpha: number;
  /** State-space beta (alpha × Holt's beta); 0 without trend. */
  beta: number;
  sse: number;
  sigma2: number;
  lastState: Float64Array;
  initState: Float64Array;
  fitted: Float64Array;
  residuals: Float64Array;
}

function run(y: Float64Array, trend: boolean, alpha: number, betaHw: number, l0: number, b0: number,
  out?: { fitted: Float64Array; residuals: Float64Array; last: Float64Array }): number {
  let l = l0;
  let b = trend ? b0 : 0;
  let sse = 0;
  for (let i = 0; i < y.length; i++) {
    const f = l + b;
    const yi = y[i];
    const obs = yi === yi;
    if (out) {
      out.fitted[i] = f;
      out.residuals[i] = obs ? yi - f : NaN;
    }
    const target = obs ? yi : f;
    if (obs) sse += (yi - f) * (yi - f);
    const nl = alpha * target + (1 - alpha) * f;
    if (trend) b = betaHw * (nl - l) + (1 - betaHw) * b;
    l = nl;
  }
  if (out) {
    out.last[0] = l;
    if (trend) out.last[1] = b;
  }
  return sse;
}

/**
 * Fit SES (`trend = false`) or Holt (`trend = true`) by least squares. `y` starts with an
 * observed value; `period` is only used for R's starting alpha (0.2 / period).
 */
export function fitHoltWinters(y: Float64Array, trend: boolean, period: number): HwFit | null {
  const obs: number[] = [];
  for (let i = 0; i < y.length; i++) if (y[i] === y[i]) obs.push(y[i]);
  if (obs.length < (trend ? 2 : 1)) return null;
  const l0 = obs[0];
  const b0 = trend ? obs[1] - obs[0] : 0;
  const a0 = 0.2 / Math.max(period, 1);
  const x0 = trend ? [a0, 0.1 * a0] : [a0];
  const f = (x: Float64Array): number => run(y, trend, x[0], trend ? x[1] : 0, l0, b0);
  const opt = nelderMead(f, x0, { lower: trend ? [0, 0] : [0], upper: trend ? [1, 1] : [1], maxEvaluations: 1000, tolerance: 1e-10 });
  if (!Number.isFinite(opt.value)) return null;
  const alpha = opt.x[0];
  const betaHw = trend ? opt.x[1] : 0;
  const fitted = new Float64Array(y.length);
  const residuals = new Float64Array(y.length);
  const last = new Float64Array(trend ? 2 : 1);
  const sse = run(y, trend, alpha, betaHw, l0, b0, { fitted, residuals, last });
  return {
    trend,
    alpha,
    beta: alpha * betaHw,
    sse,
    sigma2: sse / obs.length, // R: mean(res^2)
    lastState: last,
    initState: Float64Array.from(trend ? [l0, b0] : [l0]),
    fitted,
    residuals,
  };
}
