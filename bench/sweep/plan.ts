// `--dry-run`: the run matrix, what is already finished, and a time estimate from measured timings.
import type { RunConfig } from "../engines/engine.ts";
import { type EngineSpec, loadPlanner } from "../engines/registry.ts";
import { baseSeed, type SweepConfig } from "./config.ts";
import { readStatus, runDir } from "../../common/run_folder.ts";

/** Seconds per RL step measured by finished runs in this sweep folder, or null when none has finished. */
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

/** Wall time of `jobs` (seconds each) on `workers` lanes, greedily longest-first (what the runner achieves). */
export function makespan(jobs: number[], workers: number): number {
  const lanes = new Array(Math.max(1, workers)).fill(0);
  for (const job of [...jobs].sort((a, b) => b - a)) {
    const i = lanes.indexOf(Math.min(...lanes));
    lanes[i] += job;
  }
  return Math.max(...lanes);
}

function formatSeconds(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** The design in one line: bases (and how each is trained), seeds per base, and which bases are still to do. */
export function designLine(sweep: SweepConfig, runs: RunConfig[]): string {
  const bases = [...new Set(runs.map((r) => r.base ?? 0))].sort((a, b) => a - b);
  const perBase = sweep.bases === undefined
    ? `one base model (base 0), seeds ${sweep.seeds?.join(", ")}`
    : `${sweep.bases} base model(s), ${sweep.seedsPerBase ?? 1} seed(s) per base`;
  const where = sweep.engine === "tfjs"
    ? `; base b is an SFT model trained from seed ${
      sweep.bases === undefined ? baseSeed(sweep, 0) : "b"
    } under <out>/base/<b>/`
    : sweep.engine === "tabular"
    ? "; base b is tabular world worldSeed + b"
    : "; the base is the pretrained model";
  const shown = bases.length === (sweep.bases ?? 1) ? "" : ` (selected runs use bases ${bases.join(", ")})`;
  return `design: ${perBase}${where}${shown}`;
}

/** The dry-run text: one line per run (state, method, ACE options), then the estimate, then launch plans. */
export async function describePlan(
  sweep: SweepConfig,
  runs: RunConfig[],
  out: string,
  workers: number,
  spec: EngineSpec,
): Promise<string> {
  const lines = [`sweep ${sweep.name}: ${runs.length} runs, engine ${sweep.engine}, out ${out}`];
  lines.push(designLine(sweep, runs), "");
  lines.push(`${"run".padEnd(36)} ${"state".padEnd(8)} ${"preset".padEnd(9)} base  seed  steps  ace`);
  const todo: number[] = [];
  for (const run of runs) {
    const state = readStatus(runDir(out, run.runId))?.state ?? "new";
    const steps = (run.settings.rl as { steps: number }).steps;
    const ace = run.algo.ace;
    const aceText = ace.enabled ? `α=${ace.alpha} φ=${ace.phi} c=${ace.aggregation}` : "off";
    lines.push(
      `${run.runId.padEnd(36)} ${state.padEnd(8)} ${run.preset.padEnd(9)} ${
        String(run.base ?? 0).padEnd(5)
      } ${String(run.seed).padEnd(5)} ${String(steps).padEnd(6)} ${aceText}`,
    );
    if (state !== "done") todo.push(steps);
  }
  const perStep = measuredSecondsPerStep(out, runs);
  lines.push("");
  if (todo.length === 0) lines.push("estimate: nothing to do (every run is done)");
  else if (perStep === null) {
    lines.push(
      `estimate: ${todo.length} runs to do on ${workers} workers; no timing measured yet in ${out} ` +
        `(run one first, e.g. --only '${runs[0].runId}', then --dry-run again)`,
    );
  } else {
    const wall = makespan(todo.map((steps) => steps * perStep), workers);
    lines.push(
      `estimate: ${todo.length} runs to do on ${workers} workers ≈ ${formatSeconds(wall)} ` +
        `(${perStep.toFixed(2)} s/step measured by finished runs here; excludes training the base models)`,
    );
  }
  const planner = spec.name === "verl" ? await loadPlanner(spec) : null;
  if (planner) {
    for (const run of runs) {
      const plan = planner(run, { name: sweep.name, rl: sweep.rl, dir: out });
      lines.push("", `## ${run.runId}`, "Hydra overrides:", ...plan.overrides.map((o) => `  ${o}`));
      lines.push("launch script:", plan.script.trimEnd(), "ray job:", plan.command);
    }
  }
  return lines.join("\n");
}
