// Uncertainty for reported numbers: the crossed seeds × problems interval (two-way random effects), power
// (minimum detectable difference), the seeded bootstrap over problems, t quantiles, medians and quantiles.
import jstat from "jstat";
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

/** Linear-interpolated quantile (q in [0, 1]) of an ascending-sorted array (empty: NaN). */
function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = q * (sorted.length - 1);
  const i = Math.floor(pos);
  const frac = pos - i;
  return i + 1 < sorted.length ? sorted[i] * (1 - frac) + sorted[i + 1] * frac : sorted[i];
}

/** Linear-interpolated quantile (q in [0, 1]) of unsorted values; empty input gives NaN. */
export function quantile(values: readonly number[], q: number): number {
  return quantileSorted(Float64Array.from(values).sort(), q);
}

/**
 * Nearest-rank percentile of ascending-sorted values (p in (0, 1]): always an observed value, as latency
 * percentiles are reported; empty input gives NaN.
 */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** Median of unsorted values (mean of the two middle ones for an even count); empty input gives NaN. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
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

// jStat's t quantile loses accuracy for huge ν; beyond this the t and normal quantiles agree to 1e-4.
const MAX_DF = 1e5;

/** Quantile of Student's t with ν > 0 degrees of freedom (real ν allowed; ν beyond 1e5 is treated as 1e5). */
export function tQuantile(p: number, nu: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`tQuantile: p must be in (0, 1), got ${p}`);
  if (!(nu > 0)) throw new RangeError(`tQuantile: ν must be > 0, got ${nu}`);
  return jstat.studentt.inv(p, Math.min(nu, MAX_DF));
}

