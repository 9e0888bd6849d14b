// A VERL run's launch plan: Hydra overrides, a runnable shell script, and the `ray job submit` command that runs
// the same script on a cluster. Pure text generation; `writeRunPlan` puts the files into the run folder.
import { chmodSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { atomicWrite } from "../../../common/fs.ts";
import { configHash } from "../../../common/hash.ts";
import type { RunConfig } from "../engine.ts";
import { entrypointFor, hydraOverrides, verlEnv } from "./overrides.ts";
import { resolveRecipe, validateVerlSettings, type VerlDataset, type VerlSettings } from "./recipes.ts";

/** The parts of a sweep a plan needs: its name and RL steps (else run.settings.rl.steps), and its folder. */
export interface VerlSweep {
  name: string;
  rl?: { steps: number };
  /** The sweep folder (default runs/<name>); relative paths resolve against the working directory. */
  dir?: string;
}

/** What `deno task sweep --dry-run` prints for a VERL run and what the run folder receives. */
export interface VerlRunPlan {
  /** Hydra overrides for the entrypoint, in order (the last ones win). */
  overrides: string[];
  /** The runnable launch script (bash), also `files["verl/launch.sh"]`. */
  script: string;
  /** One shell command that submits the launch script to the Ray cluster. */
  rayJobCommand: string;
  /** Alias of `rayJobCommand` (the sweep registry's LaunchPlan field). */
  command: string;
  /** Python module the script runs. */
  entrypoint: string;
  /** Files to write, keyed by path relative to the run folder. */
  files: Record<string, string>;
}

/** Folder of a run's VERL files, relative to the run folder; it is also the Ray job's working_dir. */
export const VERL_DIR = "verl";
const DEFAULT_RAY_ADDRESS = "http://127.0.0.1:8265";

/** Where a dataset's exported parquet lives under a sweep folder. */
export function verlDataPath(sweepDir: string, split: "train" | "test", dataset: VerlDataset): string {
  return join(sweepDir, "data", "verl", `${split}-${dataset}.parquet`);
}

/** Quote a word for POSIX sh (single quotes; embedded ones as '\''). Plain words are left bare for readability. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The plan of one VERL run: overrides from `run.algo` (the RL core's resolved preset) and `run.settings` (validated
 * here too), the launch script and the Ray job command. `env` supplies RAY_ADDRESS (default: the process env).
 */
export function verlRunPlan(
  run: RunConfig,
  sweep: VerlSweep,
  env: Record<string, string | undefined> = Deno.env.toObject(),
): VerlRunPlan {
  const settings = validateVerlSettings(run.settings, `runs/${run.runId}/config.json: settings`);
  const algo = run.algo;
  const family = algo.dynamicSampling?.enabled || run.preset.endsWith("dapo") ? "dapo" : "grpo";
  const recipe = resolveRecipe(family, settings);
  const localSweep = resolve(sweep.dir ?? join("runs", sweep.name));
  const clusterSweep = settings.clusterSweepDir ?? localSweep;
  if (!isAbsolute(clusterSweep)) {
    throw new RangeError(`settings.clusterSweepDir '${clusterSweep}' must be absolute`);
  }
  const clusterRunDir = join(clusterSweep, "runs", run.runId);
  const overrides = hydraOverrides(algo, {
    runId: run.runId,
    seed: run.seed,
    steps: sweep.rl?.steps ?? settings.rl?.steps ?? missingSteps(run.runId),
    eval: { n: run.eval.n, every: run.eval.every },
    settings,
    recipe,
    paths: {
      trainFiles: settings.trainDatasets.map((d) => verlDataPath(clusterSweep, "train", d)),
      valFiles: settings.valDatasets.map((d) => verlDataPath(clusterSweep, "test", d)),
      runDir: clusterRunDir,
    },
  });
  const entrypoint = entrypointFor(algo, settings);
  const script = launchScript(run, settings, entrypoint, overrides, verlEnv(algo, settings, clusterRunDir));
  const address = settings.rayAddress ?? env.RAY_ADDRESS ?? null;
  const rayJobCommand = rayJobSubmit(join(localSweep, "runs", run.runId, VERL_DIR), address, run.runId);
  return {
    overrides,
    script,
    rayJobCommand,
    command: rayJobCommand,
    entrypoint,
    files: {
      [`${VERL_DIR}/launch.sh`]: script,
      [`${VERL_DIR}/overrides.txt`]: overrides.join("\n") + "\n",
      [`${VERL_DIR}/ray_job.sh`]: rayJobScript(rayJobCommand),
      [`${VERL_DIR}/ace_verl.py`]: aceModuleSource(),
    },
  };
}

function missingSteps(runId: string): never {
  throw new RangeError(`runs/${runId}: no RL step count (sweep rl.steps)`);
}

/** The sweep registry's name for `verlRunPlan`. */
export const planRun = verlRunPlan;

function launchScript(
  run: RunConfig,
  settings: VerlSettings,
  entrypoint: string,
  overrides: string[],
  vars: Record<string, string>,
): string {
  const env = Object.entries(vars).map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join("");
  const args = overrides.map((o) => `  ${shellQuote(o)}`).join(" \\\n");
  return `#!/usr/bin/env bash
# acebench VERL run ${run.runId}: method ${run.method} (preset ${run.preset}), seed ${run.seed}, algo ${
    configHash(run.algo)
  }.
# Generated by acebench (bench/engines/verl); regenerate rather than edit. Runs locally, or on a cluster
# through ray_job.sh (which uploads this folder as the job's working_dir).
set -euo pipefail
HERE="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
# ace_verl.py sits next to this script; Ray workers inherit PYTHONPATH (local) or get working_dir (ray job).
export PYTHONPATH="$HERE\${PYTHONPATH:+:$PYTHONPATH}"
${env}exec ${shellQuote(settings.python)} -m ${entrypoint} \\
${args}
`;
}

function rayJobSubmit(verlDir: string, address: string | null, runId: string): string {
  const addr = address === null ? `"\${RAY_ADDRESS:-${DEFAULT_RAY_ADDRESS}}"` : shellQuote(address);
  return `ray job submit --address ${addr} --submission-id "acebench-${runId}-$(date +%Y%m%d-%H%M%S)" ` +
    `--working-dir ${shellQuote(verlDir)} -- bash launch.sh`;
}

function rayJobScript(command: string): string {
  return `#!/usr/bin/env bash
# Submit launch.sh to the Ray cluster and follow its logs (exit status = the job's).
set -euo pipefail
${command}
`;
}

/** The ACE module's source, copied into each run folder so the Ray job carries it. */
export function aceModuleSource(): string {
  return readFileSync(new URL("./ace_verl.py", import.meta.url), "utf8");
}

/** Write the plan's files into the run folder atomically (scripts made executable). */
export function writeRunPlan(plan: VerlRunPlan, runDir: string): void {
  for (const [rel, content] of Object.entries(plan.files)) {
    const path = join(runDir, rel);
    atomicWrite(path, content);
    if (rel.endsWith(".sh")) chmodSync(path, 0o755);
  }
}
