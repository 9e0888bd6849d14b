import { assertClose, assertEquals, ok, throws } from "../assert.ts";
import {
  bootstrapCI,
  crossedComponents,
  crossedInterval,
  crossedVariance,
  median,
  minDetectable,
  passAtK,
  percentileSorted,
  quantile,
  seedAggregate,
  tCritical,
  tQuantile,
} from "../../evaluators/mod.ts";
import { Rng } from "../../common/prng.ts";

Deno.test("tCritical matches published two-sided t tables", () => {
  assertClose(tCritical(0.95, 1), 12.7062, 1e-4, "ν=1");
  assertClose(tCritical(0.95, 2), 4.3027, 1e-4, "ν=2");
  assertClose(tCritical(0.95, 4), 2.7764, 1e-4, "ν=4");
  assertClose(tCritical(0.95, 9), 2.2622, 1e-4, "ν=9");
  assertClose(tCritical(0.99, 30), 2.7500, 1e-4, "ν=30, 99%");
  assertClose(tCritical(0.90, 5), 2.0150, 1e-4, "ν=5, 90%");
});

Deno.test("seedAggregate: mean ± t·s/√n; one seed collapses to the mean", () => {
  const r = seedAggregate([0.5, 0.6, 0.7]);
  assertClose(r.mean, 0.6, 1e-12);
  assertClose(r.hi - r.mean, 4.302653 * 0.1 / Math.sqrt(3), 1e-6, "half width");
  assertEquals(r.n, 3);
  assertEquals(seedAggregate([0.4]), { mean: 0.4, lo: 0.4, hi: 0.4, n: 1 });
  throws(() => seedAggregate([]), /no values/);
  throws(() => seedAggregate([1, NaN]), /finite/);
});

Deno.test("bootstrapCI: seeded, brackets the mean, and covers the true mean at about the nominal rate", () => {
  const values = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? 1 : 0));
  const a = bootstrapCI(values, { seed: 42 });
  assertEquals(bootstrapCI(values, { seed: 42 }), a);
  ok(a.lo < a.mean && a.mean < a.hi);
  ok(
    JSON.stringify(bootstrapCI(values, { seed: 43 })) !== JSON.stringify(a),
    "a different seed moves the interval",
  );
  // Coverage: Bernoulli(0.3) samples of 100 problems; the 90% interval should contain 0.3 roughly 90% of the time.
  const rng = Rng.seeded(1);
  let covered = 0;
  const trials = 200;
  for (let t = 0; t < trials; t++) {
    const sample = Array.from({ length: 100 }, () => (rng.float() < 0.3 ? 1 : 0));
    const ci = bootstrapCI(sample, { seed: t, iters: 400, level: 0.9 });
    if (ci.lo <= 0.3 && 0.3 <= ci.hi) covered++;
  }
  ok(covered / trials > 0.82 && covered / trials < 0.97, `coverage ${covered / trials}`);
  throws(() => bootstrapCI([], { seed: 1 }), /no values/);
  throws(() => bootstrapCI([1], { seed: 1, level: 1.5 }), /level/);
});

// ---- crossed seeds × problems interval ------------------------------------------------------------------------

Deno.test("crossedComponents recovers hand-computed ANOVA components; crossedInterval is mean ± t·se", () => {
  // 2 seeds × 3 problems; hand computation: row means 0.5, 0.7; column means 0.4, 0.6, 0.8; grand mean 0.6.
  const y = [0.3, 0.5, 0.7, 0.5, 0.7, 0.9];
  const c = crossedComponents(y, 2, 3);
  assertClose(c.mean, 0.6, 1e-12);
  // Additive array: residual 0, MS_seed = 3·2·0.01 = 0.06 → σ²_seed = 0.02; MS_problem = 2·0.08/2 = 0.08 → 0.04.
  assertClose(c.residual, 0, 1e-12, "residual");
  assertClose(c.seed, 0.02, 1e-12, "seed");
  assertClose(c.problem, 0.04, 1e-12, "problem");
  const ci = crossedInterval(y, 2, 3);
  // Seed term MS_seed/(S·P) = 0.01 (1 df), problem term (MS_problem − MS_residual)/(S·P) = 0.08/6 (2 df).
  assertClose(ci.terms.seedTerm, 0.01, 1e-12, "seed term");
  assertClose(ci.terms.problemTerm, 0.08 / 6, 1e-12, "problem term");
  assertClose(ci.se, Math.sqrt(0.01 + 0.08 / 6), 1e-12, "se");
  const half = Math.sqrt(tCritical(0.95, 1) ** 2 * 0.01 + tCritical(0.95, 2) ** 2 * 0.08 / 6);
  assertClose(ci.hi - ci.mean, half, 1e-9, "half width");
  // The projection to the measured design gives the same terms (no component was truncated here).
  assertEquals(crossedVariance(c, { seeds: 2, problems: 3 }), ci.terms);
  // Seeds that agree exactly (a shared step-0 evaluation): problems only, s/√P with P − 1 df.
  const same = crossedInterval([0.2, 0.6, 0.7, 0.2, 0.6, 0.7], 2, 3);
  assertClose(same.se, Math.sqrt(0.07 / 3), 1e-12, "se = s/√P");
  assertClose(same.hi - same.mean, tCritical(0.95, 2) * same.se, 1e-9, "t(P − 1)");
  ok(same.lo < same.mean && !same.identical);
  // All equal: zero width, flagged; one value: no interval.
  const flat = crossedInterval([1, 1, 1, 1], 2, 2);
  assertEquals([flat.lo, flat.hi, flat.identical], [1, 1, true]);
  ok(Number.isNaN(crossedInterval([0.5], 1, 1).lo));
  throws(() => crossedComponents([1, 2, 3], 2, 2), /3 values for 2 seeds × 2 problems/);
});

