import { assertEquals, ok } from "../assert.ts";
import { Rng } from "../../common/prng.ts";
import { loadSchema, validate } from "../../common/config.ts";
import { buildReport, type EvalSample, type RunData } from "../../reports/mod.ts";
import { mddText } from "../../reports/caveats.ts";
import {
  main as powerMain,
  ownDesign,
  pairedSampleCorrelation,
  POWER_SCHEMA,
  type PowerModel,
  problemsNeeded,
  projectMdd,
  withinEstimate,
} from "../../reports/power.ts";
import { fixture } from "./fixture.ts";
import { type SimSpec, simulateRuns, writeSweep } from "./simulate.ts";

/** Run `deno task power` with args and return what it printed. */
async function power(args: string[]): Promise<string> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (text: string) => lines.push(text);
  try {
    assertEquals(await powerMain(args), 0);
  } finally {
    console.log = log;
  }
  return lines.join("\n");
}

/** A simulated sweep of 4 bases × 2 seeds (written to a temp folder the caller removes). */
function basesSweep(): string {
  const spec: SimSpec = {
    bases: 4,
    seedsPerBase: 2,
    problems: 30,
    n: 16,
    mu: -1.5,
    effects: { base: 0.3, seed: 0.15, problem: 1, baseProblem: 0.3, seedProblem: 0.2 },
    ace: { shift: 0.2, effects: { base: 0.2, seed: 0.1, problem: 0.3, baseProblem: 0.15, seedProblem: 0.1 } },
  };
  const dir = Deno.makeTempDirSync({ prefix: "power-" });
  writeSweep(dir, simulateRuns(spec, Rng.seeded(11)));
  return dir;
}

