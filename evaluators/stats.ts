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
 * Aggregate one metric across training seeds: mean and a 95% Student-t interval mean ± t·s/√n (s = sample std).
 * With a single seed the interval collapses to the mean (no spread is measurable). Empty input throws.
 */
export function seedAggregate(values: readonly number[]): Interval & { n: number } {
  const n = values.length;
  if (n === 0) throw new RangeError("seedAggregate: no values");
  if (values.some((v) => !Number.isFinite(v))) {
    throw new RangeError("seedAggregate: values must be finite numbers");
  }
  const m = mean(values);
  if (n === 1) return { mean: m, lo: m, hi: m, n };
  const variance = values.reduce((acc, v) => acc + (v - m) ** 2, 0) / (n - 1);
  const half = tCritical(0.95, n - 1) * Math.sqrt(variance / n);
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
export type CrossedComponents = ReturnType<typeof crossedComponents>;

/**
 * Variance components of `values`, a row-major seeds × problems array (values[s·P + p]): method-of-moments
 * estimates from the two-way ANOVA mean squares, each truncated at 0. One seed: only the total per-problem
 * variance is known; one problem: only the between-seed variance. Throws on a size mismatch or a non-finite value.
 */
export function crossedComponents(values: ArrayLike<number>, seeds: number, problems: number) {
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
  const two = S > 1 && P > 1; // with one level of a factor only the other's mean square is known
  const msResidual = two ? ssResidual / ((S - 1) * (P - 1)) : NaN;
  return {
    seeds: S,
    problems: P,
    mean: m,
    /** ANOVA mean squares (NaN where a factor has one level). */
    msSeed,
    msProblem,
    msResidual,
    /** σ² between seeds (0 and `seedKnown` false with one seed: not estimable). */
    seed: two ? Math.max(0, (msSeed - msResidual) / P) : S > 1 ? msSeed : 0,
    /** σ² between problems (with one seed: the whole per-problem variance, residual included). */
    problem: two ? Math.max(0, (msProblem - msResidual) / S) : P > 1 ? msProblem : 0,
    /** σ² of the seed × problem residual (interaction plus within-problem sampling noise). */
    residual: two ? msResidual : 0,
    seedKnown: S > 1,
  };
}

/** Var(mean) of a crossed design as its three terms above, with their df: S − 1, P − 1 and (S − 1)(P − 1). */
export type CrossedTerms = ReturnType<typeof crossedVariance>;

/**
 * Terms of Var(mean) for a seeds × problems design with components `c`. A component that was not estimable is
 * 0 and contributes nothing (one seed: the per-problem variance is the problem term). Needs ≥ 2 seeds when the
 * seed component is known.
 */
export function crossedVariance(c: CrossedComponents, design: { seeds: number; problems: number }) {
  const S = design.seeds, P = design.problems;
  if (c.seedKnown && S < 2) throw new RangeError(`crossedVariance: need ≥ 2 seeds, got ${S}`);
  return {
    seedTerm: c.seed / S,
    seedDf: S - 1,
    problemTerm: c.problem / P,
    problemDf: P - 1,
    residualTerm: c.residual / (S * P),
    residualDf: (S - 1) * (P - 1),
  };
}

/** √Σ q(df)²·term: each term scaled by its own quantile multiplier (a term with 0 df must be 0). */
function combine(t: CrossedTerms, q: (df: number) => number): number {
  const part = (term: number, df: number) => (term > 0 ? q(df) ** 2 * term : 0);
  return Math.sqrt(
    part(t.seedTerm, t.seedDf) + part(t.problemTerm, t.problemDf) + part(t.residualTerm, t.residualDf),
  );
}

/**
 * The two-sided p-value of "the mean is `d`" that inverts the crossed interval of `terms` (the level at which the
 * interval's half-width √Σ t²(df)·term equals |mean − d|, found by bisection): p < 0.05 exactly when the 95%
 * interval excludes d. 1 at distance 0; NaN when no term is positive (no interval).
 */
export function termsPValue(terms: CrossedTerms, distance: number): number {
  const width = (level: number) => combine(terms, (df) => tCritical(level, df));
  if (!(width(0.5) > 0)) return NaN;
  const x = Math.abs(distance);
  if (x === 0) return 1;
  let lo = 1e-12, hi = 1 - 1e-12; // levels: width rises with the level
  if (width(hi) < x) return 1e-12;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (width(mid) < x) lo = mid;
    else hi = mid;
  }
  return 1 - (lo + hi) / 2;
}

