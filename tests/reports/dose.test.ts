// ACE's dose-response: the slope weights, the slope's nested interval against known truth (its mean recovers the
// planted slope and its 95% interval covers it 95% ± 3 points with a base-to-base spread of slopes), the variants a
// sweep's runs form, and the section and plot a real tabular α sweep gets.
import { join } from "node:path";
import { assertClose, assertEquals, ok, throws } from "../assert.ts";
import { Rng } from "../../common/prng.ts";
import { exists, writeJson } from "../../common/fs.ts";
import { main as sweepMain } from "../../commands/sweep.ts";
import type { RunData } from "../../reports/mod.ts";
import type { AceAggregation } from "../../bench/core/mod.ts";
import { doseVariants, slopeInterval, slopeWeights } from "../../reports/dose.ts";
import { tempDir } from "../temp.ts";

Deno.test("slopeWeights: Σw = 0 and Σw·α = 1, so Σw·y is the least-squares slope; one distinct α throws", () => {
  const xs = [0, 0.5, 1, 2, 4], w = slopeWeights(xs);
  assertClose(w.reduce((a, x) => a + x, 0), 0, 1e-15);
  assertClose(w.reduce((a, x, i) => a + x * xs[i], 0), 1, 1e-15);
  // y = 0.3 + 0.02·α exactly: the slope is 0.02.
  assertClose(w.reduce((a, x, i) => a + x * (0.3 + 0.02 * xs[i]), 0), 0.02, 1e-15);
  throws(() => slopeWeights([1, 1]), /two distinct/);
});

Deno.test("slopeInterval known truth: recovers a planted slope and covers it 95% ± 3 points (bases × problems, per-base slopes)", () => {
  // y_α[b][p] = μ + g_b + π_p + (β + β_b)·α + (gπ)_bp + e_αbp: every base has its own slope, so the base term counts.
  const alphas = [0, 0.5, 1, 2, 4], B = 8, P = 50, beta = 0.01;
  const rng = Rng.seeded("dose truth");
  const sims = 600;
  let covered = 0, sum = 0, detected = 0;
  for (let i = 0; i < sims; i++) {
    const pi = Array.from({ length: P }, () => 0.2 * rng.normal());
    const g = Array.from({ length: B }, () => 0.05 * rng.normal());
    const slopes = Array.from({ length: B }, () => beta + 0.006 * rng.normal());
    const gp = Array.from({ length: B * P }, () => 0.03 * rng.normal());
    const values = alphas.map((a) =>
      Float64Array.from({ length: B * P }, (_, j) => {
        const b = Math.floor(j / P), p = j % P;
        return 0.4 + g[b] + pi[p] + slopes[b] * a + gp[j] + 0.08 * rng.normal();
      })
    );
    const s = slopeInterval(values, alphas, Array.from({ length: B }, (_, b) => b), P);
    sum += s.mean;
    if (s.lo <= beta && beta <= s.hi) covered++;
    if (s.lo > 0) detected++;
    assertEquals([s.bases, s.problems, s.scope], [B, P, "bases"]);
  }
  const coverage = covered / sims;
  console.log(
    `  mean slope ${(sum / sims).toFixed(5)} (truth ${beta}), coverage ${(100 * coverage).toFixed(1)}%, ` +
      `detected ${(100 * detected / sims).toFixed(0)}%`,
  );
  assertClose(sum / sims, beta, 0.0006, "mean slope");
  ok(Math.abs(coverage - 0.95) <= 0.03, `coverage ${coverage}`);
  throws(() => slopeInterval([new Float64Array(4)], [0, 1], [0, 1], 2), /1 arrays, 2 xs/);
});

/** A RunData stub carrying only what doseVariants reads. */
function run(
  method: string,
  preset: string,
  alpha: number | null,
  aggregation: AceAggregation = "sum",
): RunData {
  return {
    runId: `${method}_b0_s0`,
    method,
    preset,
    seed: 0,
    base: 0,
    engine: "tabular",
    state: "done",
    ks: [],
    metrics: [],
    samples: [],
    expected: {},
    evalFile: "ok",
    ace: alpha === null
      ? { enabled: false, alpha: 1, phi: "softplus", aggregation: "sum", clip: null }
      : { enabled: true, alpha, phi: "softplus", aggregation, clip: null },
  };
}

Deno.test("doseVariants: ACE methods grouped by confidence-shift variant, the baseline as α = 0; fewer than 3 points dropped", () => {
  const runs = [
    run("grpo", "grpo", null),
    ...[0.5, 1, 2].map((a) => run(`ace-grpo_a${a}_softplus_sum`, "ace-grpo", a)),
    ...[0.5, 1].map((a) => run(`ace-grpo_a${a}_softplus_mean`, "ace-grpo", a, "mean")),
    run("ace-allwrong", "ace-allwrong", 1),
  ];
  const v = doseVariants(runs);
  assertEquals(v.map((x) => x.label), ["ace-grpo (softplus, sum)", "ace-grpo (softplus, mean)"]);
  assertEquals(v[0].points.map((p) => [p.alpha, p.method]), [
    [0, "grpo"],
    [0.5, "ace-grpo_a0.5_softplus_sum"],
    [1, "ace-grpo_a1_softplus_sum"],
    [2, "ace-grpo_a2_softplus_sum"],
  ]);
  assertEquals(v[1].points.length, 3);
  // One ACE method at α = 1 is not a series.
  assertEquals(doseVariants([run("grpo", "grpo", null), run("ace-grpo", "ace-grpo", 1)]), []);
});

Deno.test("dose on the tabular engine: an α sweep's summary has the dose-response table and plots/dose_tabular.svg", async () => {
  const dir = tempDir();
  const config = join(dir, "dose.json");
  writeJson(config, {
    name: "dose",
    engine: "tabular",
    bases: 3,
    methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
    grid: { "ace.alpha": [0.5, 1, 2, 4], "ace.aggregation": ["sum", "mean"] },
    settings: { prompts: 40, checkpointEvery: 20 },
    rl: { steps: 20, groupSize: 8, promptsPerStep: 8, lr: 8 },
    eval: { n: 16, ks: [1, 16], every: 20 },
  });
  const out = join(dir, "out");
  assertEquals(await sweepMain(["--config", config, "--out", out, "--workers", "2"]), 0);
  const summary = Deno.readTextFileSync(join(out, "summary.md"));
  const section = summary.slice(summary.indexOf("### tabular: ACE dose-response"));
  ok(summary.includes("### tabular: ACE dose-response"), summary);
  ok(
    section.includes(
      "| variant | k | Δ at α = 0.5 | Δ at α = 1 | Δ at α = 2 | Δ at α = 4 | slope per unit α |",
    ),
  );
  for (const variant of ["ace-grpo (softplus, sum) vs grpo", "ace-grpo (softplus, mean) vs grpo"]) {
    for (const k of [1, 16]) ok(section.includes(`| ${variant} | ${k} |`), `${variant} k=${k}\n${section}`);
  }
  ok(section.includes("α = 0 is the baseline's own runs"), section);
  ok(exists(join(out, "plots/dose_tabular.svg")), "dose plot");
  ok(Deno.readTextFileSync(join(out, "plots/dose_tabular.svg")).includes("ACE dose-response on tabular"));
});
