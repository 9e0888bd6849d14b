// Uncertainty for reported numbers: seeded bootstrap over problems, paired bootstrap, and across-seed t intervals.
import { Rng } from "../common/prng.ts";

/** A point estimate with a two-sided interval. */
export interface Interval {
  mean: number;
  lo: number;
  hi: number;
}

function checkLevel(level: number): void {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level must be in (0, 1), got ${level}`);
}

function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s / values.length;
}

/** Linear-interpolated quantile (q in [0, 1]) of an ascending-sorted array. */
function quantileSorted(sorted: Float64Array, q: number): number {
  const pos = q * (sorted.length - 1);
  const i = Math.floor(pos);
  const frac = pos - i;
  return i + 1 < sorted.length ? sorted[i] * (1 - frac) + sorted[i + 1] * frac : sorted[i];
}

/**
 * Percentile bootstrap of the mean over problems: resample the values with replacement `iters` times (default
 * 2000) with `Rng.seeded(seed)`; the interval covers `level` (default 0.95). Empty input throws.
 */
export function bootstrapCI(
  values: readonly number[],
  options: { seed: number; iters?: number; level?: number },
): Interval {
  const { seed, iters = 2000, level = 0.95 } = options;
  checkLevel(level);
  if (values.length === 0) throw new RangeError("bootstrapCI: no values");
  if (!Number.isInteger(iters) || iters < 1) {
    throw new RangeError(`bootstrapCI: iters must be ≥ 1, got ${iters}`);
  }
  if (values.some((v) => !Number.isFinite(v))) {
    throw new RangeError("bootstrapCI: values must be finite numbers");
  }
  const rng = Rng.seeded(seed);
  const n = values.length;
  const means = new Float64Array(iters);
  for (let b = 0; b < iters; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[rng.int(n)];
    means[b] = s / n;
  }
  means.sort();
  const alpha = (1 - level) / 2;
  return { mean: mean(values), lo: quantileSorted(means, alpha), hi: quantileSorted(means, 1 - alpha) };
}

/**
 * Paired bootstrap of mean(b − a) over the same problems (a[i] and b[i] are one problem under two methods):
 * resampling problems keeps each pair together, so shared problem difficulty cancels. Lengths must match.
 */
export function pairedBootstrap(
  a: readonly number[],
  b: readonly number[],
  options: { seed: number; iters?: number; level?: number },
): Interval {
  if (a.length !== b.length) {
    throw new RangeError(`pairedBootstrap: a has ${a.length} problems but b has ${b.length}`);
  }
  return bootstrapCI(b.map((v, i) => v - a[i]), options);
}

/** Two-sided central probability P(|T| < t) of Student's t with integer ν ≥ 1 degrees of freedom (closed form). */
function studentTCentral(t: number, nu: number): number {
  const theta = Math.atan(t / Math.sqrt(nu));
  const c2 = Math.cos(theta) ** 2;
  const s = Math.sin(theta);
  if (nu % 2 === 1) {
    let term = Math.cos(theta);
    let sum = nu > 1 ? term : 0;
    for (let j = 3; j <= nu - 2; j += 2) {
      term *= c2 * (j - 1) / j;
      sum += term;
    }
    return (2 / Math.PI) * (theta + s * sum);
  }
  let term = 1;
  let sum = 1;
  for (let j = 2; j <= nu - 2; j += 2) {
    term *= c2 * (j - 1) / j;
    sum += term;
  }
  return s * sum;
}

/** Two-sided Student-t critical value: the t with P(|T| < t) = level for integer ν ≥ 1 (bisection). */
export function tCritical(level: number, nu: number): number {
  checkLevel(level);
  if (!Number.isInteger(nu) || nu < 1) {
    throw new RangeError(`tCritical: ν must be a positive integer, got ${nu}`);
  }
  let lo = 0;
  let hi = 1;
  while (studentTCentral(hi, nu) < level) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCentral(mid, nu) < level) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Aggregate one metric across training seeds: mean and a Student-t interval mean ± t·s/√n (s = sample std).
 * With a single seed the interval collapses to the mean (no spread is measurable). Empty input throws.
 */
export function seedAggregate(values: readonly number[], level = 0.95): Interval & { n: number } {
  checkLevel(level);
  const n = values.length;
  if (n === 0) throw new RangeError("seedAggregate: no values");
  if (values.some((v) => !Number.isFinite(v))) {
    throw new RangeError("seedAggregate: values must be finite numbers");
  }
  const m = mean(values);
  if (n === 1) return { mean: m, lo: m, hi: m, n };
  const variance = values.reduce((acc, v) => acc + (v - m) ** 2, 0) / (n - 1);
  const half = tCritical(level, n - 1) * Math.sqrt(variance / n);
  return { mean: m, lo: m - half, hi: m + half, n };
}

/** Median of `values` (the mean of the two middle values for an even count); an empty array throws. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("median: no values");
  const s = [...values].sort((a, b) => a - b), mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