/**
 * Crossed 95% interval of the mean of a seeds × problems array (row-major, see above): half-width √Σ t²(df)·term,
 * each term with its own Student-t quantile (a single pooled Satterthwaite ν is liberal when the seed term is
 * estimated small by chance). One seed: over problems only; one problem: over seeds only. Bounds are not
 * clipped. All values equal: [mean, mean] with `identical` set; one value: lo = hi = NaN.
 */
export function crossedInterval(values: ArrayLike<number>, seeds: number, problems: number) {
  const c = crossedComponents(values, seeds, problems);
  const terms = crossedVariance(c, { seeds, problems });
  let identical = true;
  for (let i = 1; i < values.length && identical; i++) identical = values[i] === values[0];
  const base = { mean: c.mean, components: c, terms, identical };
  if (seeds * problems === 1) return { ...base, lo: NaN, hi: NaN, se: NaN, identical: false };
  const half = combine(terms, (df) => tCritical(0.95, df));
  // The standard error: NaN above, where the interval is not defined.
  const se = Math.sqrt(terms.seedTerm + terms.problemTerm + terms.residualTerm);
  return { ...base, lo: c.mean - half, hi: c.mean + half, se };
}

/**
 * Minimum detectable difference of a two-sided test at level α = 0.05 with power 0.8: √Σ (t(1 − α/2, df) +
 * t(0.8, df))²·term over the crossed terms (Bloom 1995, Evaluation Review 19:547, per term). 0 when both terms are 0.
 */
export function minDetectable(t: CrossedTerms): number {
  return combine(t, (df) => tQuantile(1 - 0.05 / 2, df) + tQuantile(0.8, df));
}

// ---------------------------------------------------------------------------------------------------------------
// Bases crossed with problems, seeds nested in bases. A run is a unit (base b, seed s); every unit is evaluated
// on the same problems, so y[b][s][p] = μ + g[b] + s[b][s] + π[p] + (gπ)[b][p] + e[b][s][p] and
//   Var(ȳ) = σ²_G/B + σ²_S/(B·S_b) + σ²_P/P + σ²_GP/(B·P) + σ²_E/(B·S_b·P) = (MS_B + MS_P − MS_BP)/(B·S_b·P),
// which is the crossed interval above applied to the B × P matrix of base means (each base's mean over its
// seeds): the base term then carries σ²_G + σ²_S/S_b with B − 1 degrees of freedom. With one base the base
// effect is one fixed draw: the interval over its seeds and problems holds for that base only.

/**
 * Method-of-moments variance components of a bases × seeds × problems design, raw (a negative estimate is
 * reported as such; callers truncate at 0 and say so). NaN marks a component the design cannot estimate.
 */
export type NestedComponents = NestedInterval["nested"];

/**
 * A nested interval: the crossed interval of the base-mean matrix (one base: of the seeds × problems array); scope
 * "bases": inference over base models, "one base": the interval holds for that base model only.
 */
export type NestedInterval = ReturnType<typeof nestedInterval>;

