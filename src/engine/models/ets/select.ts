/**
 * Automatic ETS model selection, as R `forecast::ets(y)` (8.x): every admissible combination of
 * error {A, M} × trend {N, A (, M)} × season {N, A, M} × damped {TRUE, FALSE} allowed by the
 * restrictions and the data is a candidate, and the smallest information criterion (AICc by
 * default) wins. Candidates are visited in R's loop order; ties keep the earlier one, as R.
 *
 * Speed shortcut (not in R; R fits every candidate fully): seasonal candidates are first
 * *screened* with their m−1 seasonal initial states held at the decomposition values (R's
 * starting values) while the smoothing parameters, level and slope are optimised — a problem of
 * dimension <= 6 instead of up to 17. Because the screened likelihood can only be worse than the
 * full optimum, a screened IC is an upper bound; the seasonal candidates whose bound lies within
 * `SCREEN_MARGIN` of the best bound (at most `SCREEN_KEEP` of them) are then fitted fully from
 * the screened point. A non-seasonal candidate (dimension <= 6) is screened by the first
 * Nelder–Mead runs of its multi-start full fit (`firstRuns`: all starts, since the far alpha mode
 * can be 75 IC units better, M3 N2103) and, within the margin, fitted fully by continuing them
 * (`optimiseMultiStart` with `first`), so its result is bit for bit the unscreened one.
 * Likewise a seasonal screen is a first run and then one restart (`polish`), and the restart is
 * only spent on candidates whose first-run bound is within `RESTART_MARGIN` of the best one. So
 * only candidates already far behind are cut short (on a long, strongly seasonal series, every
 * non-seasonal one: 1,000 daily values with weekly seasonality, 9,872 → 6,412 likelihood
 * evaluations; M3: same model and AICc as without these cuts on 3,003/3,003 series). Full fits
 * use the alpha multi-start of `optimise.ts`; seasonal screening runs once from R's start
 * (multi-start screening cost ~3× the time for no gain on M3 monthly).
 * Measured on 150 M3 monthly series (CPU time, 2 busy cores): ~45 ms per series against
 * R 8.20's ~1.0 s; chosen model equal to R's on 104/150, AICc <= R's on 150/150. After the
 * cuts above and the kernels of `likelihood.ts` (`bench/engine-vs-r.ts --model ets`, 143 M3
 * monthly series, busy machine): 0.028 s per series against R's 0.58 s, sMAPE 14.46 vs 14.68.
 */
import { buildProblem, informationCriterion, type EtsFit, type EtsProblem, type FixedParams } from './fit-model';
import { firstRun, firstRuns, optimise, optimiseMultiStart, polish, type FitControl, type OptResult } from './optimise';
import { isForbidden, type EtsPattern, type EtsSpec, type ErrorType, type SeasonType, type TrendType } from './spec';

/** Selection settings. */
export interface SelectSettings {
  allowMultiplicativeTrend: boolean;
  additiveOnly: boolean;
  restrict: boolean;
  /** Strictly positive data (multiplicative components allowed). */
  positive: boolean;
}

/** IC units within which a screened seasonal candidate is still fitted fully. */
export const SCREEN_MARGIN = 10;
/**
 * IC units within which a candidate whose bound comes from first runs only (a non-seasonal one, or
 * a seasonal one before its screen's restart) is carried on. Wider than `SCREEN_MARGIN` because
 * restarts can gain more than that: on M3 N1735 the screen's restart took ETS(M,Ad,M) from 11.6
 * behind the best first-run bound to within 2 of it (and to the win).
 */
export const RESTART_MARGIN = 2 * SCREEN_MARGIN;
/** At most this many seasonal candidates are fitted fully after screening. */
export const SCREEN_KEEP = 3;
/** Evaluation budget of one screening run. */
const SCREEN_EVALS = 400;
/** Relative tolerance of a screening run. */
const SCREEN_TOL = 1e-6;

/** The candidate specs R would try for `pattern`, in R's order. */
export function candidates(pattern: EtsPattern, s: SelectSettings): EtsSpec[] {
  const errors: ErrorType[] = pattern.error === 'Z' ? ['A', 'M'] : [pattern.error];
  const trends: TrendType[] =
    pattern.trend === 'Z' ? (s.allowMultiplicativeTrend ? ['N', 'A', 'M'] : ['N', 'A']) : [pattern.trend];
  const seasons: SeasonType[] = pattern.season === 'Z' ? ['N', 'A', 'M'] : [pattern.season];
  const damps = pattern.damped === undefined ? [true, false] : [pattern.damped];
  const out: EtsSpec[] = [];
  for (const error of errors)
    for (const trend of trends)
      for (const season of seasons)
        for (const damped of damps) {
          const spec = { error, trend, season, damped };
          if (trend === 'N' && damped) continue;
          if (s.restrict && isForbidden(spec, s.additiveOnly)) continue;
          if (!s.positive && (error === 'M' || trend === 'M' || season === 'M')) continue;
          out.push(spec);
        }
  return out;
}

