import { assertClose, assertEquals, throws } from "../assert.ts";
import { majAtK, meanAtN, passAtK, passAtKVariance } from "../../evaluators/mod.ts";

// Exact 1 − C(n−c,k)/C(n,k) with BigInt binomials, to check the product form independently.
function binom(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}
function exactPassAtK(n: number, c: number, k: number): number {
  const num = binom(n - c, k);
  const den = binom(n, k);
  const scale = 10n ** 15n;
  return 1 - Number((num * scale) / den) / 1e15;
}

Deno.test("passAtK: reference values of the unbiased estimator (Chen et al. 2021)", () => {
  assertClose(passAtK(16, 4, 8), 0.961538461538, 1e-9, "(16,4,8)");
  assertEquals(passAtK(4, 1, 4), 1);
  assertClose(passAtK(64, 1, 1), 0.015625, 1e-15, "(64,1,1)");
  assertEquals(passAtK(10, 0, 5), 0);
  assertClose(passAtK(6, 3, 1), 0.5, 1e-15, "(6,3,1)");
  assertEquals(passAtK(16, 1, 16), 1);
  assertClose(passAtK(32, 5, 4), 0.511958, 1e-6, "(32,5,4)");
  assertClose(passAtK(200, 13, 100), 0.999919, 1e-6, "(200,13,100)");
});

Deno.test("passAtK: k > n and bad counts throw instead of returning 0 or 1", () => {
  throws(() => passAtK(2, 0, 5), /k=5 > n=2/);
  throws(() => passAtK(4, 5, 1), /c must be/);
  throws(() => passAtK(4, 1, 0), /k must be/);
  throws(() => passAtK(0, 0, 1), /n must be/);
  throws(() => passAtK(4.5, 1, 1), /n must be/);
});

Deno.test("passAtK: c = 0 gives 0, c = n gives 1, and matches exact binomials on a grid", () => {
  for (let n = 1; n <= 40; n += 3) {
    for (let c = 0; c <= n; c++) {
      for (let k = 1; k <= n; k++) {
        const v = passAtK(n, c, k);
        if (c === 0) assertEquals(v, 0);
        if (c === n) assertEquals(v, 1);
        assertClose(v, exactPassAtK(n, c, k), 1e-12, `(${n},${c},${k})`);
      }
    }
  }
});

Deno.test("meanAtN equals pass@1 and validates its counts", () => {
  assertEquals(meanAtN(8, 3), 3 / 8);
  assertClose(meanAtN(8, 3), passAtK(8, 3, 1), 1e-15);
  throws(() => meanAtN(2, 3), /c must be/);
});

Deno.test("passAtKVariance: p(1 − p)/n at k = 1, q(1 − q) at k = n, and the brute-force binomial sum between", () => {
  assertClose(passAtKVariance(32, 0.3, 1), 0.3 * 0.7 / 32, 1e-12, "k = 1");
  const q = 1 - 0.9 ** 16;
  assertClose(passAtKVariance(16, 0.1, 16), q * (1 - q), 1e-12, "k = n");
  // Direct sum with exact binomial coefficients.
  const n = 10, p = 0.35, k = 3;
  let m1 = 0, m2 = 0, choose = 1;
  for (let c = 0; c <= n; c++) {
    if (c > 0) choose = choose * (n - c + 1) / c;
    const pmf = choose * p ** c * (1 - p) ** (n - c);
    m1 += pmf * passAtK(n, c, k);
    m2 += pmf * passAtK(n, c, k) ** 2;
  }
  assertClose(passAtKVariance(n, p, k), m2 - m1 * m1, 1e-12, "k = 3");
  assertEquals(passAtKVariance(8, 0, 2), 0);
  assertEquals(passAtKVariance(8, 1, 2), 0);
  throws(() => passAtKVariance(4, 0.5, 8), /k=8 > n=4/);
});

Deno.test("majAtK: votes cluster by equivalence, not by string", () => {
  const responses = ["\\boxed{\\frac12}", "\\boxed{0.5}", "\\boxed{3}", "\\boxed{1/2}", "\\boxed{3}"];
  const r = majAtK(responses, "\\dfrac{1}{2}");
  assertEquals(r.votes, 3);
  assertEquals(r.correct, true);
  // With only the first three, the tie between {½, 0.5} (2 votes) and {3} is not a tie: ½ still leads.
  assertEquals(majAtK(responses, "3", 3).correct, false);
  assertEquals(majAtK(["no idea", "\\boxed{3}"], "3").votes, 1);
  assertEquals(majAtK(["long text without any answer at all, just words words words"], "3").answer, null);
  throws(() => majAtK(responses, "1", 6), /k=6 > 5/);
});
