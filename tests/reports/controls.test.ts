// Controls: the outcome rule (against 0 and the published size, Holm-corrected), known-truth checks on simulated
// runs (a planted difference is reproduced, its reverse contradicted, a null is "not resolvable" about 95% of the
// time, a planted size far from the published one excludes it, the base side is each run's own step 0), and the
// table in summary.md of a real tabular sweep of the field's baselines.
import { join } from "node:path";
import { assertClose, assertEquals, ok, throws } from "../assert.ts";
import { loadSchema, validate } from "../../common/config.ts";
import { Rng } from "../../common/prng.ts";
import { writeJson } from "../../common/fs.ts";
import { main as sweepMain } from "../../commands/sweep.ts";
import { passKRows, type RunData } from "../../reports/mod.ts";
import { BASE_SIDE, checkClaims, type Claim, CLAIMS, outcomeOf } from "../../reports/controls.ts";
import { termsPValue } from "../../evaluators/mod.ts";
import { type SimSpec, simulateRuns } from "./simulate.ts";
import { tempDir } from "../temp.ts";

Deno.test("controls: the outcome from the tests against 0 and against the published size", () => {
  assertEquals(outcomeOf(0.05, true, false, 0.06), "reproduced");
  assertEquals(outcomeOf(0.01, true, true, 0.06), "direction reproduced, published size excluded");
  assertEquals(outcomeOf(-0.03, true, true, 0.06), "contradicted");
  assertEquals(outcomeOf(0.001, false, true, 0.06), "published size excluded");
  assertEquals(outcomeOf(0.02, false, false, 0.06), "not resolvable");
  assertEquals(outcomeOf(0.01, false, null, 0), "as published (no difference detected)");
  assertEquals(outcomeOf(-0.05, true, null, 0), "contradicted");
  assertEquals(outcomeOf(0.03, true, null, null), "reproduced");
  assertEquals(outcomeOf(NaN, false, null, 0.1), "no interval");
});

Deno.test("controls: every claim names its source and its table's size; the registry ids are unique", () => {
  assertEquals(new Set(CLAIMS.map((c) => c.id)).size, CLAIMS.length);
  for (const c of CLAIMS) {
    ok(c.a !== c.b && (c.k === 1 || c.k === "max"), c.id);
    if (c.published) {
      ok(/arXiv \d{4}\.\d{5}/.test(c.source), c.id);
      ok(/Table \d/.test(c.published.where) && Math.abs(c.published.delta) < 0.5, c.id);
    }
  }
  const ids = new Set(CLAIMS.filter((c) => c.published).map((c) => c.source.match(/\d{4}\.\d{5}/)![0]));
  assertEquals([...ids].sort(), ["2504.13837", "2506.01347", "2508.10751"]);
  // The Zhu et al. sizes are differences of their Table 1 (MATH) entries, in Pass@k units.
  const zhu = Object.fromEntries(
    CLAIMS.filter((c) => c.id.startsWith("zhu")).map((c) => [c.id, c.published!.delta]),
  );
  assertClose(zhu["zhu-nsr-psr-largek"], (96.9 - 91.2) / 100, 1e-12);
  assertClose(zhu["zhu-wr-grpo-largek"], (96.7 - 95.5) / 100, 1e-12);
});

Deno.test("controls: the registry file's schema refuses a malformed claim, naming the item and field", () => {
  const schema = loadSchema(new URL("../../reports/schemas/claims.schema.json", import.meta.url));
  throws(
    () => validate(schema, [CLAIMS[0], { ...CLAIMS[1], k: 2 }], "claims.json"),
    /claims\.json: \[1\]\.k/,
  );
  throws(
    () => validate(schema, [{ ...CLAIMS[0], published: { delta: "+1.6" } }], "claims.json"),
    /claims\.json: \[0\]\.published/,
  );
});

Deno.test("controls: the p-value inverts the interval (p < 0.05 exactly where the 95% interval excludes the value)", () => {
  const runs = relabel(simulateRuns(spec(0.3), Rng.seeded("p-values")), "nsr", "psr");
  const claim: Claim = { id: "t", claim: "t", source: "test", a: "nsr", b: "psr", k: 1, published: null };
  const cell = checkClaims(passKRows(runs, 1), presetsOf(runs), [claim]).results[0].cell;
  for (const d of [cell.lo - 1e-4, cell.lo + 1e-4, cell.hi - 1e-4, cell.hi + 1e-4]) {
    const p = termsPValue(cell.terms, cell.mean - d);
    ok((p < 0.05) === (d < cell.lo || d > cell.hi), `d = ${d}: p = ${p}`);
  }
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

Deno.test("controls known truth: NSR planted above PSR at every k reproduces NSR above PSR, and PSR planted above contradicts it", () => {
  const up = relabel(simulateRuns(spec(0.8), Rng.seeded("planted")), "psr", "nsr");
  const { results, skipped } = checkClaims(passKRows(up, 1), presetsOf(up));
  const by = (id: string) => results.find((r) => r.claim.id === id)!;
  ok(by("zhu-nsr-psr-largek").cell.mean > 0 && by("zhu-nsr-psr-pass1").cell.mean > 0);
  ok(
    by("zhu-nsr-psr-pass1").outcome.startsWith("direction reproduced") ||
      by("zhu-nsr-psr-pass1").outcome === "reproduced",
  );
  assertEquals([by("zhu-nsr-psr-pass1").cell.k, by("zhu-nsr-psr-largek").cell.k], [1, 16]);
  const down = relabel(simulateRuns(spec(0.8), Rng.seeded("planted")), "nsr", "psr");
  const reverse = checkClaims(passKRows(down, 1), presetsOf(down)).results;
  assertEquals(reverse.find((r) => r.claim.id === "zhu-nsr-psr-largek")!.outcome, "contradicted");
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
    published: { delta: 0.5, where: "a size far outside the simulation's reach" },
  };
  const rng = Rng.seeded("null controls");
  const sims = 120;
  let resolved = 0;
  for (let i = 0; i < sims; i++) {
    const runs = relabel(simulateRuns(spec(0), rng), "nsr", "psr");
    const { results } = checkClaims(passKRows(runs, 1), presetsOf(runs), [claim]);
    if (!["not resolvable", "published size excluded"].includes(results[0].outcome)) resolved++;
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
  const up = results.find((r) => r.claim.id === "yue-grpo-pass1")!;
  const down = results.find((r) => r.claim.id === "yue-base-largek")!;
  assertEquals([up.a, up.b, down.b], [BASE_SIDE, "grpo", BASE_SIDE]);
  ok(up.cell.mean > 0 && up.outcome !== "contradicted" && up.outcome !== "not resolvable", up.outcome);
  assertEquals(down.outcome, "contradicted");
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
  ok(section.length > 0 && section.includes("| claim | source | published b − a | k |"), summary);
  ok(section.includes("Holm's correction over the"), section);
  const checked = CLAIMS.filter((c) => c.id !== "oracle-base-largek"); // no oracle on the tabular engine
  for (const c of checked) ok(section.includes(c.claim), c.claim);
  const outcomes = section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| claim"))
    .map((l) => l.split(" | ").at(-1)!.replace(" |", ""));
  assertEquals(outcomes.length, checked.length);
  ok(/ of 11 claims checked\. Not checked: the oracle/.test(section), section);
});
