/**
 * Options of the `ets` family, mirroring R `forecast::ets()` arguments (8.x) where they exist.
 */
import { InvalidSeriesError } from '../../errors';
import { DEFAULT_BOUNDS, type Bounds } from './admissible';
import { parseModel, type EtsPattern } from './spec';

/** Options for `ets.fit`. Everything is optional: `{}` is R's `ets(y)`. */
export interface EtsOptions {
  /**
   * Model as R's three letters (error, trend, season) with `Z` = select; `AAdN` marks damping.
   * Default `ZZZ` (automatic). Structured fields below override the letters.
   */
  model?: string;
  error?: 'A' | 'M' | 'Z';
  trend?: 'N' | 'A' | 'M' | 'Z';
  season?: 'N' | 'A' | 'M' | 'Z';
  /** Damped trend; undefined tries both (R's `damped = NULL`). */
  damped?: boolean;
  /** Fixed smoothing parameters (R's `alpha =` ...); undefined = estimate. */
  alpha?: number;
  beta?: number;
  gamma?: number;
  phi?: number;
  /** Selection criterion, default `aicc` (R's default). */
  ic?: 'aicc' | 'aic' | 'bic';
  /** Consider multiplicative trends in selection; default false, as R (they forecast poorly). */
  allowMultiplicativeTrend?: boolean;
  /** Only additive components; default false. */
  additiveOnly?: boolean;
  /** R's `restrict`: exclude unstable combinations (A error with M components, M,M,A); default true. */
  restrict?: boolean;
  /** Box bounds on (alpha, beta, gamma, phi); default R's c(1e-4,1e-4,1e-4,0.8) / c(0.9999,0.9999,0.9999,0.98). */
  lower?: readonly [number, number, number, number];
  upper?: readonly [number, number, number, number];
  /** Sample paths for simulated intervals; default 5000 (R's `npaths`). */
  npaths?: number;
  /** Seed for simulated intervals; default 20080101. Recorded in `params.intervalSeed`. */
  seed?: number;
  /** Objective evaluations per model fit; default 2000 (R's `maxit`). */
  maxEvaluations?: number;
  /**
   * Fit every candidate fully, as R does, instead of screening seasonal candidates first
   * (`select.ts`). Default false: screening is ~3× faster and rarely changes the choice.
   */
  exhaustive?: boolean;
}

/** Options after defaults and validation. */
export interface ResolvedOptions {
  pattern: EtsPattern;
  explicit: boolean;
  fixed: { alpha?: number; beta?: number; gamma?: number; phi?: number };
  ic: 'aicc' | 'aic' | 'bic';
  allowMultiplicativeTrend: boolean;
  additiveOnly: boolean;
  restrict: boolean;
  bounds: Bounds;
  npaths: number;
  seed: number;
  maxEvaluations: number;
  exhaustive: boolean;
}

function checkUnit(name: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isFinite(v) && v >= 0 && v <= 1)) {
    throw new InvalidSeriesError(`ets: ${name} must be in [0, 1], got ${v}`);
  }
}

/** Apply defaults; name the offending value when an option is invalid. */
export function resolveOptions(o: EtsOptions = {}): ResolvedOptions {
  const base = parseModel(o.model ?? 'ZZZ');
  const pattern: EtsPattern = {
    error: o.error ?? base.error,
    trend: o.trend ?? base.trend,
    season: o.season ?? base.season,
    damped: o.damped ?? base.damped,
  };
  if (!['A', 'M', 'Z'].includes(pattern.error)) throw new InvalidSeriesError(`ets: error must be A, M or Z, got ${pattern.error}`);
  if (!['N', 'A', 'M', 'Z'].includes(pattern.trend)) throw new InvalidSeriesError(`ets: trend must be N, A, M or Z, got ${pattern.trend}`);
  if (!['N', 'A', 'M', 'Z'].includes(pattern.season)) throw new InvalidSeriesError(`ets: season must be N, A, M or Z, got ${pattern.season}`);
  if (pattern.damped === true && pattern.trend === 'N') throw new InvalidSeriesError('ets: damped = true needs a trend');
  checkUnit('alpha', o.alpha);
  checkUnit('beta', o.beta);
  checkUnit('gamma', o.gamma);
  checkUnit('phi', o.phi);
  const lower = [...(o.lower ?? DEFAULT_BOUNDS.lower)] as Bounds['lower'];
  const upper = [...(o.upper ?? DEFAULT_BOUNDS.upper)] as Bounds['upper'];
  for (let i = 0; i < 4; i++) {
    if (!(lower[i] <= upper[i])) throw new InvalidSeriesError(`ets: lower[${i}] = ${lower[i]} exceeds upper[${i}] = ${upper[i]}`);
  }
  const npaths = o.npaths ?? 5000;
  if (!Number.isInteger(npaths) || npaths < 10) throw new InvalidSeriesError(`ets: npaths must be an integer >= 10, got ${npaths}`);
  const maxEvaluations = o.maxEvaluations ?? 2000;
  if (!Number.isInteger(maxEvaluations) || maxEvaluations < 10) {
    throw new InvalidSeriesError(`ets: maxEvaluations must be an integer >= 10, got ${maxEvaluations}`);
  }
  const ic = o.ic ?? 'aicc';
  if (!['aicc', 'aic', 'bic'].includes(ic)) throw new InvalidSeriesError(`ets: ic must be aicc, aic or bic, got ${ic}`);
  return {
    pattern,
    explicit: pattern.error !== 'Z' && pattern.trend !== 'Z' && pattern.season !== 'Z',
    fixed: { alpha: o.alpha, beta: o.beta, gamma: o.gamma, phi: o.phi },
    ic,
    allowMultiplicativeTrend: o.allowMultiplicativeTrend ?? false,
    additiveOnly: o.additiveOnly ?? false,
    restrict: o.restrict ?? true,
    bounds: { lower, upper },
    npaths,
    seed: o.seed ?? 20080101,
    maxEvaluations,
    exhaustive: o.exhaustive ?? false,
  };
}
