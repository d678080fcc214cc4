/** Drift scoring (engine/drift): the CUSUM rule, held-out misses, warm-up, gaps, determinism. */
import { describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { CUSUM_H, INITIAL_DETECTOR, RESOLVE_RUN, stepDetector, type DetectorState } from '../../../src/engine/drift/detector';
import { fitDriftModel, MIN_DRIFT_OBSERVATIONS, scoreOneStep } from '../../../src/engine/drift/one-step';
import { REFIT_EVERY, scoreDrift, startDrift, type DriftState, type DriftTransition } from '../../../src/engine/drift/score';
import { Rng } from '../../../src/engine/rng';

const info = { period: 24, periods: [24] };

/** Hourly-like data: a slowly wandering level, a daily cycle, noise (seeded). */
function series(n: number, seed = 7): number[] {
  const rng = new Rng(seed);
  let level = 100;
  return Array.from({ length: n }, (_, t) => {
    level += 0.3 * rng.normal();
    return level + 15 * Math.sin((2 * Math.PI * t) / 24) + 2 * rng.normal();
  });
}

/** Feed `values[from..]` one observation at a time, the state through JSON as the service stores it. */
function feed(values: number[], from: number, level = 0.95): { state: DriftState; transitions: DriftTransition[]; scored: number } {
  let state = startDrift({ values: values.slice(0, from), firstIndex: 0 }, info, from - 1);
  const transitions: DriftTransition[] = [];
  let scored = 0;
  for (let t = from; t < values.length; t++) {
    const r = scoreDrift(JSON.parse(JSON.stringify(state)), { values: values.slice(0, t + 1), firstIndex: 0 }, info, level);
    state = r.state;
    scored += r.scored;
    transitions.push(...r.transitions);
  }
  return { state, transitions, scored };
}

describe('detector', () => {
  const run = (zs: number[], misses?: boolean[]) => {
    let s: DetectorState = INITIAL_DETECTOR;
    return zs.map((z, i) => {
      const step = stepDetector(s, z, misses?.[i] ?? Math.abs(z) > 1.96);
      s = step.state;
      return step.transition;
    });
  };

  test('one observation never alarms; two at the clip do; the lower side too', () => {
    assert.deepEqual(run([1e9]), [undefined]);
    assert.deepEqual(run([7, 7]), [undefined, 'detected']);
    assert.deepEqual(run([-7, -7]), [undefined, 'detected']);
    assert.deepEqual(run([7, -7, 7]), [undefined, undefined, undefined]);
    assert.deepEqual(run([5, 5, 5, 5]), [undefined, undefined, undefined, 'detected']); // 3+3+3 = 9, not > 9; the fourth
    assert.ok(CUSUM_H === 9);
  });

  test(`resolved after ${RESOLVE_RUN} observations in a row inside the interval; a miss restarts the run`, () => {
    const inside = Array(RESOLVE_RUN).fill(0);
    const out = run([7, 7, ...inside.slice(1), 2.5, ...inside]);
    assert.equal(out[1], 'detected');
    assert.equal(out.filter((x) => x === 'resolved').length, 1);
    assert.equal(out.lastIndexOf('resolved'), out.length - 1);
  });
});

describe('scoring', () => {
  test('a stable series raises no alarm; a level shift of 3 standard deviations is detected within 3 observations', () => {
    const y = series(24 * 40);
    const calm = feed(y, 24 * 30);
    assert.equal(calm.scored, 240);
    assert.deepEqual(calm.transitions, []);
    const sd = Math.sqrt(y.reduce((a, v) => a + (v - 100) ** 2, 0) / y.length);
    const shifted = y.map((v, t) => (t >= 24 * 30 + 5 ? v + 3 * sd : v));
    const r = feed(shifted, 24 * 30);
    const detected = r.transitions.find((x) => x.type === 'drift.detected')!;
    assert.ok(detected, 'detected');
    assert.ok(detected.observation.index - (24 * 30 + 5) < 3, `delay ${detected.observation.index - (24 * 30 + 5) + 1}`);
    assert.ok(detected.observation.miss && detected.observation.pit > 0.99);
    assert.ok(detected.observation.actual > detected.observation.upper && detected.observation.expected < detected.observation.upper);
    const resolved = r.transitions.find((x) => x.type === 'drift.resolved');
    assert.ok(resolved && resolved.detectedIndex === detected.observation.index, 'resolved once the model took the new level in');
  });

  test('one wild observation is held out once and raises no alarm; the next forecasts ignore it', () => {
    const y = series(24 * 35);
    const at = 24 * 30 + 3;
    const spiked = y.map((v, t) => (t === at ? v * 3 : v));
    const r = feed(spiked, 24 * 30);
    assert.deepEqual(r.transitions, []);
    let state = startDrift({ values: spiked.slice(0, at), firstIndex: 0 }, info, at - 1);
    state = scoreDrift(state, { values: spiked.slice(0, at + 1), firstIndex: 0 }, info, 0.95).state;
    assert.equal(state.heldLast, true);
    assert.deepEqual(state.held.map(([i]) => i), [at]);
  });

  test('a transition names the model that scored it, not the one refitted after it (found by QA: an outage alert named the refitted AR without [log])', () => {
    // a positive series is modelled in logs; two zeros (an outage) raise the alarm, and the refit
    // that follows the detection takes the zeros in, so the state's model is no longer in logs
    const y = series(24 * 30).concat([0, 0]);
    const start = startDrift({ values: y.slice(0, 24 * 30), firstIndex: 0 }, info, 24 * 30 - 1);
    const r = scoreDrift(start, { values: y, firstIndex: 0 }, info, 0.95);
    assert.deepEqual(r.transitions.map((t) => t.type), ['drift.detected']);
    assert.equal(start.model!.log, true);
    assert.equal(r.state.model!.log, false);
    assert.equal(r.transitions[0].model, start.model!.name);
    assert.match(r.transitions[0].model, /\[log\]$/);
  });

  test('values the engine refuses to forecast (beyond 1e100) are never fitted: a held-out 1e308 does not poison the refit after a detection (found by QA: a false drift.resolved with an interval of [8.7e-33, 1.4e38])', () => {
    const y = series(24 * 30);
    const spike = y.length;
    // one hostile value (held out as a miss), then a lasting shift of +60
    const after = series(24 * 32).slice(24 * 30 + 1).map((v, k) => (k >= 20 ? v + 60 : v));
    const hostile = [...y, 1e308, ...after];
    const start = startDrift({ values: y, firstIndex: 0 }, info, y.length - 1);
    const r = scoreDrift(start, { values: hostile, firstIndex: 0 }, info, 0.95);
    assert.equal(r.transitions[0].type, 'drift.detected');
    assert.ok(r.transitions[0].observation.index > spike + 20);
    // the refit after the detection leaves the held-out 1e308 out (`outliers`): a model of the data's scale
    assert.equal(r.state.outliers![0], spike);
    assert.ok(r.state.model!.sigma < 1, `sigma ${r.state.model!.sigma}`);
    for (const t of r.transitions) assert.ok(t.observation.upper < 1000 && t.observation.lower > 1, `[${t.observation.lower}, ${t.observation.upper}]`);
    // a fit that would take it in is refused (a refit keeps the model it has)
    assert.equal(fitDriftModel({ values: hostile, firstIndex: 0 }, info, hostile.length - 1), null);
    assert.equal(fitDriftModel({ values: y.map((v) => v * 1e-11), firstIndex: 0 }, info, y.length - 1), null, 'below 1e-8 likewise');
    assert.notEqual(fitDriftModel({ values: y.map((v) => v * 1e97), firstIndex: 0 }, info, y.length - 1), null, 'within the range, fitted');
  });

  test('a single miss held out of the forecasts is held out of the refits too (found by QA: a fat-fingered 1e12 among values near 100 went into the refit after a detection, whose intervals then covered everything)', () => {
    const base = series(24 * 36);
    const from = 24 * 30;
    const shiftAt = from + 60;
    const clean = base.map((v, t) => (t >= shiftAt ? v + 60 : v));
    const typo = clean.map((v, t) => (t === from + 20 ? 1e12 : v));
    const a = feed(clean, from);
    const b = feed(typo, from);
    // the typo is one held-out miss: the same alarms at the same observations, and a refitted model like the clean one
    const marks = (r: typeof a) => r.transitions.map((t) => `${t.type} ${t.observation.index}`);
    assert.ok(marks(a).some((m) => m.startsWith('drift.detected')));
    assert.deepEqual(marks(b), marks(a));
    assert.ok(Math.abs(b.state.model!.sigma / a.state.model!.sigma - 1) < 0.1, `sigma ${b.state.model!.sigma} vs ${a.state.model!.sigma}`);
    for (const t of b.transitions) assert.ok(t.observation.upper < 1000, `upper ${t.observation.upper}`);
    // remembered while it can be in a fit window, through the stored state
    assert.ok(b.state.outliers!.includes(from + 20));
  });

  test('a fat-fingered value followed by an ordinary miss stays out of the refits (found by QA: taken in as the start of a run, the next refits had 28 times the clean sigma and a later shift went undetected)', () => {
    const base = series(24 * 45);
    const from = 24 * 30;
    const sigma = fitDriftModel({ values: base.slice(0, from), firstIndex: 0 }, info, from - 1)!.sigma;
    const shiftAt = from + 240; // after two scheduled refits
    // the observation after the typo misses by about 4 sigma: at level 0.95 one in 20 misses by chance
    const clean = base.map((v, t) => (t === from + 21 ? v * (1 + 4 * sigma) : t >= shiftAt ? v + 60 : v));
    const typo = clean.map((v, t) => (t === from + 20 ? 1e6 : v));
    const a = feed(clean, from);
    const b = feed(typo, from);
    const marks = (r: typeof a) => r.transitions.map((t) => `${t.type} ${t.observation.index}`);
    assert.ok(marks(a).some((m) => m === `drift.detected ${shiftAt + 1}` || m === `drift.detected ${shiftAt}`), `clean: ${marks(a)}`);
    assert.deepEqual(marks(b), marks(a));
    assert.ok(Math.abs(b.state.model!.sigma / a.state.model!.sigma - 1) < 0.1, `sigma ${b.state.model!.sigma} vs ${a.state.model!.sigma}`);
    // a gross miss right after it still begins a run (a shift, an outage): taken back in, as before
    const run = base.map((v, t) => (t >= from + 20 ? v + 1e4 : v));
    assert.ok(!feed(run, from).state.outliers!.includes(from + 20));
  });

  test('the first miss of a run is taken back in even when a refit falls on it (the scheduled one, or a detection): a shift is fitted whole', () => {
    const from = 24 * 30;
    // the shift begins on the 100th observation scored: the scheduled refit is made at it
    const at = from + REFIT_EVERY - 1;
    const y = series(24 * 36).map((v, t) => (t >= at ? v + 1e4 : v));
    const stepwise = feed(y, from);
    assert.ok(stepwise.transitions.some((t) => t.type === 'drift.detected'));
    assert.ok(!stepwise.state.outliers!.includes(at), `outliers ${stepwise.state.outliers}`);
    const start = startDrift({ values: y.slice(0, from), firstIndex: 0 }, info, from - 1);
    assert.deepEqual(scoreDrift(start, { values: y, firstIndex: 0 }, info, 0.95).state, stepwise.state);
  });

  test("a series on the raw scale is judged in its own units, however small (found by QA: values near 1e-7 had a sigma floor of 1e-6, and no shift was ever a miss)", () => {
    // centred, so negative: the model is on the raw scale, not in logs
    const unit = series(24 * 36).map((v) => v - 100);
    const sd = Math.sqrt(unit.reduce((a, v) => a + v * v, 0) / unit.length);
    const shifted = unit.map((v, t) => (t >= 24 * 30 + 5 ? v + 3 * sd : v));
    const marks = (r: ReturnType<typeof feed>) => r.transitions.map((x) => `${x.type} ${x.observation.index}`);
    const big = feed(shifted, 24 * 30);
    const small = feed(shifted.map((v) => v * 1e-7), 24 * 30);
    assert.equal(big.state.model!.log, false);
    assert.ok(marks(big).some((m) => m.startsWith('drift.detected')));
    // the same verdicts at 1e-7 of the scale
    assert.deepEqual(marks(small), marks(big));
    // a constant series keeps a floor: any change is a miss
    const flat = fitDriftModel({ values: Array(100).fill(-2e-7), firstIndex: 0 }, info, 99)!;
    assert.ok(flat.sigma > 0 && flat.sigma < 1e-11, `sigma ${flat.sigma}`);
  });

  test('a raw-scale series far from 0 with small noise keeps its sensitivity (the floor relative to the data applies below magnitude 1 only)', () => {
    // near -1e9 (negative: the raw scale), noise of sd 1: a shift of +50 is 50 standard deviations
    const rng = new Rng(3);
    const y = Array.from({ length: 24 * 36 }, (_, t) => -1e9 + 5 * Math.sin((2 * Math.PI * t) / 24) + rng.normal() + (t >= 24 * 30 + 5 ? 50 : 0));
    const r = feed(y, 24 * 30);
    assert.equal(r.state.model!.log, false);
    assert.ok(r.transitions.some((t) => t.type === 'drift.detected'), 'detected');
    assert.ok(fitDriftModel({ values: y.slice(0, 24 * 30), firstIndex: 0 }, info, 24 * 30 - 1)!.sigma < 10);
  });

  test('one call over many observations equals one call per observation (state through JSON)', () => {
    const y = series(24 * 36).map((v, t) => (t > 24 * 31 ? v + 40 : v));
    const stepwise = feed(y, 24 * 30);
    const start = startDrift({ values: y.slice(0, 24 * 30), firstIndex: 0 }, info, 24 * 30 - 1);
    const batch = scoreDrift(start, { values: y, firstIndex: 0 }, info, 0.95);
    assert.deepEqual(JSON.parse(JSON.stringify(batch.state)), JSON.parse(JSON.stringify(stepwise.state)));
    assert.deepEqual(batch.transitions.map((t) => [t.type, t.observation.index]), stepwise.transitions.map((t) => [t.type, t.observation.index]));
  });

  test('leading gaps of a window are not data: the model is the same as without them', () => {
    const y = series(24 * 30);
    const padded = [...new Array<number>(1500).fill(NaN), ...y];
    const a = startDrift({ values: y, firstIndex: 1000 }, info, 1000 + y.length - 1);
    const b = startDrift({ values: padded, firstIndex: -500 }, info, 1000 + y.length - 1);
    assert.deepEqual(b.model, a.model);
  });

  test('a window that starts after the first new value is refused, never scored as missing values (found by QA: a bogus alarm)', () => {
    const y = series(24 * 30);
    const state = startDrift({ values: y.slice(0, 500), firstIndex: 0 }, info, 499);
    assert.throws(() => scoreDrift(state, { values: y.slice(510), firstIndex: 510 }, info, 0.95), RangeError);
    // from the first new value on is enough to be scored (earlier lags read the window's first value)
    assert.equal(scoreDrift(state, { values: y.slice(500), firstIndex: 500 }, info, 0.95).scored, y.length - 500);
  });

  test(`warm-up: nothing is scored before ${MIN_DRIFT_OBSERVATIONS} observations; gaps are forecast over, not scored`, () => {
    const y = series(100);
    const early = startDrift({ values: y.slice(0, 10), firstIndex: 500 }, info, 509);
    assert.equal(early.model, null);
    const warm = scoreDrift(early, { values: y.slice(0, 20), firstIndex: 500 }, info, 0.95);
    assert.equal(warm.scored, 0);
    assert.equal(warm.state.model, null);
    assert.equal(warm.state.lastIndex, 519);
    const fitted = scoreDrift(warm.state, { values: y.slice(0, 40), firstIndex: 500 }, info, 0.95);
    assert.equal(fitted.scored, 0);
    assert.ok(fitted.state.model);
    const gappy = y.slice(0, 50).map((v, i) => (i === 45 || i === 46 ? NaN : v));
    const scored = scoreDrift(fitted.state, { values: gappy, firstIndex: 500 }, info, 0.95);
    assert.equal(scored.scored, 8);
    assert.equal(scored.state.lastIndex, 549);
  });
});

describe('bounded series', () => {
  const model = { name: 'AR(1)', lags: [1], phi: [0], intercept: 0, sigma: 2, log: false };
  const bounds = { lower: 0, upper: 100 };

  test('the reported median and interval are censored to the bounds; inside them nothing else changes', () => {
    const free = scoreOneStep(model, 99, 98, 0.95);
    const bounded = scoreOneStep(model, 99, 98, 0.95, bounds);
    assert.ok(free.upper > 100);
    assert.equal(bounded.upper, 100);
    assert.deepEqual({ ...bounded, upper: free.upper }, free);
    // a median beyond the bound is reported at it
    assert.equal(scoreOneStep(model, 104, 100, 0.95, bounds).expected, 100);
  });

  test('an observation at a bound counts towards it, never against it', () => {
    // the model expects 104 (its interval beyond 100): a series pinned at 100 is no miss (z −2 without bounds)
    const pinned = scoreOneStep(model, 104, 100, 0.95, bounds);
    assert.deepEqual([pinned.z, pinned.miss, pinned.lower, pinned.upper], [0, false, 100, 100]);
    assert.equal(scoreOneStep(model, 110, 100, 0.95).miss, true);
    // below the bound the model expected 90: 100 is 5σ above, a miss as without bounds
    const above = scoreOneStep(model, 90, 100, 0.95, bounds);
    assert.deepEqual([above.z, above.miss], [5, true]);
    // the lower bound alike
    assert.deepEqual([scoreOneStep(model, -6, 0, 0.95, bounds).z, scoreOneStep(model, 6, 0, 0.95, bounds).z], [0, -3]);
  });

  test("a drift alert on a utilisation that saturates at 100 reports the censored forecast (without bounds: an interval above 100)", () => {
    // a load climbing into its bound: the regime change is detected either way
    const values = Array.from({ length: 200 }, (_, t) => Math.min(100, 40 + 0.4 * t + 3 * Math.sin(t)));
    const run = (b?: typeof bounds) => {
      const i = { ...info, ...(b ? { bounds: b } : {}) };
      let state = startDrift({ values: values.slice(0, 120), firstIndex: 0 }, i, 119);
      const out: DriftTransition[] = [];
      for (let t = 120; t < values.length; t++) {
        const r = scoreDrift(state, { values: values.slice(0, t + 1), firstIndex: 0 }, i, 0.95);
        state = r.state;
        out.push(...r.transitions);
      }
      return out;
    };
    assert.ok(run().some((t) => t.observation.upper > 100));
    const bounded = run(bounds);
    assert.ok(bounded.length > 0);
    for (const t of bounded) assert.ok(t.observation.upper <= 100 && t.observation.expected <= 100);
  });
});
