// Bases crossed with problems, seeds nested in bases: the nested interval, its components and projection, the
// unbiased within-problem variance of pass@k, and Holm's step-down procedure.
import { assertClose, assertEquals, ok, throws } from "../assert.ts";
import {
  crossedInterval,
  holm,
  nestedInterval,
  nestedTerms,
  passAtK,
  passAtKVariance,
  passAtKVarianceUnbiased,
  tCdf,
} from "../../evaluators/mod.ts";
import { Rng } from "../../common/prng.ts";

Deno.test("nestedInterval: the crossed interval of the base-mean matrix; components recover known values", () => {
  // 3 bases × 2 seeds × 4 problems, values built from exact effects: base (±), seed within base, problem,
  // base × problem, seed × problem.
  const rng = Rng.seeded(5);
  const B = 3, S = 2, P = 4;
  const values: number[] = [], baseOf: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      baseOf.push(b);
      for (let p = 0; p < P; p++) values.push(0.5 + 0.1 * b + 0.02 * s + 0.05 * p + 0.01 * rng.normal());
    }
  }
  const ci = nestedInterval(values, baseOf, P);
  const means = Float64Array.from({ length: B * P }, (_, i) => {
    const b = Math.floor(i / P), p = i % P;
    return (values[(b * S) * P + p] + values[(b * S + 1) * P + p]) / 2;
  });
  const direct = crossedInterval(means, B, P);
  assertEquals([ci.mean, ci.lo, ci.hi, ci.scope], [direct.mean, direct.lo, direct.hi, "bases"]);
  assertEquals(ci.terms.seedDf, B - 1, "B − 1 df for the base term");
  const x = ci.nested;
  assertEquals([x.bases, x.seedsPerBase, x.units, x.basesKnown, x.seedsKnown], [3, 2, 6, true, true]);
  // Base effects 0.5, 0.6, 0.7: σ²_G = var = 0.01; seed within base: values 0 and 0.02 → σ²_S = 0.0002.
  assertClose(x.base, 0.01, 5e-4, "σ²_base");
  assertClose(x.seed, 0.0002, 1e-4, "σ²_seed");
  assertClose(x.residual, 1e-4, 1e-4, "σ²_residual");
  // Var(ȳ) = (MS_B + MS_P − MS_BP)/(B·S·P) when no component is truncated.
  assertClose(nestedTerms(x, { bases: B, seedsPerBase: S, problems: P }).seedTerm, ci.terms.seedTerm, 1e-12);
  // One base: the seeds are the units and the interval is labelled for that base only.
  const one = nestedInterval(values.slice(0, 2 * P), [0, 0], P);
  assertEquals([one.scope, one.nested.basesKnown, Number.isNaN(one.nested.base)], ["one base", false, true]);
  assertEquals([one.lo, one.hi], [
    crossedInterval(values.slice(0, 2 * P), 2, P).lo,
    crossedInterval(values.slice(0, 2 * P), 2, P).hi,
  ]);
  // One seed per base: seed and residual are not separable (NaN); base and base × problem carry them.
  const single = nestedInterval(values.filter((_, i) => Math.floor(i / P) % 2 === 0), [0, 1, 2], P);
  assertEquals([Number.isNaN(single.nested.seed), Number.isNaN(single.nested.residual)], [true, true]);
  throws(() => nestedInterval([1, 2, 3], [0, 1], 2), /3 values for 2 units × 2 problems/);
});

Deno.test("nestedTerms: more bases, seeds or problems shrink each term as the formula says", () => {
  const c = {
    bases: 4,
    seedsPerBase: 1,
    units: 4,
    problems: 100,
    mean: 0,
    base: 0.004,
    seed: 0.001,
    problem: 0.02,
    baseProblem: 0.002,
    residual: 0.01,
    basesKnown: true,
    seedsKnown: true,
  };
  const t = nestedTerms(c, { bases: 8, seedsPerBase: 2, problems: 50 });
  assertClose(t.seedTerm, 0.004 / 8 + 0.001 / 16, 1e-15);
  assertClose(t.problemTerm, 0.02 / 50, 1e-15);
  assertClose(t.residualTerm, 0.002 / 400 + 0.01 / 800, 1e-15);
  assertEquals([t.seedDf, t.problemDf, t.residualDf], [7, 49, 7 * 49]);
  // Negative or unknown components count as 0.
  const neg = nestedTerms({ ...c, base: -0.01, seed: NaN }, { bases: 8, seedsPerBase: 2, problems: 50 });
  assertEquals(neg.seedTerm, 0);
  throws(() => nestedTerms(c, { bases: 1, seedsPerBase: 4, problems: 50 }), /need ≥ 2 bases/);
});

Deno.test("passAtKVarianceUnbiased: its expectation over c ~ Binomial(n0, p) is the exact variance at any n", () => {
  const binom = (n: number, c: number, p: number) => {
    let l = 0;
    for (let i = 0; i < c; i++) l += Math.log((n - i) / (i + 1));
    return Math.exp(l + c * Math.log(p) + (n - c) * Math.log1p(-p));
  };
  for (
    const [n0, k, n] of [[32, 1, 32], [32, 8, 32], [32, 16, 32], [32, 8, 100], [16, 4, 1000], [64, 32, 64]]
  ) {
    for (const p of [0.02, 0.1, 0.4]) {
      let unbiased = 0, plugIn = 0;
      for (let c = 0; c <= n0; c++) {
        unbiased += binom(n0, c, p) * passAtKVarianceUnbiased(n0, c, k, n);
        plugIn += binom(n0, c, p) * passAtKVariance(n, c / n0, k);
      }
      const exact = passAtKVariance(n, p, k);
      assertClose(unbiased, exact, 1e-9 + 1e-7 * exact, `n0 ${n0}, k ${k}, n ${n}, p ${p}`);
      if (k === 8 && n === 32 && p === 0.02) {
        ok(
          plugIn / exact < 0.7 || plugIn / exact > 1.4,
          `the plug-in is off: ×${(plugIn / exact).toFixed(2)}`,
        );
      }
    }
  }
  // At n = n0 it is h² − C(n−c, 2k)/C(n, 2k) with h = C(n−c, k)/C(n, k).
  const h = 1 - passAtK(20, 3, 4), h2 = 1 - passAtK(20, 3, 8);
  assertClose(passAtKVarianceUnbiased(20, 3, 4), h * h - h2, 1e-12);
  ok(Number.isNaN(passAtKVarianceUnbiased(12, 3, 8)), "n0 < 2k: no unbiased estimate");
});

Deno.test("holm: step-down levels α/m, α/(m − 1), …; stops at the first non-rejection; NaN counts as rejected", () => {
  assertEquals(holm([0.01, 0.04, 0.03, 0.005], 0.05).map((x) => x.rejected), [true, false, false, true]);
  assertEquals(holm([0.01, 0.04, 0.03, 0.005], 0.05).map((x) => x.level), [
    0.05 / 3,
    0.05,
    0.05 / 2,
    0.05 / 4,
  ]);
  assertEquals(holm([0.012, 0.02, 0.049]).map((x) => x.rejected), [true, true, true]);
  assertEquals(holm([NaN, 0.5]).map((x) => x.rejected), [true, false]);
  assertClose(tCdf(2.015048, 5), 0.95, 1e-6);
});