/** Two-sided Student-t critical value: the t with P(|T| < t) = level for ν > 0 degrees of freedom. */
export function tCritical(level: number, nu: number): number {
  checkLevel(level);
  return tQuantile((1 + level) / 2, nu);
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

// ---------------------------------------------------------------------------------------------------------------
// Crossed seeds × problems: every seed of a sweep is evaluated on the same problems, so a value y[s][p] (pass@k of
// problem p under seed s, or its paired ACE − baseline difference) is a two-way crossed random-effects array
//   y[s][p] = μ + a[s] + b[p] + e[s][p],   Var(ȳ) = σ²_seed/S + σ²_problem/P + σ²_residual/(S·P),
// where e holds the seed × problem interaction and the within-problem sampling noise of the n samples. The
// components come from the two-way ANOVA mean squares (method of moments, truncated at 0); each of the three
// terms gets its own Student-t quantile. Resampling seeds and problems (the pigeonhole bootstrap, Owen 2007,
// Ann. Appl. Stat. 1:386) targets the same variance but counts the residual about three times and shrinks the
// seed term by (S − 1)/S, so with few seeds it is neither exact nor conservative (see McCullagh 2000, Bernoulli
// 6:285, on resampling exchangeable arrays); the moment estimator is unbiased. See docs/sweeps-reports.md.

/** Variance components of a crossed seeds × problems array (per-value variances, ≥ 0), and its mean squares. */
export interface CrossedComponents {
  seeds: number;
  problems: number;
  mean: number;
  /** σ² between seeds (0 and `seedKnown` false with one seed: not estimable). */
  seed: number;
  /** σ² between problems (with one seed: the whole per-problem variance, residual included). */
  problem: number;
  /** σ² of the seed × problem residual (interaction plus within-problem sampling noise). */
  residual: number;
  seedKnown: boolean;
  problemKnown: boolean;
  /** ANOVA mean squares (NaN where a factor has one level). */
  msSeed: number;
  msProblem: number;
  msResidual: number;
}

/**
 * Var(mean) of a crossed design as independent terms, each with its degrees of freedom: the seed component over
 * S (S − 1 df), the problem component over P (P − 1 df) and the residual over S·P ((S − 1)(P − 1) df).
 */
export interface CrossedTerms {
  seedTerm: number;
  seedDf: number;
  problemTerm: number;
  problemDf: number;
  residualTerm: number;
  residualDf: number;
}

/** A crossed interval: mean ± half-width, with the design, terms and components behind it. */
export interface CrossedInterval extends Interval {
  /** Standard error √(seedTerm + problemTerm) (NaN when the interval is not defined). */
  se: number;
  terms: CrossedTerms;
  seeds: number;
  problems: number;
  /** Every value is the same: the interval has zero width because nothing varies. */
  identical: boolean;
  components: CrossedComponents;
}

/**
 * Variance components of `values`, a row-major seeds × problems array (values[s·P + p]): method-of-moments
 * estimates from the two-way ANOVA mean squares, each truncated at 0. One seed: only the total per-problem
 * variance is known; one problem: only the between-seed variance. Throws on a size mismatch or a non-finite value.
 */
export function crossedComponents(
  values: ArrayLike<number>,
  seeds: number,
  problems: number,
): CrossedComponents {
  const S = seeds, P = problems;
  if (!(Number.isInteger(S) && Number.isInteger(P) && S >= 1 && P >= 1) || values.length !== S * P) {
    throw new RangeError(`crossedComponents: ${values.length} values for ${S} seeds × ${P} problems`);
  }
  const rowMean = new Float64Array(S), colMean = new Float64Array(P);
  let total = 0;
  for (let s = 0; s < S; s++) {
    for (let p = 0; p < P; p++) {
      const v = values[s * P + p];
      if (!Number.isFinite(v)) throw new RangeError("crossedComponents: values must be finite numbers");
      rowMean[s] += v / P;
      colMean[p] += v / S;
      total += v;
    }
  }
  const m = total / (S * P);
  let ssSeed = 0, ssProblem = 0, ssResidual = 0;
  for (let s = 0; s < S; s++) ssSeed += P * (rowMean[s] - m) ** 2;
  for (let p = 0; p < P; p++) ssProblem += S * (colMean[p] - m) ** 2;
  for (let s = 0; s < S; s++) {
    for (let p = 0; p < P; p++) ssResidual += (values[s * P + p] - rowMean[s] - colMean[p] + m) ** 2;
  }
  const msSeed = S > 1 ? ssSeed / (S - 1) : NaN, msProblem = P > 1 ? ssProblem / (P - 1) : NaN;
  const msResidual = S > 1 && P > 1 ? ssResidual / ((S - 1) * (P - 1)) : NaN;
  const base = { seeds: S, problems: P, mean: m, msSeed, msProblem, msResidual };
  if (S === 1 || P === 1) {
    return {
      ...base,
      seed: P === 1 && S > 1 ? msSeed : 0,
      problem: S === 1 && P > 1 ? msProblem : 0,
      residual: 0,
      seedKnown: S > 1,
      problemKnown: P > 1,
    };
  }
  return {
    ...base,
    seed: Math.max(0, (msSeed - msResidual) / P),
    problem: Math.max(0, (msProblem - msResidual) / S),
    residual: msResidual,
    seedKnown: true,
    problemKnown: true,
  };
}

/**
 * Terms of Var(mean) for a seeds × problems design with components `c`: σ²_seed/S + σ²_problem/P +
 * σ²_residual/(S·P). A component that was not estimable contributes nothing (one seed: the per-problem variance
 * is the problem term, seed variance unknown). Needs ≥ 2 seeds when the seed component is known.
 */
export function crossedVariance(
  c: CrossedComponents,
  design: { seeds: number; problems: number },
): CrossedTerms {
  const S = design.seeds, P = design.problems;
  if (!c.seedKnown) {
    return {
      seedTerm: 0,
      seedDf: 0,
      problemTerm: c.problem / P,
      problemDf: P - 1,
      residualTerm: 0,
      residualDf: 0,
    };
  }
  if (S < 2) throw new RangeError(`crossedVariance: need ≥ 2 seeds, got ${S}`);
  return {
    seedTerm: c.seed / S,
    seedDf: S - 1,
    problemTerm: c.problem / P,
    problemDf: P - 1,
    residualTerm: c.residual / (S * P),
    residualDf: (S - 1) * (P - 1),
  };
}

/** Σ of the terms (the variance of the mean). */
export function termsVariance(t: CrossedTerms): number {
  return t.seedTerm + t.problemTerm + t.residualTerm;
}

/** √Σ q(df)²·term: each term scaled by its own quantile multiplier (a term with 0 df must be 0). */
function combine(t: CrossedTerms, q: (df: number) => number): number {
  const part = (term: number, df: number) => (term > 0 ? q(df) ** 2 * term : 0);
  return Math.sqrt(
    part(t.seedTerm, t.seedDf) + part(t.problemTerm, t.problemDf) + part(t.residualTerm, t.residualDf),
  );
}

/**
 * Crossed interval of the mean of a seeds × problems array (row-major): Var(mean) = σ²_seed/S + σ²_problem/P +
 * σ²_residual/(S·P) from the two-way ANOVA components (`crossedComponents`, negative estimates set to 0), and the
 * half-width √Σ t²(df)·term, each term with its own Student-t quantile (S − 1, P − 1 and (S − 1)(P − 1) df; a
 * single pooled Satterthwaite ν is liberal when the seed term is estimated small by chance). One seed: s²/P over
 * problems only. One problem: over seeds only. Bounds are not clipped. All values equal: [mean, mean] with
 * `identical` set; one value: lo = hi = NaN.
 */
export function crossedInterval(
  values: ArrayLike<number>,
  seeds: number,
  problems: number,
  level = 0.95,
): CrossedInterval {
  checkLevel(level);
  const S = seeds, P = problems;
  const c = crossedComponents(values, S, P);
  const terms: CrossedTerms = S === 1 || P === 1
    ? {
      seedTerm: S > 1 ? c.seed / S : 0,
      seedDf: S - 1,
      problemTerm: P > 1 ? c.problem / P : 0,
      problemDf: P - 1,
      residualTerm: 0,
      residualDf: 0,
    }
    : crossedVariance(c, { seeds: S, problems: P });
  let identical = true;
  for (let i = 1; i < values.length && identical; i++) identical = values[i] === values[0];
  const base = { mean: c.mean, seeds: S, problems: P, components: c, terms, identical };
  if (S * P === 1) return { ...base, lo: NaN, hi: NaN, se: NaN, identical: false };
  const half = combine(terms, (df) => tCritical(level, df));
  return { ...base, lo: c.mean - half, hi: c.mean + half, se: Math.sqrt(termsVariance(terms)) };
}

/**
 * Minimum detectable difference of a two-sided test at level `alpha` (default 0.05) with probability `power`
 * (default 0.8): √Σ (t(1 − α/2, df) + t(power, df))²·term over the crossed terms (Bloom 1995, Evaluation Review
 * 19:547, per term). 0 when both terms are 0.
 */
export function minDetectable(t: CrossedTerms, options: { alpha?: number; power?: number } = {}): number {
  const { alpha = 0.05, power = 0.8 } = options;
  return combine(t, (df) => tQuantile(1 - alpha / 2, df) + tQuantile(power, df));
}