Deno.test("tQuantile and minDetectable: published t values; MDD = (t.975 + t.80)·se", () => {
  assertClose(tQuantile(0.975, 3.5), 2.9401, 1e-4, "real ν");
  assertClose(tQuantile(0.8, 10), 0.8791, 1e-4);
  assertClose(tQuantile(0.975, 1e9), 1.95996, 1e-4, "huge ν → normal");
  const none = { seedTerm: 0, seedDf: 0, problemTerm: 0, problemDf: 0, residualTerm: 0, residualDf: 0 };
  const terms = { ...none, problemTerm: 1e-4, problemDf: 1e6 };
  assertClose(minDetectable(terms), (1.959964 + 0.841621) * 0.01, 1e-6, "normal limit 2.80·se");
  const small = { ...none, seedTerm: 1e-4, seedDf: 3, problemTerm: 1e-4, problemDf: 1e6 };
  assertClose(
    minDetectable(small) ** 2,
    (3.1824 + 0.9785) ** 2 * 1e-4 + 2.8016 ** 2 * 1e-4,
    1e-6,
    "per-term t",
  );
  assertEquals(median([3, 1, 2, 10]), 2.5);
  assertEquals(quantile([4, 0, 2], 0.25), 1);
});

/** E[f(sigmoid(μ + Z))], Z ~ N(0, τ²), by the trapezoid rule on ±10τ (exact to ~1e-10 for smooth f). */
function logitNormalMean(mu: number, tau: number, f: (p: number) => number): number {
  if (tau === 0) return f(1 / (1 + Math.exp(-mu)));
  const m = 8001, lo = -10 * tau, h = (20 * tau) / (m - 1);
  let sum = 0;
  for (let i = 0; i < m; i++) {
    const z = lo + i * h;
    const w = (i === 0 || i === m - 1 ? 0.5 : 1) * Math.exp(-0.5 * (z / tau) ** 2);
    sum += w * f(1 / (1 + Math.exp(-(mu + z))));
  }
  return (sum * h) / (tau * Math.sqrt(2 * Math.PI));
}

/** c ~ Binomial(n, p) by inversion (one uniform). */
function binomial(rng: Rng, n: number, p: number): number {
  const q = Math.min(Math.max(p, 1e-12), 1 - 1e-12);
  const u = rng.float(), ratio = q / (1 - q);
  let c = 0, pmf = (1 - q) ** n, cdf = pmf;
  while (u > cdf && c < n) {
    pmf *= ((n - c) / (c + 1)) * ratio;
    c++;
    cdf += pmf;
  }
  return c;
}

/** A simulated sweep design: logit of a problem's accuracy = mu + seed + problem + interaction (normal, sd given). */
interface Arm {
  mu: number;
  seedSd: number;
  problemSd: number;
  interactionSd: number;
}

interface Scenario {
  name: string;
  seeds: number;
  problems: number;
  n: number;
  k: number;
  /** One arm: a method's pass@k. Two arms: the paired difference B − A (shared seed and problem effects). */
  arms: Arm[];
  /** Extra seed and problem sd of arm B's own effects (the method × seed and method × problem interactions). */
  extra?: { seedSd: number; problemSd: number };
  sims: number;
}

