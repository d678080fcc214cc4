/**
 * The Theta family.
 *
 * - `standard`: the Theta method of Assimakopoulos & Nikolopoulos (2000) in the form of
 *   Hyndman & Billah (2003), as R forecast's `thetaf`: SES fitted to the (seasonally adjusted)
 *   series plus half the slope of its OLS trend line, ŷ_{n+h} = ℓ_n + b/2·((h − 1) + (1 − (1−α)^n)/α).
 * - `optimised` (OTM) and `dynamic` (DOTM): Fiorucci et al. (2016), θ and α estimated, the theta
 *   line static (OTM) or updated recursively (DOTM); see `theta-fit.ts`.
 *
 * Seasonality: when the 90% ACF test at lag m says seasonal (R `thetaf`'s form by default, M4's on
 * request), the series is divided by the classical multiplicative seasonal indices, the model is
 * fitted to the adjusted series and the forecasts are multiplied back, as in M4's Theta benchmark.
 *
 * Intervals: Gaussian, from the SES-with-drift state space form both methods share
 * (Hyndman & Billah 2003; Fiorucci et al. 2016, §3): var_h = σ²(1 + (h − 1)α²).
 * Deviations from R, each deliberate:
 * - the interval sd is multiplied by the seasonal index, like the mean (R adds the unscaled sd
 *   to the reseasonalised mean, which makes peak-season intervals too narrow);
 * - for DOTM the same variance is used, ignoring the O(1/n) feedback of future values into the
 *   dynamic trend line (statsforecast simulates it instead);
 * - missing values are filled by linear interpolation before fitting (R's `ets` would cut the
 *   series to its longest complete stretch), and a warning is recorded.
 */
import { multiplicativeSeasonalFigure, type SeasonalityTestVariant } from '../decompose/classical';
import { InsufficientDataError } from '../errors';
import { countFinite, fillMissingLinear, olsLine } from '../math/stats';
import type { Fitted, ModelFamily, Series, SeriesInfo } from '../types';
import { checkFinite } from './naive';
import { dropLeading, linearGaussianForecast } from './naive-forecast';
import { fitThetaCore, thetaCoreForecast } from './theta-fit';

/** Options of the Theta family. */
export interface ThetaOptions {
  /** `standard` (default, R `thetaf`), `optimised` (OTM) or `dynamic` (DOTM). */
  readonly variant?: 'standard' | 'optimised' | 'dynamic';
  /** Seasonality test: `r` (default, R `thetaf`) or `m4` (the M4 benchmark code). */
  readonly seasonalityTest?: SeasonalityTestVariant;
  /** Set false to skip seasonal adjustment altogether. Default true. */
  readonly seasonal?: boolean;
}

const NAMES = { standard: 'Theta', optimised: 'OTM', dynamic: 'DOTM' } as const;

/** Fewest observations: SES needs 3 (two parameters and one residual dof); OTM/DOTM 5 (3-step burn-in). */
function minObs(options?: ThetaOptions): number {
  return (options?.variant ?? 'standard') === 'standard' ? 3 : 5;
}

function fitTheta(y: Series, info: SeriesInfo, options: ThetaOptions = {}): Fitted {
  const variant = options.variant ?? 'standard';
  if (!(variant in NAMES)) throw new RangeError(`theta: unknown variant ${String(variant)}`);
  const name = NAMES[variant];
  checkFinite(y, name);
  const have = countFinite(y);
  const need = minObs(options);
  if (have < need) throw new InsufficientDataError(have, need, name);
  const warnings: string[] = [];
  // Leading and trailing gaps are dropped (nothing to interpolate); interior gaps are interpolated.
  let start = 0;
  let end = y.length;
  while (!Number.isFinite(y[start])) start++;
  while (!Number.isFinite(y[end - 1])) end--;
  const slice = Array.prototype.slice.call(y, start, end) as number[];
  const x = have < end - start ? fillMissingLinear(slice) : Float64Array.from(slice);
  if (have < end - start) warnings.push(`${end - start - have} missing values filled by linear interpolation`);
  if (start > 0 || end < y.length) warnings.push('leading/trailing missing values ignored');
  const n = x.length;

  const m = Math.round(info.period);
  const figure = options.seasonal !== false && m >= 2 ? multiplicativeSeasonalFigure(x, m, options.seasonalityTest ?? 'r') : null;
  // Seasonal positions count from the first value the decomposition saw (x[0]), as R does.
  const seas = (t: number): number => (figure ? figure[t % m] : 1);
  const adj = figure ? Float64Array.from(x, (v, t) => v / seas(t)) : x;

  const core = fitThetaCore(adj, variant === 'standard' ? 'ses' : variant === 'optimised' ? 'otm' : 'dotm');
  const alpha = Math.max(1e-10, core.alpha);
  const drift = variant === 'standard' ? olsLine(adj).slope / 2 : 0;
  // σ² = SSE / (errors − parameters): R's ets counts (α, ℓ_0); OTM/DOTM add θ.
  const npar = variant === 'standard' ? 2 : 3;
  const sigma = Math.sqrt(core.sse / Math.max(1, core.nErrors - npar));
  const fitted = new Float64Array(y.length).fill(NaN);
  for (let t = 0; t < n; t++) fitted[t + start] = core.fitted[t] * seas(t);

  return {
    model: name,
    params: {
      variant,
      alpha,
      theta: variant === 'standard' ? 2 : 1 / (1 - core.w),
      initialLevel: core.l0,
      drift,
      sigma,
      seasonal: figure !== null,
      seasonalIndices: figure ? Array.from(figure) : null,
    },
    nobs: have,
    fitted,
    warnings,
    forecast(h: number) {
      // Trailing missing values: forecast from the last observation, then drop the steps already past.
      const offset = y.length - end;
      const H = h + offset;
      let mean: Float64Array;
      if (variant === 'standard') {
        mean = new Float64Array(H);
        const first = (1 - Math.pow(1 - alpha, n)) / alpha;
        for (let k = 0; k < H; k++) mean[k] = core.level + drift * (k + first);
      } else {
        mean = thetaCoreForecast(core, variant === 'optimised' ? 'otm' : 'dotm', n, H);
      }
      const scale = new Float64Array(H);
      for (let k = 0; k < H; k++) {
        scale[k] = seas(n + k);
        mean[k] *= scale[k];
      }
      return dropLeading(linearGaussianForecast({ model: name, mean, sigma, psi: () => alpha, scale }), offset);
    },
  };
}

/** Theta method family (`theta`); see the file comment for the variants. */
export const theta: ModelFamily<ThetaOptions> = {
  name: 'theta',
  minObservations: (_info: SeriesInfo, options?: ThetaOptions) => minObs(options),
  fit: fitTheta,
};
