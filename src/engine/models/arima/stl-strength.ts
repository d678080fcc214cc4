/**
 * Seasonal strength from an STL decomposition, as forecast's `seas.heuristic`
 * (the default seasonal test of `nsdiffs`, used by `auto.arima` to choose D):
 * F_s = max(0, 1 - Var(R) / Var(S + R)) (Wang, Smith & Hyndman 2006).
 *
 * The decomposition is a port of the non-robust STL inner loop of Cleveland et al.
 * (1990), Fortran `stl.f` as shipped with R, with `mstl`'s settings for a single
 * period: s.window = 11, s.degree = 0, t.window = nextodd(ceil(1.5m / (1 - 1.5/11))),
 * l.window = nextodd(m), t/l degree 1, jumps = ceil(window/10), 2 inner passes.
 * Missing values are filled by linear interpolation first (why: mstl uses
 * `na.interp`, an STL-based fill; linear is the documented simpler stand-in).
 */

const nextOdd = (x: number): number => (x % 2 === 0 ? x + 1 : x);

/** Local (degree 0/1) tricube regression at xs over y[nl..nr] (1-based positions), R's `stlest`. */
function est(y: Float64Array, yoff: number, n: number, len: number, deg: number, xs: number, nl: number, nr: number, w: Float64Array): number | null {
  const range = n - 1;
  let h = Math.max(xs - nl, nr - xs);
  if (len > n) h += Math.floor((len - n) / 2);
  const h9 = 0.999 * h;
  const h1 = 0.001 * h;
  let a = 0;
  for (let j = nl; j <= nr; j++) {
    w[j] = 0;
    const r = Math.abs(j - xs);
    if (r <= h9) {
      w[j] = r <= h1 ? 1 : (1 - (r / h) ** 3) ** 3;
      a += w[j];
    }
  }
  if (a <= 0) return null;
  for (let j = nl; j <= nr; j++) w[j] /= a;
  if (h > 0 && deg > 0) {
    let am = 0;
    for (let j = nl; j <= nr; j++) am += w[j] * j;
    let b = xs - am;
    let c = 0;
    for (let j = nl; j <= nr; j++) c += w[j] * (j - am) ** 2;
    if (Math.sqrt(c) > 0.001 * range) {
      b /= c;
      for (let j = nl; j <= nr; j++) w[j] *= b * (j - am) + 1;
    }
  }
  let ys = 0;
  for (let j = nl; j <= nr; j++) ys += w[j] * y[yoff + j - 1];
  return ys;
}

/** Loess smoother with jumps and linear interpolation between them (R's `stless`); out[ooff + i - 1] for i = 1..n. */
function ess(y: Float64Array, yoff: number, n: number, len: number, deg: number, jump: number, out: Float64Array, ooff: number, w: Float64Array): void {
  if (n < 2) {
    out[ooff] = y[yoff];
    return;
  }
  const nj = Math.min(jump, n - 1);
  let nl = 1;
  let nr = n;
  const put = (i: number): void => {
    const v = est(y, yoff, n, len, deg, i, nl, nr, w);
    out[ooff + i - 1] = v === null ? y[yoff + i - 1] : v;
  };
  if (len >= n) {
    nl = 1;
    nr = n;
    for (let i = 1; i <= n; i += nj) put(i);
  } else if (nj === 1) {
    const nsh = (len + 1) >> 1;
    nl = 1;
    nr = len;
    for (let i = 1; i <= n; i++) {
      if (i > nsh && nr !== n) {
        nl++;
        nr++;
      }
      put(i);
    }
  } else {
    const nsh = (len + 1) >> 1;
    for (let i = 1; i <= n; i += nj) {
      if (i < nsh) {
        nl = 1;
        nr = len;
      } else if (i >= n - nsh + 1) {
        nl = n - len + 1;
        nr = n;
      } else {
        nl = i - nsh + 1;
        nr = len + i - nsh;
      }
      put(i);
    }
  }
  if (nj !== 1) {
    for (let i = 1; i <= n - nj; i += nj) {
      const d = (out[ooff + i + nj - 1] - out[ooff + i - 1]) / nj;
      for (let j = i + 1; j <= i + nj - 1; j++) out[ooff + j - 1] = out[ooff + i - 1] + d * (j - i);
    }
    const k = Math.floor((n - 1) / nj) * nj + 1;
    if (k !== n) {
      put(n);
      if (k !== n - 1) {
        const d = (out[ooff + n - 1] - out[ooff + k - 1]) / (n - k);
        for (let j = k + 1; j <= n - 1; j++) out[ooff + j - 1] = out[ooff + k - 1] + d * (j - k);
      }
    }
  }
}

