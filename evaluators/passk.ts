// Unbiased Pass@k (Chen et al. 2021), mean@n, and the sampling variance of the pass@k estimate of one problem.

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

/**
 * Sampling variance of the unbiased pass@k estimate of one problem whose samples are correct with probability p:
 * Var over c ~ Binomial(n, p) of passAtK(n, c, k). Exact (k = 1 gives p(1 − p)/n); 1 ≤ k ≤ n, p in [0, 1].
 */
export function passAtKVariance(n: number, p: number, k: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`passAtKVariance: p must be in [0, 1], got ${p}`);
  passAtK(n, 0, k); // validates n and k
  if (p === 0 || p === 1) return 0;
  let logChoose = 0, m1 = 0, m2 = 0;
  for (let c = 0; c <= n; c++) {
    if (c > 0) logChoose += Math.log((n - c + 1) / c);
    const pmf = Math.exp(logChoose + c * Math.log(p) + (n - c) * Math.log1p(-p));
    const g = passAtK(n, c, k);
    m1 += pmf * g;
    m2 += pmf * g * g;
  }
  return Math.max(0, m2 - m1 * m1);
}