/** Pooled within-base mean squares (seed, residual) with their degrees of freedom, over bases with ≥ 2 seeds. */
function withinBase(values: ArrayLike<number>, groups: readonly number[][], P: number) {
  let ssSeed = 0, dfSeed = 0, ssRes = 0, dfRes = 0;
  for (const rows of groups.filter((g) => g.length >= 2)) {
    const sub = new Float64Array(rows.length * P);
    rows.forEach((u, i) => {
      for (let p = 0; p < P; p++) sub[i * P + p] = values[u * P + p];
    });
    const c = crossedComponents(sub, rows.length, P);
    ssSeed += c.msSeed * (rows.length - 1);
    dfSeed += rows.length - 1;
    if (P > 1) {
      ssRes += c.msResidual * (rows.length - 1) * (P - 1);
      dfRes += (rows.length - 1) * (P - 1);
    }
  }
  return { msSeed: ssSeed / dfSeed, msResidual: dfRes > 0 ? ssRes / dfRes : 0, known: dfSeed > 0 };
}

/**
 * Interval of the mean of `values`, a row-major units × problems array whose row u belongs to base
 * `baseOf[u]`: the crossed interval of the B × P matrix of base means (B − 1 df for the base term), and the raw
 * components base, seed within base, problem, base × problem, residual. One base: the crossed seeds × problems
 * interval (`scope` "one base": it holds for that base only). Throws on a size mismatch.
 */
export function nestedInterval(values: ArrayLike<number>, baseOf: readonly number[], problems: number) {
  const U = baseOf.length, P = problems;
  if (values.length !== U * P || U === 0) {
    throw new RangeError(`nestedInterval: ${values.length} values for ${U} units × ${P} problems`);
  }
  const ids = [...new Set(baseOf)].sort((a, b) => a - b);
  const groups = ids.map((b) => baseOf.flatMap((x, u) => (x === b ? [u] : [])));
  const B = ids.length;
  const seedsPerBase = B / groups.reduce((acc, g) => acc + 1 / g.length, 0);
  const within = withinBase(values, groups, P);
  // One base: the interval over its seeds × problems (it holds for that base only); else over the base means.
  const one = B === 1;
  const M = new Float64Array(B * P);
  if (!one) {
    groups.forEach((rows, b) => {
      for (const u of rows) for (let p = 0; p < P; p++) M[b * P + p] += values[u * P + p] / rows.length;
    });
  }
  const R = one ? U : B;
  const ci = crossedInterval(one ? values : M, R, P);
  const c = ci.components;
  const rowVar = R > 1 ? (P > 1 ? (c.msSeed - c.msResidual) / P : c.msSeed) : NaN;
  const resid = R > 1 && P > 1 ? c.msResidual : NaN;
  const withinSeed = within.known ? (P > 1 ? (within.msSeed - within.msResidual) / P : within.msSeed) : NaN;
  const seed = one ? rowVar : withinSeed;
  const residual = one ? resid : within.known && P > 1 ? within.msResidual : NaN;
  const nested = {
    bases: B,
    /** Harmonic mean of the seeds per base (the S_b of Var(ȳ) for unbalanced designs). */
    seedsPerBase,
    units: U,
    problems: P,
    mean: ci.mean,
    /** σ²_G between bases (NaN with one base; includes σ²_S when no base has two seeds). */
    base: one ? NaN : within.known ? rowVar - seed / seedsPerBase : rowVar,
    /** σ²_S between seeds of one base (NaN when no base has two seeds). */
    seed,
    /** σ²_P between problems. */
    problem: P > 1 ? (R > 1 ? (c.msProblem - c.msResidual) / R : c.msProblem) : NaN,
    /** σ²_GP base × problem (NaN with one base; includes σ²_E when no base has two seeds). */
    baseProblem: one ? NaN : within.known ? resid - residual / seedsPerBase : resid,
    /** σ²_E seed × problem within a base plus within-problem sampling noise (NaN: no base has two seeds). */
    residual,
    /** B ≥ 2: the base components are estimable. */
    basesKnown: !one,
    /** Some base has ≥ 2 seeds: seed and residual are separated from base and base × problem. */
    seedsKnown: one ? U > 1 : within.known,
  };
  return { ...ci, nested, scope: one ? ("one base" as const) : ("bases" as const) };
}

/** log C(n, k) for integers 0 ≤ k ≤ n. */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 0; i < k; i++) s += Math.log((n - i) / (i + 1));
  return s;
}