/** Coverage of the crossed 95% interval (and, for comparison, the pigeonhole bootstrap's normal interval). */
function coverage(sc: Scenario, seed: number): { crossed: number; pigeonhole: number } {
  const rng = Rng.seeded(seed);
  const S = sc.seeds, P = sc.problems;
  const g = (p: number) => 1 - (1 - p) ** sc.k; // pass@k of a problem with accuracy p
  const [A, B] = sc.arms;
  const tau = (a: Arm, extra = 0) =>
    Math.sqrt(a.seedSd ** 2 + a.problemSd ** 2 + a.interactionSd ** 2 + extra);
  const extraVar = sc.extra ? sc.extra.seedSd ** 2 + sc.extra.problemSd ** 2 : 0;
  const truth = logitNormalMean(B ? B.mu : A.mu, B ? tau(B, extraVar) : tau(A), g) -
    (B ? logitNormalMean(A.mu, tau(A), g) : 0);
  const y = new Float64Array(S * P);
  let inCrossed = 0, inPigeonhole = 0;
  for (let sim = 0; sim < sc.sims; sim++) {
    const seedFx = Array.from({ length: S }, () => rng.normal());
    const problemFx = Array.from({ length: P }, () => rng.normal());
    const seedB = Array.from({ length: S }, () => rng.normal() * (sc.extra?.seedSd ?? 0));
    const problemB = Array.from({ length: P }, () => rng.normal() * (sc.extra?.problemSd ?? 0));
    for (let s = 0; s < S; s++) {
      for (let p = 0; p < P; p++) {
        const value = (arm: Arm, own: number) => {
          const logit = arm.mu + arm.seedSd * seedFx[s] + arm.problemSd * problemFx[p] +
            arm.interactionSd * rng.normal() + own;
          return passAtK(sc.n, binomial(rng, sc.n, 1 / (1 + Math.exp(-logit))), sc.k);
        };
        y[s * P + p] = B ? value(B, seedB[s] + problemB[p]) - value(A, 0) : value(A, 0);
      }
    }
    const ci = crossedInterval(y, S, P);
    if (ci.lo <= truth && truth <= ci.hi) inCrossed++;
    // Pigeonhole bootstrap (seeds and problems resampled independently): its bootstrap variance is exactly
    // [(1 − 1/S)·MS_seed + (1 − 1/P)·MS_problem + (1 − 1/S)(1 − 1/P)·MS_residual]/(S·P).
    const c = ci.components;
    if (S > 1) {
      const msE = c.residual, msA = msE + P * c.seed, msB = msE + S * c.problem;
      const v = ((1 - 1 / S) * msA + (1 - 1 / P) * msB + (1 - 1 / S) * (1 - 1 / P) * msE) / (S * P);
      if (Math.abs(ci.mean - truth) <= 1.959964 * Math.sqrt(v)) inPigeonhole++;
    }
  }
  return { crossed: inCrossed / sc.sims, pigeonhole: inPigeonhole / sc.sims };
}

const SCENARIOS: Scenario[] = [
  {
    name: "4 seeds, seed variance large",
    seeds: 4,
    problems: 150,
    n: 8,
    k: 1,
    arms: [{ mu: 0, seedSd: 0.5, problemSd: 1.5, interactionSd: 0.3 }],
    sims: 1200,
  },
  {
    name: "3 seeds, residual (interaction + binomial) dominant",
    seeds: 3,
    problems: 60,
    n: 4,
    k: 1,
    arms: [{ mu: -0.5, seedSd: 0.05, problemSd: 0.8, interactionSd: 1.0 }],
    sims: 1200,
  },
  {
    name: "paired difference B − A at pass@8 of n = 16, 4 seeds",
    seeds: 4,
    problems: 120,
    n: 16,
    k: 8,
    arms: [
      { mu: -1.5, seedSd: 0.3, problemSd: 1.5, interactionSd: 0.5 },
      { mu: -1.3, seedSd: 0.3, problemSd: 1.5, interactionSd: 0.5 },
    ],
    extra: { seedSd: 0.15, problemSd: 0.3 },
    sims: 1200,
  },
  {
    name: "4 seeds × 384 problems, seed × problem interaction dominant (the default sweep's difference)",
    seeds: 4,
    problems: 384,
    n: 32,
    k: 1,
    arms: [
      { mu: -0.5, seedSd: 0.05, problemSd: 1.5, interactionSd: 1.2 },
      { mu: -0.45, seedSd: 0.05, problemSd: 1.5, interactionSd: 1.2 },
    ],
    extra: { seedSd: 0.05, problemSd: 0.1 },
    sims: 600,
  },
  {
    name: "2 seeds (a CI sweep), seed and problem variance",
    seeds: 2,
    problems: 100,
    n: 16,
    k: 4,
    arms: [{ mu: -1, seedSd: 0.3, problemSd: 1.2, interactionSd: 0.4 }],
    sims: 1200,
  },
  {
    name: "one seed, no seed variance: problems only",
    seeds: 1,
    problems: 100,
    n: 8,
    k: 1,
    arms: [{ mu: 0.3, seedSd: 0, problemSd: 1.2, interactionSd: 0.4 }],
    sims: 1200,
  },
];