/** Moving average of length len (R's `stlma`): n - len + 1 outputs. */
function ma(x: Float64Array, n: number, len: number): Float64Array {
  const out = new Float64Array(n - len + 1);
  let s = 0;
  for (let i = 0; i < len; i++) s += x[i];
  out[0] = s / len;
  for (let j = 1; j < out.length; j++) {
    s += x[j + len - 1] - x[j - 1];
    out[j] = s / len;
  }
  return out;
}

/** Non-robust STL of y with period np: returns seasonal and remainder components. */
export function stlDecompose(y: Float64Array, np: number, sWindow = 11): { seasonal: Float64Array; remainder: Float64Array } {
  const n = y.length;
  const ns = nextOdd(sWindow);
  const nt = nextOdd(Math.ceil((1.5 * np) / (1 - 1.5 / ns)));
  const nl = nextOdd(np);
  const [sj, tj, lj] = [ns, nt, nl].map((v) => Math.ceil(v / 10));
  const trend = new Float64Array(n);
  const season = new Float64Array(n);
  const C = new Float64Array(n + 2 * np);
  const wbuf = new Float64Array(n + 2 * np + ns + 2);
  const sub = new Float64Array(Math.ceil(n / np) + 2);
  const sm = new Float64Array(Math.ceil(n / np) + 2);
  const det = new Float64Array(n);
  const L = new Float64Array(n);
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < n; i++) det[i] = y[i] - trend[i];
    for (let j = 1; j <= np; j++) {
      const k = Math.floor((n - j) / np) + 1;
      for (let i = 1; i <= k; i++) sub[i - 1] = det[(i - 1) * np + j - 1];
      ess(sub, 0, k, ns, 0, sj, sm, 1, wbuf);
      const v0 = est(sub, 0, k, ns, 0, 0, 1, Math.min(ns, k), wbuf);
      sm[0] = v0 === null ? sm[1] : v0;
      const v1 = est(sub, 0, k, ns, 0, k + 1, Math.max(1, k - ns + 1), k, wbuf);
      sm[k + 1] = v1 === null ? sm[k] : v1;
      for (let mm = 1; mm <= k + 2; mm++) C[(mm - 1) * np + j - 1] = sm[mm - 1];
    }
    const low = ma(ma(ma(C, n + 2 * np, np), n + np + 1, np), n + 2, 3);
    ess(low, 0, n, nl, 1, lj, L, 0, wbuf);
    for (let i = 0; i < n; i++) season[i] = C[np + i] - L[i];
    for (let i = 0; i < n; i++) det[i] = y[i] - season[i];
    ess(det, 0, n, nt, 1, tj, trend, 0, wbuf);
  }
  const remainder = new Float64Array(n);
  for (let i = 0; i < n; i++) remainder[i] = y[i] - season[i] - trend[i];
  return { seasonal: season, remainder };
}

function variance(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  const mu = s / x.length;
  let v = 0;
  for (let i = 0; i < x.length; i++) v += (x[i] - mu) ** 2;
  return v / (x.length - 1);
}

/** Seasonal strength in [0, 1] of y (period m, needs length > 2m); NaN entries interpolated linearly. */
export function seasonalStrength(y: ArrayLike<number>, m: number): number {
  const x = Float64Array.from(y);
  fillLinear(x);
  const { seasonal, remainder } = stlDecompose(x, m);
  const sr = remainder.map((r, i) => r + seasonal[i]);
  const vs = variance(sr);
  if (!(vs > 0)) return 0;
  return Math.max(0, Math.min(1, 1 - variance(remainder) / vs));
}

/** Linear interpolation of interior NaN, constant extension at the ends (in place). */
function fillLinear(x: Float64Array): void {
  let prev = -1;
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== x[i]) continue;
    if (prev < 0) for (let k = 0; k < i; k++) x[k] = x[i];
    else for (let k = prev + 1; k < i; k++) x[k] = x[prev] + ((x[i] - x[prev]) * (k - prev)) / (i - prev);
    prev = i;
  }
  if (prev >= 0) for (let k = prev + 1; k < x.length; k++) x[k] = x[prev];
}