interface Cand {
  p: EtsProblem;
  r: OptResult;
  /** A non-seasonal candidate's screening: the first run from each start of its multi-start fit. */
  runs: OptResult[];
  ic: number;
  full: boolean;
  seasonal: boolean;
}

/** Fit the candidates and return the best by `ic` (null if none could be fitted). */
export function selectEts(
  y: Float64Array,
  yFilled: Float64Array,
  period: number,
  specs: readonly EtsSpec[],
  fixed: FixedParams,
  control: FitControl,
  ic: 'aicc' | 'aic' | 'bic',
  screen = true,
): { best: EtsFit | null; fullFits: number; evaluations: number } {
  const cands: Cand[] = [];
  let evaluations = 0;
  const { maxEvaluations: maxE, tolerance: tol, restarts } = control;
  const many = screen && specs.length > 1;
  for (const spec of specs) {
    const p = buildProblem(y, yFilled, period, spec, fixed, control.bounds);
    if (!p) continue;
    const seasonal = p.seasonStart < p.x0.length;
    // screening: seasonal states held (see above); a non-seasonal model's screen is the first run
    // of its full fit from R's start, which the full fit then continues (same result as unscreened)
    const runs = !many ? [optimiseMultiStart(p, p.x0.length, maxE, tol, restarts)] : seasonal ? [firstRun(p, p.x0, p.seasonStart, SCREEN_EVALS, SCREEN_TOL)] : firstRuns(p, p.x0.length, maxE, tol);
    let r = runs[0];
    for (const run of runs) {
      evaluations += run.evaluations;
      if (run.value < r.value) r = run;
    }
    if (!Number.isFinite(r.value)) continue;
    cands.push({ p, r, runs, ic: informationCriterion(r.value, p.npar, p.nobs, ic), full: !many, seasonal });
  }
  if (cands.length === 0) return { best: null, fullFits: 0, evaluations };
  // the seasonal screens' restart only where the first run's bound is within `RESTART_MARGIN`
  const firstBound = Math.min(...cands.map((c) => c.ic));
  for (const c of cands) {
    if (c.full || !c.seasonal || c.ic > firstBound + RESTART_MARGIN) continue;
    const r = polish(c.p, c.r, c.p.seasonStart, SCREEN_EVALS, SCREEN_TOL, 1);
    evaluations += r.evaluations - c.r.evaluations;
    c.r = r;
    c.ic = informationCriterion(r.value, c.p.npar, c.p.nobs, ic);
  }
  const bound = Math.min(...cands.map((c) => c.ic));
  // a non-seasonal bound is a first run, which restarts can still improve by more than
  // SCREEN_MARGIN (M3 N0518: ETS(M,Ad,N) 12.8 behind, then the winner): it gets RESTART_MARGIN
  const finalists = cands.filter((c) => !c.full && c.ic <= bound + (c.seasonal ? SCREEN_MARGIN : RESTART_MARGIN));
  const screened = finalists.filter((c) => c.seasonal).sort((a, b) => a.ic - b.ic).slice(0, SCREEN_KEEP);
  for (const c of [...finalists.filter((c) => !c.seasonal), ...screened]) {
    const r = c.seasonal ? optimise(c.p, c.r.x, c.r.x.length, maxE, tol, restarts) : optimiseMultiStart(c.p, c.p.x0.length, maxE, tol, restarts, c.runs);
    evaluations += r.evaluations - (c.seasonal ? 0 : c.runs.reduce((sum, run) => sum + run.evaluations, 0));
    if (r.value < c.r.value) {
      c.r = r;
      c.ic = informationCriterion(r.value, c.p.npar, c.p.nobs, ic);
    }
    c.full = true;
  }
  // unscreened candidates outside the margin stay in the comparison with their (worse) bound
  let best: Cand | null = null;
  for (const c of cands) if (!best || c.ic < best.ic) best = c; // first minimum in R's order
  const fullFits = cands.filter((c) => c.full).length;
  return { best: best ? best.p.finish(best.r.x, evaluations) : null, fullFits, evaluations };
}
