// Unbiased Pass@k (Chen et al. 2021), mean@n and per-k aggregates with bootstrap intervals over problems.
import { bootstrapCI } from "./stats.ts";

function checkCounts(n: number, c: number, what: string): void {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${what}: n must be a positive integer, got ${n}`);
  if (!Number.isInteger(c) || c < 0 || c > n) {
    throw new RangeError(`${what}: c must be an integer in [0, n=${n}], got ${c}`);
  }
}

/**
 * Unbiased pass@k = 1 − C(n−c, k)/C(n, k) for n samples with c correct, in the stable product form
 * 1 − Π_{i=n−c+1..n} (1 − k/i). Requires 1 ≤ k ≤ n (k > n throws: the estimator is undefined there).
 */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts(n, c, "passAtK");
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`passAtK: k must be a positive integer, got ${k}`);
  if (k > n) throw new RangeError(`passAtK: k=${k} > n=${n} samples; pass@k is undefined for k > n`);
  if (c === 0) return 0;
  // Every size-k subset contains a correct sample once fewer than k samples are wrong.
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/** mean@n = c/n, the average score of n samples (equals pass@1); n ≥ 1 and 0 ≤ c ≤ n. */
export function meanAtN(n: number, c: number): number {
  checkCounts(n, c, "meanAtN");
  return c / n;
}

/** One row of an aggregate pass@k table: the mean over problems and its bootstrap interval. */
export interface PassAtKRow {
  k: number;
  mean: number;
  lo: number;
  hi: number;
  problems: number;
}

/**
 * Aggregate pass@k for each k: per-problem unbiased estimates averaged over problems (unweighted), with a
 * seeded percentile bootstrap over problems. Throws if any problem has fewer than k samples (name the problem).
 */
export function passAtKSummary(
  problems: readonly { n: number; c: number }[],
  ks: readonly number[],
  options: { seed: number; iters?: number; level?: number },
): PassAtKRow[] {
  if (problems.length === 0) throw new RangeError("passAtKSummary: no problems");
  return ks.map((k) => {
    const perProblem = problems.map((p, i) => {
      if (p.n < k) throw new RangeError(`passAtKSummary: problem ${i} has n=${p.n} < k=${k} samples`);
      return passAtK(p.n, p.c, k);
    });
    const ci = bootstrapCI(perProblem, { ...options, seed: options.seed + k });
    return { k, mean: ci.mean, lo: ci.lo, hi: ci.hi, problems: problems.length };
  });
}