Deno.test("power: the projection for the sweep's own design is the summary's MDD (one base and four)", async () => {
  const dir = basesSweep();
  try {
    for (const path of [fixture, dir]) {
      const report = await buildReport(path, { iters: 200 });
      ok(report.comparisons.length > 0);
      for (const c of report.comparisons) {
        for (const d of c.cells) {
          assertEquals(projectMdd(d, ownDesign(d)), d.mdd, `${path} ${c.dataset} Pass@${d.k}`);
          ok(report.summary.includes(d.mdd.toFixed(3)), `summary prints MDD@${d.k} ${d.mdd.toFixed(3)}`);
        }
      }
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("power: more bases, seeds, problems or samples shrink the MDD; a target gives the problems needed", async () => {
  const dir = basesSweep();
  try {
    const report = await buildReport(dir, { iters: 200 });
    const d = report.comparisons[0].cells.find((x) => x.k === 1)!;
    assertEquals([d.bases, d.seeds, d.nested.seedsPerBase], [4, 8, 2]);
    const at = (bases: number, seedsPerBase: number, problems: number, n: number) =>
      projectMdd(d, { bases, seedsPerBase, problems, n });
    const own = at(4, 2, 30, 16);
    ok(at(8, 2, 30, 16) < own && at(4, 4, 30, 16) < own && at(4, 2, 300, 16) < own && at(4, 2, 30, 64) < own);
    // Within-problem variance at k = 1 is p(1 − p)/n per side, made unbiased by n/(n − 1): it scales as 1/n.
    const ratio = withinEstimate(d, 64).variance / withinEstimate(d, 8).variance;
    ok(Math.abs(ratio - 8 / 64) < 1e-12, `1/n scaling at k = 1: ${ratio}`);
    const need = problemsNeeded(d, 0.1, { bases: 8, seedsPerBase: 1, n: 16 });
    const mdd = (problems: number) => at(8, 1, problems, 16);
    ok(need !== null && mdd(need) <= 0.1 && mdd(need - 1) > 0.1, `problems needed ${need}`);
    // n = 16 samples: k = 8 has the unbiased within-problem estimate (n ≥ 2k), k = 16 only the plug-in.
    const byK = (k: number) => report.comparisons[0].cells.find((x) => x.k === k)!;
    assertEquals([withinEstimate(byK(8), 16).plugIn, withinEstimate(byK(16), 16).plugIn], [false, true]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("power: the command prints the five components, projections over bases and the --target table", async () => {
  const dir = basesSweep();
  try {
    const text = await power([dir, "--bases", "16", "--seeds-per-base", "1", "--problems", "200"]);
    for (const name of ["σ²_base", "σ²_seed(base)", "σ²_problem", "σ²_base×problem", "σ²_residual"]) {
      ok(text.includes(name), `${name} in\n${text}`);
    }
    ok(text.includes("Projected MDD for 16 bases × 1 seeds × 200 problems × n 16"), text);
    ok(text.includes("the plug-in at p̂ = c/n is used there"), "k = 16 > n/2 is named");
    const target = await power([dir, "--target", "0.05", "--try-bases", "4,8"]);
    ok(target.includes("Problems needed for MDD ≤ 0.05") && target.includes("| 8 |"), target);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("power: one base says so; negative components are shown, then counted as 0; no MDD prints as 0.000", async () => {
  const text = await power([fixture, "--n", "1000"]);
  ok(text.includes("holds for this base model only"), text);
  ok(
    /-\d\.\d\de-\d+ \(→ 0\)/.test(text) && text.includes("counts a negative sum as 0, as the interval does"),
    text,
  );
  // Within-problem variance under common random numbers: labelled, with the measured correlation.
  ok(/samples are correlated \(measured here: ρ = 0\.\d\d between paired samples/.test(text), text);
  ok(/\| \d\.\d{3} \| \[\d\.\d{3}, (\d\.\d{3}|>1)\] \(1 df\) \|/.test(text), "MDD range column");
  const projected = text.split("\n").filter((_, i, all) => all[i - 2]?.startsWith("| MDD@"));
  ok(projected.length > 0 && projected.every((l) => !l.includes("0.000")), projected.join("\n"));
  assertEquals([mddText(0.0004), mddText(0.01234), mddText(0), mddText(NaN)], [
    "0.00040",
    "0.012",
    "0 (no variance measured)",
    "–",
  ]);
});

Deno.test("pairedSampleCorrelation known truth: shared draws give ρ = 1, independent ones ≈ 0, a mixture its share", () => {
  // Sample i of b copies sample i of a with probability q, else is an independent draw at the same p: ρ = q.
  const rng = Rng.seeded("paired correlation");
  const runs = (q: number): RunData[] => {
    const out: RunData[] = [];
    for (let unit = 0; unit < 4; unit++) {
      const a: EvalSample[] = [], b: EvalSample[] = [];
      for (let p = 0; p < 150; p++) {
        const prob = 0.1 + 0.8 * rng.float();
        for (let i = 0; i < 32; i++) {
          const x = rng.float() < prob;
          const y = rng.float() < q ? x : rng.float() < prob;
          const base = { step: 1, dataset: "sim", problemId: `p${p}`, sample: i, extracted: null };
          a.push({ ...base, correct: x, status: x ? "correct" : "wrong" });
          b.push({ ...base, correct: y, status: y ? "correct" : "wrong" });
        }
      }
      for (const [method, samples] of [["grpo", a], ["ace-grpo", b]] as const) {
        out.push({
          runId: `${method}_b${unit}_s0`,
          method,
          preset: method,
          seed: 0,
          base: unit,
          engine: "sim",
          state: "done",
          ks: [],
          metrics: [],
          samples,
          expected: {},
          evalFile: "ok",
        });
      }
    }
    return out;
  };
  assertEquals(pairedSampleCorrelation(runs(1), "grpo", "ace-grpo", "sim"), 1);
  const none = pairedSampleCorrelation(runs(0), "grpo", "ace-grpo", "sim");
  const some = pairedSampleCorrelation(runs(0.3), "grpo", "ace-grpo", "sim");
  ok(Math.abs(none) < 0.03, `independent: ρ = ${none}`);
  ok(Math.abs(some - 0.3) < 0.03, `q = 0.3: ρ = ${some}`);
  ok(Number.isNaN(pairedSampleCorrelation(runs(1), "grpo", "nope", "sim")), "no pairs: NaN");
});

Deno.test("power --json: the same figures as the Markdown, valid against its schema, with --target too", async () => {
  const dir = basesSweep();
  try {
    const model = JSON.parse(
      await power([dir, "--bases", "16", "--seeds-per-base", "1", "--problems", "200", "--json"]),
    ) as PowerModel;
    validate(loadSchema(POWER_SCHEMA), model, "power.json");
    const report = await buildReport(dir, { iters: 200 });
    assertEquals(model.comparisons.length, report.comparisons.length);
    const c = report.comparisons[0], j = model.comparisons[0];
    assertEquals(j.design, { bases: 16, seedsPerBase: 1, problems: 200, n: 16 });
    assertEquals(j.ownDesign, ownDesign(c.cells[0]));
    for (const [i, d] of c.cells.entries()) {
      assertEquals(j.cells[i].mdd, d.mdd, "own-design MDD is the summary's");
      assertEquals(j.cells[i].projected!.mdd, projectMdd(d, j.design));
      assertEquals(j.cells[i].components.problem, d.nested.problem);
    }
    const markdown = await power([dir, "--bases", "16", "--seeds-per-base", "1", "--problems", "200"]);
    ok(markdown.includes(mddText(j.cells[0].projected!.mdd)), "the Markdown prints the JSON's projected MDD");
    const target = JSON.parse(
      await power([dir, "--target", "0.05", "--try-bases", "4,8", "--json"]),
    ) as PowerModel;
    validate(loadSchema(POWER_SCHEMA), target, "power-target.json");
    const rows = target.comparisons[0].target!.rows;
    assertEquals(rows.map((r) => r.bases), [4, 8]);
    assertEquals(rows[0].problems.length, target.comparisons[0].target!.ks.length);
    ok(target.comparisons[0].cells.every((d) => d.projected === null), "no projection with --target");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
