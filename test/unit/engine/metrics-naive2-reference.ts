/**
 * A test-only Naive2 exactly as the M4 benchmark code (M4-methods, `Benchmarks and Evaluation.py`)
 * computes it: the 90% seasonality test at lag m (as published, with acf(1) not squared),
 * classical multiplicative decomposition (statsmodels `seasonal_decompose`), naive on the
 * seasonally adjusted series, reseasonalised. Used to check the metric code against the
 * official tables independently of the engine's own `naive2` model.
 */
function acf(x: ArrayLike<number>, k: number): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m += x[i];
  m /= x.length;
  let s1 = 0;
  for (let i = k; i < x.length; i++) s1 += (x[i] - m) * (x[i - k] - m);
  let s2 = 0;
  for (let i = 0; i < x.length; i++) s2 += (x[i] - m) ** 2;
  return s1 / s2;
}

/** Multiplicative seasonal indices by position t mod m, or all ones when not seasonal. */
export function naive2Indices(x: ArrayLike<number>, m: number): Float64Array {
  const idx = new Float64Array(m).fill(1);
  if (m <= 1 || x.length < 3 * m) return idx;
  let s = acf(x, 1);
  for (let i = 2; i < m; i++) s += acf(x, i) ** 2;
  const limit = 1.645 * Math.sqrt((1 + 2 * s) / x.length);
  if (!(Math.abs(acf(x, m)) > limit)) return idx;
  const n = x.length;
  const half = Math.floor(m / 2);
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  for (let t = half; t < n - half; t++) {
    let tr = 0;
    if (m % 2 === 0) {
      for (let j = -half; j <= half; j++) tr += (j === -half || j === half ? 0.5 : 1) * x[t + j];
    } else for (let j = -half; j <= half; j++) tr += x[t + j];
    tr /= m;
    sums[t % m] += x[t] / tr;
    counts[t % m]++;
  }
  let mean = 0;
  for (let i = 0; i < m; i++) mean += (idx[i] = sums[i] / counts[i]);
  mean /= m;
  for (let i = 0; i < m; i++) idx[i] /= mean;
  return idx;
}

/** Naive2 point forecast for h steps. */
export function naive2Forecast(x: ArrayLike<number>, m: number, h: number): Float64Array {
  const idx = naive2Indices(x, m);
  const n = x.length;
  const last = x[n - 1] / idx[(n - 1) % m];
  const f = new Float64Array(h);
  for (let k = 0; k < h; k++) f[k] = last * idx[(n + k) % m];
  return f;
}
