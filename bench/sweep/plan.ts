// `--dry-run`: the run matrix, what is already finished, and a time estimate from measured timings.
import type { RunConfig } from "../engines/engine.ts";
import { type EngineSpec, loadCostTable, loadPlanner } from "../engines/registry.ts";
import { baseSeed, type SweepConfig } from "./config.ts";
import { readStatus, runDir } from "../../common/run_folder.ts";
import { costKey, costModelPath, estimateFromCalibration, type StoredCalibration } from "./calibrate.ts";
import { makespan } from "./makespan.ts";
import { describeDesign, designOf } from "../../common/protocol.ts";

/** Seconds per RL step measured by finished first attempts in this sweep folder, or null when none has. */
export function measuredSecondsPerStep(out: string, runs: RunConfig[]): number | null {
  let seconds = 0, steps = 0;
  for (const run of runs) {
    const status = readStatus(runDir(out, run.runId));
    if (status?.state === "done" && status.seconds && (status.attempts ?? 1) === 1) {
      seconds += status.seconds;
      steps += (run.settings.rl as { steps: number }).steps;
    }
  }
  return steps > 0 ? seconds / steps : null;
}

function formatSeconds(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** The design in one line: bases (and how each is trained), seeds per base, and which bases are still to do. */
function designLine(sweep: SweepConfig, runs: RunConfig[], spec: EngineSpec): string {
  const bases = [...new Set(runs.map((r) => r.base ?? 0))].sort((a, b) => a - b);
  const where = spec.base(sweep.bases === undefined ? String(baseSeed(sweep, 0)) : "b");
  const shown = bases.length === (sweep.bases ?? 1) ? "" : ` (selected runs use bases ${bases.join(", ")})`;
  return `${describeDesign(designOf(sweep))}${where}${shown}`;
}

/**
 * The dry-run text: one line per run (state, method, ACE options), then the estimate, then (engines that launch
 * external jobs) the engine's cost table and, with `verbose`, each run's launch plan.
 */
export async function describePlan(
  sweep: SweepConfig,
  runs: RunConfig[],
  out: string,
  workers: number,
  spec: EngineSpec,
  calibrations: StoredCalibration[] = [],
  verbose = false,
): Promise<string> {
  const lines = [`sweep ${sweep.name}: ${runs.length} runs, engine ${sweep.engine}, out ${out}`];
  lines.push(designLine(sweep, runs, spec), "");
  const row = (cells: unknown[]) =>
    cells.map((c, i) => String(c).padEnd([36, 8, 9, 5, 5, 6, 0][i])).join(" ");
  lines.push(row(["run", "state", "preset", "base", "seed", "steps", "ace"]));
  const stepsOf = (run: RunConfig) => (run.settings.rl as { steps: number }).steps;
  const todoRuns: RunConfig[] = [];
  for (const run of runs) {
    const state = readStatus(runDir(out, run.runId))?.state ?? "new";
    const ace = run.algo.ace;
    const aceText = ace.enabled ? `α=${ace.alpha} φ=${ace.phi} c=${ace.aggregation}` : "off";
    lines.push(row([run.runId, state, run.preset, run.base ?? 0, run.seed, stepsOf(run), aceText]));
    if (state !== "done") todoRuns.push(run);
  }
  const perStep = measuredSecondsPerStep(out, runs);
  const todo = `${todoRuns.length} runs to do on ${workers} workers`;
  lines.push("");
  if (todoRuns.length === 0) lines.push("estimate: nothing to do (every run is done)");
  else if (perStep !== null) {
    const wall = makespan(todoRuns.map((run) => stepsOf(run) * perStep), workers);
    lines.push(
      `estimate: ${todo} ≈ ${formatSeconds(wall)} ` +
        `(${perStep.toFixed(2)} s/step measured by finished runs here; excludes training the base models)`,
    );
  } else if (calibrations.length) {
    const walls = calibrations.map((c) => estimateFromCalibration(c, todoRuns, workers));
    walls.sort((a, b) => a - b);
    const c = calibrations.at(-1)!;
    const spread = walls.length > 1
      ? `range ${formatSeconds(walls[0])}–${formatSeconds(walls.at(-1)!)} over ${walls.length} calibrations`
      : "one calibration, so no spread known";
    lines.push(
      `estimate: ${todo} ≈ ${formatSeconds(walls[walls.length >> 1])} ` +
        `(${spread}; from the stored cost model ${costModelPath()}, newest ${c.measuredAt.slice(0, 10)} on ` +
        `${c.cores} cores at load ${c.load.toFixed(1)}${c.backend ? `, backend ${c.backend}` : ""}: ` +
        `${c.stepSeconds.toFixed(2)} s/RL step, ` +
        `${c.evalSeconds.toFixed(1)} s/evaluation, ${c.prepareSeconds.toFixed(1)} s engine start` +
        (c.sftSteps === null ? "" : `, ${c.sftStepSeconds.toFixed(2)} s/SFT step`) +
        "; not measured on this sweep, so rough: response lengths change as training goes on, and parallel " +
        "workers share the cores; --calibrate measures again)",
    );
  } else {
    lines.push(
      `estimate: ${todo}; no timing measured yet in ${out} ` +
        (spec.local ? `nor a calibration of these settings (${costKey(sweep)}) in ${costModelPath()} ` : "") +
        `(run one first, e.g. --only '${runs[0].runId}', then --dry-run again` +
        (spec.local ? "; or --dry-run --calibrate: a few RL steps in a temp folder, stored)" : ")"),
    );
  }
  const planner = await loadPlanner(spec);
  if (planner) {
    const plans = runs.map((run) => planner(run, { name: sweep.name, rl: sweep.rl, dir: out }));
    // the engine's cost and memory table; each run's full overrides and script only with --verbose
    const table = await loadCostTable(spec);
    if (table) lines.push("", table(plans.map((p) => p.cost)));
    const targets = new Map<string, number>();
    for (const p of plans) if (p.target) targets.set(p.target, (targets.get(p.target) ?? 0) + 1);
    for (const [target, count] of targets) lines.push(`target: ${target} (${count} runs)`);
    const notes = new Map<string, number>();
    for (const p of plans) for (const n of p.notes ?? []) notes.set(n, (notes.get(n) ?? 0) + 1);
    for (const [note, count] of notes) lines.push(`note: ${note} (${count} runs)`);
    if (verbose) {
      plans.forEach((plan, k) => {
        lines.push("", `## ${runs[k].runId}`, "Hydra overrides:", ...plan.overrides.map((o) => `  ${o}`));
        lines.push("launch script:", plan.script.trimEnd(), "ray job:", plan.command);
      });
    }
  }
  return lines.join("\n");
}
