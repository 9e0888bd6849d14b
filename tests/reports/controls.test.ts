// Positive controls: the outcome rule, known-truth checks on simulated runs (a planted ordering is reproduced, its
// reverse contradicted, a null is "not resolvable" about 95% of the time, the base side is each run's own step 0),
// and the table in summary.md of a real tabular sweep of the field's baselines.
import { join } from "node:path";
import { assertEquals, ok } from "../assert.ts";
import { Rng } from "../../common/prng.ts";
import { writeJson } from "../../common/fs.ts";
import { main as sweepMain } from "../../commands/sweep.ts";
import { passKRows, type RunData } from "../../reports/mod.ts";
import { BASE_SIDE, checkClaims, type Claim, CLAIMS, outcomeOf } from "../../reports/controls.ts";
import { type SimSpec, simulateRuns } from "./simulate.ts";
import { tempDir } from "../temp.ts";

Deno.test("controls: the outcome follows the interval: excludes 0 upward, downward, or contains it", () => {
  assertEquals(outcomeOf({ lo: 0.01, hi: 0.05 }), "reproduced");
  assertEquals(outcomeOf({ lo: -0.05, hi: -0.001 }), "contradicted");
  assertEquals(outcomeOf({ lo: -0.01, hi: 0.02 }), "not resolvable");
  assertEquals(outcomeOf({ lo: NaN, hi: NaN }), "no interval");
});

Deno.test("controls: every claim names its paper's arXiv id, two sides, a k; the registry ids are unique", () => {
  assertEquals(new Set(CLAIMS.map((c) => c.id)).size, CLAIMS.length);
  for (const c of CLAIMS) {
    ok(/arXiv \d{4}\.\d{5}/.test(c.source), c.id);
    ok(c.a !== c.b && (c.k === 1 || c.k === "max"), c.id);
  }
  const ids = new Set(CLAIMS.map((c) => c.source.match(/\d{4}\.\d{5}/)![0]));
  assertEquals([...ids].sort(), ["2504.13837", "2506.01347", "2508.10751"]);
});

/** 8 bases × 40 problems, n 16; "ace-grpo" is shifted by `shift` on the logit scale. */
function spec(shift: number, step = 1): SimSpec {
  return {
    bases: 8,
    seedsPerBase: 1,
    problems: 40,
    n: 16,
    mu: -1,
    step,
    effects: { base: 0.3, seed: 0.1, problem: 1, baseProblem: 0.2, seedProblem: 0.1 },
    ace: { shift, effects: { base: 0.1, seed: 0.05, problem: 0.1, baseProblem: 0.05, seedProblem: 0.05 } },
  };
}

/** Simulated runs relabelled: grpo → `low`, ace-grpo → `high` (method and preset). */
function relabel(runs: RunData[], low: string, high: string): RunData[] {
  return runs.map((r) => {
    const name = r.method === "grpo" ? low : high;
    return { ...r, method: name, preset: name, runId: r.runId.replace(r.method, name) };
  });
}

const presetsOf = (runs: RunData[]) => new Map(runs.map((r) => [r.method, r.preset]));

Deno.test("controls known truth: PSR planted above NSR at every k reproduces 'PSR ≥ NSR at Pass@1' and contradicts 'NSR ≥ PSR at large k'", () => {
  const runs = relabel(simulateRuns(spec(0.8), Rng.seeded("planted")), "nsr", "psr");
  const { results, skipped } = checkClaims(passKRows(runs, 1), presetsOf(runs));
  const by = (id: string) => results.find((r) => r.claim.id === id)!;
  assertEquals(by("zhu-psr-pass1").outcome, "reproduced");
  assertEquals(by("zhu-nsr-largek").outcome, "contradicted");
  assertEquals([by("zhu-psr-pass1").cell.k, by("zhu-nsr-largek").cell.k], [1, 16]);
  ok(by("zhu-psr-pass1").cell.mean > 0 && by("zhu-nsr-largek").cell.mean < 0);
  // Claims needing grpo, w-reinforce or passk are not checked, and say why.
  ok(skipped.some((s) => s.claim.id === "chen-passk-largek" && s.why.includes("no grpo or passk")), "skip");
});

Deno.test("controls known truth: with no difference, a claim is 'not resolvable' about 95% of the time", () => {
  const claim: Claim = {
    id: "t",
    claim: "psr ≥ nsr",
    source: "test, arXiv 0000.00000",
    a: "nsr",
    b: "psr",
    k: 1,
  };
  const rng = Rng.seeded("null controls");
  const sims = 120;
  let resolved = 0;
  for (let i = 0; i < sims; i++) {
    const runs = relabel(simulateRuns(spec(0), rng), "nsr", "psr");
    const { results } = checkClaims(passKRows(runs, 1), presetsOf(runs), [claim]);
    if (results[0].outcome !== "not resolvable") resolved++;
  }
  console.log(`  null: ${resolved} of ${sims} resolved either way (5% expected)`);
  ok(resolved / sims <= 0.12, `${resolved} of ${sims}`);
});

Deno.test("controls known truth: the base side is each run's own step-0 evaluation", () => {
  // Step 0: the plain simulation; the final step: the same spec shifted up, as RL that helps at every k.
  const rng = Rng.seeded("base side");
  const start = simulateRuns(spec(0, 0), rng).filter((r) => r.method === "grpo");
  const trained = simulateRuns({ ...spec(0, 5), mu: -0.2 }, rng).filter((r) => r.method === "grpo");
  const runs = trained.map((r, i) => ({ ...r, samples: [...start[i].samples, ...r.samples] }));
  const { results } = checkClaims(passKRows(runs, 1), presetsOf(runs));
  const up = results.find((r) => r.claim.id === "yue-rl-pass1")!;
  const down = results.find((r) => r.claim.id === "yue-base-largek")!;
  assertEquals([up.a, up.b, down.b], [BASE_SIDE, "grpo", BASE_SIDE]);
  assertEquals([up.outcome, down.outcome], ["reproduced", "contradicted"]);
});

Deno.test("controls on the tabular engine: a sweep of the field's baselines prints the reproduces table", async () => {
  const dir = tempDir();
  const config = join(dir, "controls.json");
  writeJson(config, {
    name: "controls",
    engine: "tabular",
    bases: 3,
    methods: ["grpo", "nsr", "psr", "w-reinforce", "passk"].map((m) => ({ name: m, preset: m })),
    settings: { prompts: 40, checkpointEvery: 20 },
    rl: { steps: 20, groupSize: 8, promptsPerStep: 8, lr: 8 },
    eval: { n: 16, ks: [1, 16], every: 20 },
  });
  const out = join(dir, "out");
  assertEquals(await sweepMain(["--config", config, "--out", out, "--workers", "2"]), 0);
  const summary = Deno.readTextFileSync(join(out, "summary.md"));
  const section = summary.slice(summary.indexOf("### tabular: what this world reproduces"));
  ok(section.length > 0 && section.includes("| claim | source | k |"), summary);
  for (const c of CLAIMS) ok(section.includes(c.claim), c.claim);
  const outcomes = section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| claim"))
    .map((l) => l.split(" | ").at(-1)!.replace(" |", ""));
  assertEquals(outcomes.length, CLAIMS.length);
  ok(outcomes.every((o) => ["reproduced", "contradicted", "not resolvable"].includes(o)), outcomes.join());
  ok(/\d reproduced, \d contradicted, \d not resolvable of 9 claims checked\./.test(section), section);
});
