// The calibration of the RL step: the same methods at several step sizes (each method's own `rl.lr`), each setting
// read as how far RL moved the policy from its base — ΔPass@1 and ΔPass@k at the largest k against the run's own
// step 0 (paired by base, seed and problem, crossed interval), the KL to the reference, the entropy and the share
// of incorrect rollouts the policy has grown more confident in than the reference (c > 0) — and the rule that picks
// the default step size. The rule was fixed before the calibration sweep was run (docs/findings.md says so and
// cites the tables its thresholds come from); it is applied here mechanically, so a re-run re-applies it.
import { toCsv } from "../common/csv.ts";
import { crossedName } from "./caveats.ts";
import { pairedDiff } from "./compare.ts";
import type { RunData } from "./load.ts";
import { finalRows, type PassKRow } from "./passk.ts";
import { r6, signed, withInterval } from "./format.ts";

/**
 * The rule, written before the data. Among the step sizes tried, the default is the largest whose GRPO
 * (1) raises Pass@1 over its base with the 95% interval excluding 0 (RL works: every LLM table cited shows a large
 * Pass@1 gain), and (2) keeps Pass@k at the largest k within `maxBoundaryLoss` of the base on the mean (the LLM
 * tables put GRPO − base at their largest k between −2.5 and +3.3 points: Zhu et al. 2025 Table 1, Pass@256 on
 * MATH, AIME 2025, AMC23 with Qwen2.5-Math-7B; Yue et al. 2025 Table 2, +1.0 at Pass@256 on MATH500 with
 * Qwen2.5-7B). The largest such step size moves the policy most in a fixed number of steps, so methods differ most.
 * When no step size meets both, the largest meeting (1) whose boundary loss is smallest is taken and the report
 * says the world could not be brought into the LLM range on this grid.
 */
export const CALIBRATION_RULE = { preset: "grpo", maxBoundaryLoss: 0.03 } as const;

/** Training metrics summarised per setting: the mean over each run's last `METRIC_WINDOW` logged steps. */
const METRIC_WINDOW = 10;

/** Mean over runs of each run's mean of `metric` over its last METRIC_WINDOW steps; null when never logged. */
function windowMean(runs: readonly RunData[], metric: string): number | null {
  const perRun = runs.flatMap((r) => {
    const xs = r.metrics.slice(-METRIC_WINDOW).map((m) => m[metric])
      .filter((x): x is number => typeof x === "number" && Number.isFinite(x));
    return xs.length ? [xs.reduce((a, b) => a + b, 0) / xs.length] : [];
  });
  return perRun.length ? perRun.reduce((a, b) => a + b, 0) / perRun.length : null;
}

/**
 * The calibration points of a sweep: one per method whose runs record a step size, for presets the sweep runs at
 * two or more step sizes (otherwise there is nothing to calibrate and the result is empty).
 */
export function calibrationPoints(runs: readonly RunData[], rows: readonly PassKRow[]) {
  const lrsOf = new Map<string, Set<number>>();
  for (const r of runs) {
    if (r.lr !== undefined) lrsOf.set(r.preset, (lrsOf.get(r.preset) ?? new Set()).add(r.lr));
  }
  const all = rows.filter((r) => r.slice === "all");
  const final = finalRows(all.filter((r) => r.step > 0));
  const datasets = [...new Set(all.map((r) => r.dataset))].sort();
  return [...new Set(runs.map((r) => r.method))].flatMap((method) => {
    const mine = runs.filter((r) => r.method === method);
    const { preset, lr } = mine[0];
    if (lr === undefined || (lrsOf.get(preset)?.size ?? 0) < 2) return [];
    return datasets.flatMap((dataset) => {
      const start = all.filter((r) => r.method === method && r.dataset === dataset && r.step === 0);
      const end = final.filter((r) => r.method === method && r.dataset === dataset);
      const { cells } = pairedDiff(start, end);
      if (cells.length === 0) return [];
      // pass1, passMax: final − step 0 at k = 1 and at the largest k; the rest: means over runs of each run's
      // last-window mean (null: not logged); overconf: the share of incorrect rollouts with c > 0, their mean c.
      return [{
        preset,
        lr,
        method,
        dataset,
        runs: mine.length,
        pass1: cells.find((c) => c.k === 1) ?? cells[0],
        passMax: cells[cells.length - 1],
        kl: windowMean(mine, "kl"),
        entropy: windowMean(mine, "entropy"),
        overconfFrac: windowMean(mine, "ace_overconf_frac"),
        overconfMeanC: windowMean(mine, "ace_overconf_mean_c"),
      }];
    });
  }).sort((a, b) => a.preset.localeCompare(b.preset) || a.lr - b.lr);
}

/** One calibration setting: a preset at one step size, with its effect against the base and its diagnostics. */
export type CalibrationPoint = ReturnType<typeof calibrationPoints>[number];

