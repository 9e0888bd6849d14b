// A time estimate for a local sweep (tabular, tfjs) on a fresh folder, before any of its runs has finished, from
// the stored cost model (costs.json: calibrations by engine, backend and settings, with when and where each ran,
// stored by `deno task sweep --dry-run --calibrate`); the estimate scales each measured part to the config.
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { exists, readJson, writeJson } from "../../common/fs.ts";
import { configHash } from "../../common/hash.ts";
import { readMetrics, readRunConfig, readStatus, runDir } from "../../common/run_folder.ts";
import type { RunConfig } from "../engines/engine.ts";
import type { EngineSpec } from "../engines/registry.ts";
import { expandRuns, type SweepConfig } from "./config.ts";
import { makespan } from "./makespan.ts";
import { withOverrides } from "../core/mod.ts";
import { runSweep } from "./runner.ts";

/**
 * What `calibrate` measured, in seconds: per RL step (sampling + updates) over its `steps`, per evaluation, the
 * engine's prepare without SFT and per SFT step (`sftSteps`: null when the engine trains no base), its wall time,
 * and the backend where the engine records one (tfjs: what `auto` chose).
 */
export type Calibration = Awaited<ReturnType<typeof calibrate>>;

/** A calibration as the cost model stores it: what it measured, and when and where (cores, 1-min load average). */
export type StoredCalibration = Calibration & { measuredAt: string; cores: number; load: number };

/** Calibrations kept per cost key (the newest): their spread is the estimate's uncertainty. */
const KEEP = 5;

/** The stored cost model: $ACEBENCH_COST_MODEL, else bench/sweep/costs.json (the measurements shipped). */
export function costModelPath(): string {
  return Deno.env.get("ACEBENCH_COST_MODEL") || new URL("./costs.json", import.meta.url).pathname;
}

/**
 * What a calibration's figures depend on: engine, backend, and a hash of the settings without their step counts
 * (a calibration times steps, so their number does not matter), eval.n and the first method (the one timed).
 */
export function costKey(sweep: SweepConfig): string {
  const settings = structuredClone(sweep.settings) as { rl?: { steps?: number }; sft?: { steps?: number } };
  delete settings.rl?.steps;
  delete settings.sft?.steps;
  const { preset, overrides } = sweep.methods[0];
  const hash = configHash({ settings, n: sweep.eval.n, method: { preset, overrides } });
  return `${sweep.engine}/${String(sweep.settings.backend ?? "-")}/${hash}`;
}

/** The stored calibrations of a sweep's cost key, oldest first ([] when none or no cost model file). */
export function storedCalibrations(sweep: SweepConfig, path = costModelPath()): StoredCalibration[] {
  return exists(path) ? readJson<Record<string, StoredCalibration[]>>(path)[costKey(sweep)] ?? [] : [];
}

/** Add a calibration of `sweep` to the cost model, stamped with when and where; the newest KEEP per key stay. */
export function storeCalibration(sweep: SweepConfig, cal: Calibration, path = costModelPath()): void {
  const model = exists(path) ? readJson<Record<string, StoredCalibration[]>>(path) : {};
  const entry = { ...cal, measuredAt: new Date().toISOString(), cores: cpus().length, load: loadavg()[0] };
  const key = costKey(sweep);
  model[key] = [...(model[key] ?? []), entry].slice(-KEEP);
  writeJson(path, Object.fromEntries(Object.entries(model).sort(([a], [b]) => a < b ? -1 : 1)));
}

/** RL steps of the calibration run, and SFT steps of its short base model. */
const CAL_STEPS = 3, CAL_SFT_STEPS = 20;

/** SFT steps of a sweep's engine settings (null when the engine has no SFT base model). */
function sftStepsOf(run: RunConfig): number | null {
  const sft = (run.settings as { sft?: { steps?: number } }).sft;
  return typeof sft?.steps === "number" ? sft.steps : null;
}

/** Evaluations of a run of `steps` RL steps evaluated every `every`: step 0, each multiple, and the last. */
export function evaluations(steps: number, every: number): number {
  if (!(every > 0)) return 2;
  return 1 + Math.floor(steps / every) + (steps % every === 0 ? 0 : 1);
}

