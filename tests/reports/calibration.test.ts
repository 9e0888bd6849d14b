// The calibration of the RL step: the rule (largest step whose GRPO raises Pass@1 with the interval above 0 and
// keeps Pass@k at the largest k within 3 points of its base), and a real tabular calibration sweep through
// `deno task sweep` (methods with their own rl.lr) writing its section, calibration.csv and plot.
import { join } from "node:path";
import { assertEquals, ok, rejects } from "../assert.ts";
import { fromCsv } from "../../common/csv.ts";
import { writeJson } from "../../common/fs.ts";
import { main as sweepMain } from "../../commands/sweep.ts";
import { CALIBRATION_RULE, type CalibrationPoint, pickStepSize } from "../../reports/calibration.ts";
import type { DiffCell } from "../../reports/compare.ts";
import { tempDir } from "../temp.ts";

/** A calibration point of grpo at `lr` with ΔPass@1 [lo1, hi1] and ΔPass@32 mean `dMax`. */
function point(lr: number, lo1: number, dMax: number): CalibrationPoint {
  const cell = (k: number, mean: number, lo: number, hi: number) => ({ k, mean, lo, hi }) as DiffCell;
  return {
    preset: "grpo",
    lr,
    method: `grpo-lr${lr}`,
    dataset: "d",
    runs: 4,
    pass1: cell(1, lo1 + 0.01, lo1, lo1 + 0.02),
    passMax: cell(32, dMax, dMax - 0.01, dMax + 0.01),
    kl: null,
    entropy: null,
    overconfFrac: null,
    overconfMeanC: null,
  };
}

Deno.test("calibration rule: the largest step that raises Pass@1 and keeps the largest k within 3 points", () => {
  // The rule as fixed before the calibration data (docs/findings.md quotes it).
  assertEquals(CALIBRATION_RULE, { preset: "grpo", maxBoundaryLoss: 0.03 });
  const points = [point(1e-4, 0.02, -0.01), point(2.5e-4, 0.05, -0.029), point(5e-4, 0.04, -0.07)];
  const pick = pickStepSize(points, "d");
  assertEquals([pick.lr, pick.inRange], [2.5e-4, true]);
  assertEquals(pick.reasons.length, 3);
  ok(pick.reasons[2].includes("beyond the 0.03 allowed"), pick.reasons[2]);
  // Pass@1 not distinguishably raised disqualifies a step whatever its boundary.
  assertEquals(pickStepSize([point(1e-4, -0.01, 0), point(2e-4, 0.01, -0.02)], "d").lr, 2e-4);
  // None in range: the working step with the smallest loss, and the report says so.
  const out = pickStepSize([point(1e-4, 0.01, -0.05), point(2e-4, 0.02, -0.09)], "d");
  assertEquals([out.lr, out.inRange], [1e-4, false]);
  assertEquals(pickStepSize([point(1e-4, -0.02, 0)], "d").lr, null);
});

Deno.test("calibration through deno task sweep: methods at their own rl.lr get the section, csv and plot", async () => {
  const dir = tempDir();
  const config = join(dir, "cal.json");
  writeJson(config, {
    name: "cal",
    engine: "tabular",
    bases: 2,
    methods: [2, 8].flatMap((lr) =>
      ["grpo", "nsr"].map((m) => ({ name: `${m}-lr${lr}`, preset: m, rl: { lr } }))
    ),
    settings: { prompts: 30 },
    rl: { steps: 20, groupSize: 8, promptsPerStep: 8 },
    eval: { n: 16, ks: [1, 16], every: 20 },
  });
  const out = join(dir, "out");
  assertEquals(await sweepMain(["--config", config, "--out", out, "--workers", "2"]), 0);
  const summary = Deno.readTextFileSync(join(out, "summary.md"));
  ok(summary.includes("### tabular: calibration of the RL step"), summary);
  ok(/\*\*Chosen: lr [28]\.\*\*|No setting meets both|the rule picks nothing/.test(summary), summary);
  const rows = fromCsv(Deno.readTextFileSync(join(out, "calibration.csv")));
  assertEquals(rows.map((r) => `${r.preset}@${r.lr}`).sort(), ["grpo@2", "grpo@8", "nsr@2", "nsr@8"]);
  ok(rows.filter((r) => r.chosen === "true").length <= 1);
  ok(Deno.statSync(join(out, "plots", "calibration_tabular.svg")).size > 1000);
  // The runs recorded their own step size; the controls are skipped (sides would mix step sizes).
  const config8 = JSON.parse(Deno.readTextFileSync(join(out, "runs", "grpo-lr8_b0_s0", "config.json")));
  assertEquals(config8.settings.rl.lr, 8);
  ok(!summary.includes("what this world reproduces"));
});

Deno.test("a method's rl block: sweep-only fields refused, naming the method", async () => {
  const dir = tempDir();
  const config = join(dir, "bad.json");
  writeJson(config, {
    name: "bad",
    engine: "tabular",
    bases: 1,
    methods: [{ name: "grpo", preset: "grpo", rl: { steps: 3 } }],
    settings: {},
    rl: { steps: 2 },
    eval: { n: 2, ks: [1], every: 2 },
  });
  await rejects(
    sweepMain(["--config", config, "--out", join(dir, "o")]),
    /bad\.json: methods\[0\]\.rl\.steps: set by the sweep's rl block only/,
  );
});