/** C(m, j)/C(n, j) = Π_{i<j} (m − i)/(n − i): the unbiased estimate of q^j from n samples with m failures. */
function failureMoment(n: number, m: number, j: number): number {
  if (m < j) return 0;
  let r = 1;
  for (let i = 0; i < j; i++) r *= (m - i) / (n - i);
  return r;
}

/**
 * Unbiased estimate, from c correct of n0 samples, of the sampling variance of the pass@k estimate at n samples
 * (1 ≤ k ≤ n). Hoeffding's decomposition of the U-statistic: Var_n = Σ_{j=1..k} C(k,j)C(n−k,k−j)/C(n,k) ·
 * (q^{2k−j} − q^{2k}) with q = 1 − p, each power estimated without bias by C(n0−c, i)/C(n0, i); at n = n0 this
 * is h² − C(n0−c, 2k)/C(n0, 2k) with h = C(n0−c, k)/C(n0, k). Needs n0 ≥ 2k: NaN otherwise (no unbiased
 * estimate exists then; callers fall back to a plug-in and say so).
 */
export function passAtKVarianceUnbiased(n0: number, c: number, k: number, n = n0): number {
  if (!(Number.isInteger(n0) && Number.isInteger(c) && c >= 0 && c <= n0)) {
    throw new RangeError(`passAtKVarianceUnbiased: need integers 0 ≤ c ≤ n0, got c=${c}, n0=${n0}`);
  }
  if (!(Number.isInteger(k) && k >= 1 && k <= n)) {
    throw new RangeError(`passAtKVarianceUnbiased: need 1 ≤ k ≤ n, got k=${k}, n=${n}`);
  }
  if (n0 < 2 * k) return NaN;
  const m = n0 - c, q2k = failureMoment(n0, m, 2 * k);
  const logAll = logChoose(n, k);
  let v = 0;
  for (let j = 1; j <= k && k - j <= n - k; j++) {
    const w = Math.exp(logChoose(k, j) + logChoose(n - k, k - j) - logAll);
    v += w * (failureMoment(n0, m, 2 * k - j) - q2k);
  }
  return v;
}

/**
 * Terms of Var(ȳ) for a design of B bases × S seeds per base × P problems from nested components, built as the
 * interval builds them: the base term is the base-mean variance (σ²_G + σ²_S/S)/B (B − 1 df) and the residual
 * (σ²_GP + σ²_E/S)/(B·P) ((B − 1)(P − 1) df), each summed from the raw components and truncated at 0 once, as a
 * whole (truncating σ²_G and adding σ²_S/S made the MDD exceed the interval's half-width many times over when σ²_G
 * came out negative); the problem term σ²_P/P (P − 1 df). Unknown (NaN) components count as 0. At the measured
 * design the terms are the interval's. Components from one base know no base variance: the B·S runs are then the
 * units (seeds of that base, a lower bound for other bases). One run measured: the problem term only. Throws
 * when the design has fewer than 2 units.
 */
export function nestedTerms(
  c: NestedComponents,
  design: { bases: number; seedsPerBase: number; problems: number },
): CrossedTerms {
  const pos = (x: number) => (x > 0 ? x : 0);
  const known = (x: number) => (Number.isNaN(x) ? 0 : x);
  const P = design.problems;
  if (c.units === 1) {
    return {
      seedTerm: 0,
      seedDf: 0,
      problemTerm: pos(c.problem) / P,
      problemDf: P - 1,
      residualTerm: 0,
      residualDf: 0,
    };
  }
  const rows = c.basesKnown ? design.bases : design.bases * design.seedsPerBase;
  const perRow = c.basesKnown ? design.seedsPerBase : 1;
  if (!(rows >= 2)) {
    throw new RangeError(`nestedTerms: need ≥ 2 ${c.basesKnown ? "bases" : "runs"}, got ${rows}`);
  }
  const G = c.basesKnown ? known(c.base) : 0, GP = c.basesKnown ? known(c.baseProblem) : 0;
  return {
    seedTerm: pos(G + known(c.seed) / perRow) / rows,
    seedDf: rows - 1,
    problemTerm: pos(c.problem) / P,
    problemDf: P - 1,
    residualTerm: pos(GP + known(c.residual) / perRow) / (rows * P),
    residualDf: (rows - 1) * (P - 1),
  };
}