/** The sweep cut to one run of `steps` RL steps (evaluated at 0 and the end) and `sft` SFT steps. */
function calibrationSweep(sweep: SweepConfig, steps: number, sft: number | null): SweepConfig {
  return {
    ...sweep,
    name: `${sweep.name}-calibration`,
    ...(sweep.bases === undefined ? { seeds: [(sweep.seeds ?? [0])[0]] } : { bases: 1, seedsPerBase: 1 }),
    methods: [sweep.methods[0]],
    grid: undefined,
    compare: undefined,
    settings: sft === null ? sweep.settings : withOverrides(sweep.settings, { sft: { steps: sft } }),
    rl: { ...sweep.rl, steps },
    eval: { ...sweep.eval, every: steps },
  };
}

/** Train the calibration sweep in `dir`; its wall seconds, the run's seconds and its mean RL-step seconds. */
async function timeOnce(sweep: SweepConfig, dir: string, spec: EngineSpec) {
  const [run] = expandRuns(sweep);
  const t0 = performance.now();
  const outcome = await runSweep(sweep, [run], { out: dir, workers: 1, engine: spec });
  const wall = (performance.now() - t0) / 1000;
  if (outcome.done.length !== 1) {
    const why = outcome.failed[0]?.reason ?? (outcome.interrupted ? "interrupted" : "not finished");
    throw new Error(`calibration run ${run.runId} failed: ${why}`);
  }
  const folder = runDir(dir, run.runId);
  const metrics = readMetrics<{ sample_s?: number; update_s?: number }>(folder);
  const steps = metrics.map((m) => (m.sample_s ?? 0) + (m.update_s ?? 0));
  const stepSeconds = steps.reduce((a, b) => a + b, 0) / Math.max(1, steps.length);
  const backend = readRunConfig(folder)?.backendDecision?.backend;
  return { wall, runSeconds: readStatus(folder)?.seconds ?? wall, stepSeconds, steps: steps.length, backend };
}

/**
 * Calibrate a local sweep: one run of CAL_STEPS RL steps in a temp folder (removed after), and for an engine with
 * an SFT base model a second one with no SFT step, so prepare = fixed + per-SFT-step. Throws when a calibration
 * run fails (naming it).
 */
export async function calibrate(sweep: SweepConfig, spec: EngineSpec) {
  const sft = sftStepsOf(expandRuns(sweep)[0]);
  const dir = Deno.makeTempDirSync({ prefix: "acebench-calibration-" });
  const t0 = performance.now();
  try {
    const calSft = sft === null ? null : Math.min(sft, CAL_SFT_STEPS);
    const main = await timeOnce(calibrationSweep(sweep, CAL_STEPS, calSft), join(dir, "a"), spec);
    let prepareSeconds = main.wall - main.runSeconds, sftStepSeconds = 0;
    if (calSft !== null && calSft > 0) {
      const bare = await timeOnce(calibrationSweep(sweep, 1, 0), join(dir, "b"), spec);
      const fixed = bare.wall - bare.runSeconds;
      sftStepSeconds = Math.max(0, (prepareSeconds - fixed) / calSft);
      prepareSeconds = fixed;
    }
    const evalSeconds = Math.max(0, main.runSeconds - main.steps * main.stepSeconds) /
      evaluations(CAL_STEPS, CAL_STEPS);
    return {
      steps: main.steps,
      stepSeconds: main.stepSeconds,
      evalSeconds,
      prepareSeconds,
      sftStepSeconds,
      sftSteps: calSft,
      wall: (performance.now() - t0) / 1000,
      ...(main.backend ? { backend: main.backend } : {}),
    };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** Seconds `runs` would take by `cal`: prepare (fixed + per SFT step), then the runs on `workers` lanes. */
export function estimateFromCalibration(
  cal: Calibration,
  runs: readonly RunConfig[],
  workers: number,
): number {
  const sft = runs.length ? sftStepsOf(runs[0]) ?? 0 : 0;
  const jobs = runs.map((run) => {
    const steps = (run.settings.rl as { steps: number }).steps;
    return steps * cal.stepSeconds + evaluations(steps, run.eval.every) * cal.evalSeconds;
  });
  return cal.prepareSeconds + cal.sftStepSeconds * sft + makespan(jobs, workers);
}