Deno.test("crossedInterval covers the true mean 95% ± 3 points on simulated sweeps with known components", () => {
  // 1200 simulated sweeps per scenario: the Monte Carlo sd of a 95% coverage is 0.6 points, so ±3 points is 5 sd.
  // The pigeonhole bootstrap's own variance is printed for contrast: it under-covers when seed variance dominates
  // a 4-seed sweep ((S − 1)/S shrinkage, normal quantile) and over-covers when the residual dominates.
  const pigeonholes: number[] = [];
  for (const [i, sc] of SCENARIOS.entries()) {
    const { crossed, pigeonhole } = coverage(sc, 100 + i);
    const shown = sc.seeds > 1 ? `${(100 * pigeonhole).toFixed(1)}%` : "n/a";
    console.log(`  ${sc.name}: crossed ${(100 * crossed).toFixed(1)}%, pigeonhole bootstrap ${shown}`);
    ok(Math.abs(crossed - 0.95) <= 0.03, `${sc.name}: coverage ${crossed}`);
    pigeonholes.push(pigeonhole);
  }
  ok(pigeonholes[0] < 0.92 && pigeonholes[1] > 0.975, `pigeonhole ${pigeonholes}`);
});

Deno.test("minDetectable is a power statement: a true difference of one MDD is detected about 80% of the time", () => {
  // Normal crossed differences with known components; the MDD comes from the true components of the design.
  const designs = [
    { S: 4, P: 300, seed: 2e-4, problem: 1e-3, residual: 0.08 }, // interaction-dominated (the default sweep)
    { S: 8, P: 100, seed: 1e-3, problem: 2e-3, residual: 0.05 }, // seed term matters
  ];
  for (const [i, d] of designs.entries()) {
    const truth = {
      seeds: d.S,
      problems: d.P,
      mean: 0,
      seed: d.seed,
      problem: d.problem,
      residual: d.residual,
    };
    const c = { ...truth, seedKnown: true, msSeed: NaN, msProblem: NaN, msResidual: NaN };
    const mdd = minDetectable(crossedVariance(c, { seeds: d.S, problems: d.P }));
    const rng = Rng.seeded(500 + i);
    const sims = 800;
    let detected = 0;
    const y = new Float64Array(d.S * d.P);
    for (let sim = 0; sim < sims; sim++) {
      const a = Array.from({ length: d.S }, () => rng.normal() * Math.sqrt(d.seed));
      const b = Array.from({ length: d.P }, () => rng.normal() * Math.sqrt(d.problem));
      for (let s = 0; s < d.S; s++) {
        for (let p = 0; p < d.P; p++) {
          y[s * d.P + p] = mdd + a[s] + b[p] + rng.normal() * Math.sqrt(d.residual);
        }
      }
      if (crossedInterval(y, d.S, d.P).lo > 0) detected++;
    }
    const power = detected / sims;
    console.log(`  S=${d.S} P=${d.P}: MDD ${mdd.toFixed(4)}, detected ${(100 * power).toFixed(1)}%`);
    ok(power > 0.72 && power < 0.88, `power at the MDD: ${power}`);
  }
});

Deno.test("median: middle value, mean of the two middle values for an even count, empty is NaN", () => {
  assertEquals(median([3, 1, 2]), 2);
  assertEquals(median([4, 1, 3, 2]), 2.5);
  assertEquals(median([7]), 7);
  ok(Number.isNaN(median([])));
});

Deno.test("percentileSorted: nearest rank, always an observed value; empty is NaN", () => {
  const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  assertEquals([percentileSorted(xs, 0.5), percentileSorted(xs, 0.95), percentileSorted(xs, 1)], [5, 10, 10]);
  assertEquals(percentileSorted([100, 300], 0.5), 100);
  ok(Number.isNaN(percentileSorted([], 0.5)));
});