/** The rule's verdict on one dataset: the chosen step size (null: no GRPO setting) and a sentence per setting. */
export function pickStepSize(points: readonly CalibrationPoint[], dataset: string) {
  const mine = points.filter((p) => p.dataset === dataset && p.preset === CALIBRATION_RULE.preset);
  const works = (p: CalibrationPoint) => Number.isFinite(p.pass1.lo) && p.pass1.lo > 0;
  const keeps = (p: CalibrationPoint) => p.passMax.mean >= -CALIBRATION_RULE.maxBoundaryLoss;
  const reasons = mine.map((p) =>
    `lr ${p.lr}: Pass@1 ${works(p) ? "rises (interval excludes 0)" : "does not rise distinguishably"}, ` +
    `Pass@${p.passMax.k} ${signed(p.passMax.mean)} against the base (${
      keeps(p) ? "within" : "beyond"
    } the ${CALIBRATION_RULE.maxBoundaryLoss} allowed)`
  );
  const both = mine.filter((p) => works(p) && keeps(p));
  if (both.length) return { lr: Math.max(...both.map((p) => p.lr)), inRange: true, reasons };
  const working = mine.filter(works).sort((a, b) => b.passMax.mean - a.passMax.mean || b.lr - a.lr);
  return { lr: working[0]?.lr ?? null, inRange: false, reasons };
}

const fixed = (x: number | null, digits: number) => (x === null ? "–" : x.toFixed(digits));

/** summary.md's calibration section for one dataset: the table per preset and step size, then the rule's pick. */
export function calibrationSection(points: readonly CalibrationPoint[], dataset: string): string[] {
  const mine = points.filter((p) => p.dataset === dataset);
  if (mine.length === 0) return [];
  const k = mine[0].passMax.k;
  const pick = pickStepSize(points, dataset);
  const scope = crossedName(mine.every((p) => p.pass1.scope === "bases"), "intervals");
  return [
    `### ${dataset}: calibration of the RL step`,
    "",
    `Each method at each step size (rl.lr): Pass@k after RL minus its own step 0 (paired by base, seed and problem; ` +
    `${scope}), and, over each run's last ${METRIC_WINDOW} steps, the KL to the reference (nats per token, the ` +
    "loss's estimator), the entropy (nats per token) and the share of incorrect rollouts with c > 0 (the policy more " +
    "confident in them than the reference) with their mean c. `plots/calibration_<dataset>.svg` draws the Δ columns.",
    "",
    `| method | lr | runs | ΔPass@1 | ΔPass@${k} | KL | entropy | errors with c > 0 | their mean c |`,
    "|---|---:|---:|---|---|---:|---:|---:|---:|",
    ...mine.map((p) =>
      `| ${p.preset} | ${p.lr} | ${p.runs} | ${withInterval(p.pass1)} | ${withInterval(p.passMax)} | ${
        fixed(p.kl, 4)
      } | ${fixed(p.entropy, 3)} | ${fixed(p.overconfFrac, 2)} | ${fixed(p.overconfMeanC, 2)} |`
    ),
    "",
    `**The rule** (fixed before the data): the largest step size whose ${CALIBRATION_RULE.preset} raises Pass@1 ` +
    `(interval excluding 0) and keeps Pass@${k} within ${CALIBRATION_RULE.maxBoundaryLoss} of its base on the mean ` +
    "(the range of GRPO − base at the largest k in the LLM tables: Zhu et al. 2025 Table 1, Yue et al. 2025 Table 2). " +
    pick.reasons.join("; ") + ". " +
    (pick.lr === null
      ? `No ${CALIBRATION_RULE.preset} setting raises Pass@1: the rule picks nothing.`
      : pick.inRange
      ? `**Chosen: lr ${pick.lr}.**`
      : `No setting meets both; the working one with the smallest boundary loss is taken: **lr ${pick.lr}**, and ` +
        "this world could not be brought into the LLM range on this grid."),
    "",
  ];
}

/**
 * calibration.csv: one row per calibration point (Δ and intervals in Pass@k units; NaN bounds: no interval),
 * `chosen` true on the step size the rule picks (per dataset).
 */
export function calibrationCsv(points: readonly CalibrationPoint[]): string {
  const num = (x: number | null) => (x === null ? "" : r6(x));
  const rows = points.map((p) => ({
    dataset: p.dataset,
    preset: p.preset,
    lr: p.lr,
    method: p.method,
    runs: p.runs,
    k_max: p.passMax.k,
    d_pass1: num(p.pass1.mean),
    d_pass1_lo: num(p.pass1.lo),
    d_pass1_hi: num(p.pass1.hi),
    d_passmax: num(p.passMax.mean),
    d_passmax_lo: num(p.passMax.lo),
    d_passmax_hi: num(p.passMax.hi),
    kl: num(p.kl),
    entropy: num(p.entropy),
    overconf_frac: num(p.overconfFrac),
    overconf_mean_c: num(p.overconfMeanC),
    chosen: p.preset === CALIBRATION_RULE.preset && pickStepSize(points, p.dataset).lr === p.lr,
  }));
  return toCsv(rows, Object.keys(rows[0] ?? {})); // written only with calibration points
}
