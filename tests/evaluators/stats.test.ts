import { assertClose, assertEquals, ok, throws } from "../assert.ts";
import { bootstrapCI, pairedBootstrap, seedAggregate, tCritical } from "../../evaluators/mod.ts";
import { median } from "../../evaluators/stats.ts";
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

Deno.test("pairedBootstrap: the difference b − a, tighter than unpaired when problems share difficulty", () => {
  const rng = Rng.seeded(5);
  const difficulty = Array.from({ length: 300 }, () => rng.float());
  const a = difficulty.map((d) => d);
  const b = difficulty.map((d) => Math.min(1, d + 0.05 + 0.02 * (rng.float() - 0.5)));
  const paired = pairedBootstrap(a, b, { seed: 9 });
  ok(paired.lo > 0, `paired interval excludes 0: ${paired.lo}`);
  const ia = bootstrapCI(a, { seed: 9 });
  const ib = bootstrapCI(b, { seed: 10 });
  ok(paired.hi - paired.lo < (ia.hi - ia.lo) + (ib.hi - ib.lo));
  throws(() => pairedBootstrap([1, 2], [1], { seed: 1 }), /a has 2 problems but b has 1/);
});

Deno.test("median: middle value, mean of the two middle values for an even count, empty throws", () => {
  assertEquals(median([3, 1, 2]), 2);
  assertEquals(median([4, 1, 3, 2]), 2.5);
  assertEquals(median([7]), 7);
  throws(() => median([]), /no values/);
});