/**
 * 95% chi-square interval of a variance from a mean square `ms` with `df` degrees of freedom (normal data):
 * [df·ms/χ²(0.975, df), df·ms/χ²(0.025, df)]. NaN bounds when df < 1 or ms is not finite.
 */
export function varianceInterval(ms: number, df: number): { lo: number; hi: number } {
  if (!(df >= 1) || !Number.isFinite(ms)) return { lo: NaN, hi: NaN };
  const a = 1 - 0.95; // a/2 here is not the literal 0.025: kept so the bounds stay bit-identical
  return {
    lo: (df * ms) / jstat.chisquare.inv(1 - a / 2, df),
    hi: (df * ms) / jstat.chisquare.inv(a / 2, df),
  };
}

/**
 * The MDD of a nested interval's design with its own uncertainty: the base (unit) term's mean square MS_B (the
 * base means' row mean square, B − 1 df; one base: the seeds', S − 1 df) is replaced by the ends of its 95%
 * chi-square interval (`varianceInterval`) and carried through σ²_base-mean = (MS_B − MS_BP)/P into the MDD; the
 * problem and residual terms stay at their estimates (they have (P − 1) and (B − 1)(P − 1) df), all at the
 * measured design. NaN bounds with one run.
 */
export function mddInterval(ci: NestedInterval): { mdd: number; lo: number; hi: number; df: number } {
  const x = ci.nested, c = ci.components; // x is also the measured design
  const mdd = x.units * x.problems > 1 ? minDetectable(nestedTerms(x, x)) : NaN;
  const df = c.seeds - 1;
  if (x.units === 1 || df < 1) return { mdd, lo: NaN, hi: NaN, df: Math.max(df, 0) };
  const bounds = varianceInterval(c.msSeed, df);
  const msRes = c.problems > 1 ? c.msResidual : 0;
  const at = (ms: number) => {
    const rowVar = (ms - msRes) / c.problems;
    const seedPart = x.basesKnown && x.seedsKnown ? x.seed / x.seedsPerBase : 0;
    const moved: NestedComponents = x.basesKnown ? { ...x, base: rowVar - seedPart } : { ...x, seed: rowVar };
    return minDetectable(nestedTerms(moved, x));
  };
  return { mdd, lo: at(bounds.lo), hi: at(bounds.hi), df };
}

/** P(T ≤ x) for Student's t with ν > 0 degrees of freedom (ν beyond 1e5 is treated as 1e5). */
export function tCdf(x: number, nu: number): number {
  if (!(nu > 0)) throw new RangeError(`tCdf: ν must be > 0, got ${nu}`);
  return jstat.studentt.cdf(x, Math.min(nu, MAX_DF));
}

/**
 * Holm's step-down adjustment (Holm 1979, Scand. J. Statist. 6:65) of one-sided p-values at family-wise level
 * `alpha`: sort ascending, reject p₍ᵢ₎ ≤ α/(m − i) (i from 0) until the first that is not. Returns, per input
 * p-value, whether it is rejected and the level it was tested at (NaN p-values count as rejected at level α:
 * a missing cell). The family-wise error is ≤ α for any dependence between the tests.
 */
export function holm(pValues: readonly number[], alpha = 0.05): { rejected: boolean; level: number }[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p: Number.isNaN(p) ? -1 : p, i })).sort((a, b) => a.p - b.p);
  const out = pValues.map(() => ({ rejected: false, level: alpha / m }));
  let stopped = false;
  order.forEach(({ p, i }, rank) => {
    const level = alpha / (m - rank);
    out[i] = { rejected: !stopped && p <= level, level };
    if (!out[i].rejected) stopped = true;
  });
  return out;
}
