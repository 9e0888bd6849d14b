// A VERL run's launch plan: Hydra overrides, a runnable shell script, and the `ray job submit` command that runs
// the same script on a cluster. Pure text generation; `writeRunPlan` puts the files into the run folder.
import { chmodSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { atomicWrite } from "../../../common/fs.ts";
import { configHash } from "../../../common/hash.ts";
import { shellQuote } from "../../../common/args.ts";
import { RUN_FILES } from "../../../common/run_folder.ts";
import type { RunConfig } from "../engine.ts";
import type { LaunchPlan, PlanSweep } from "../registry.ts";
import { entrypointFor, REWARD_MODULE, verlEnv, versionedOverrides, workerPythonPath } from "./overrides.ts";
import { runCost } from "./cost.ts";
import { GRADER_SCRIPT, graderScript } from "./reward.ts";
import { VERL_METRICS_DIR } from "./verl_metrics.ts";
import { resolveRecipe, validateVerlSettings, type VerlDataset, type VerlSettings } from "./recipes.ts";
import { MAIN_DAPO, type VerlRelease, verlRelease } from "./versions.ts";

/** Folder of a run's VERL files, relative to the run folder; it is also the Ray job's working_dir. */
export const VERL_DIR = "verl";
/** Ray's dashboard address when neither settings.rayAddress nor $RAY_ADDRESS names one. */
export const DEFAULT_RAY_ADDRESS = "http://127.0.0.1:8265";

/** Where a dataset's exported parquet lives under a sweep folder. */
export function verlDataPath(sweepDir: string, split: "train" | "test", dataset: VerlDataset): string {
  return join(sweepDir, "data", "verl", `${split}-${dataset}.parquet`);
}

/**
 * The plan of one VERL run from `run.algo` (the RL core's resolved preset) and `run.settings` (validated here):
 * overrides, launch script, Ray job command. `env` supplies RAY_ADDRESS and VERL_ROOT (default: the process env).
 */
export function verlRunPlan(
  run: RunConfig,
  sweep: PlanSweep,
  env: Record<string, string | undefined> = Deno.env.toObject(),
) {
  const settings = validateVerlSettings(run.settings, `runs/${run.runId}/${RUN_FILES.config}: settings`);
  const algo = run.algo;
  // The entry point follows the resolved algorithm (dynamic sampling needs DAPO's trainer), never the preset name.
  const family = algo.dynamicSampling?.enabled ? "dapo" : "grpo";
  const recipe = resolveRecipe(family, settings);
  // both end up inside JSON (ray_job.sh) and quoted Hydra values (the workers' PYTHONPATH, the run's paths)
  const checkPath = (field: string, path: string) => {
    if (!isAbsolute(path) || /["'\\]/.test(path)) {
      throw new RangeError(`${field} '${path}' must be absolute, without quotes or \\`);
    }
    return path;
  };
  const clusterSweep = checkPath("settings.clusterSweepDir", settings.clusterSweepDir ?? resolve(sweep.dir));
  const clusterRunDir = join(clusterSweep, "runs", run.runId);
  const root = settings.verlRoot ?? env.VERL_ROOT ?? null;
  const verlRoot = root === null ? null : checkPath("settings.verlRoot (or VERL_ROOT)", root);
  const release = verlRelease(settings.verlVersion);
  const steps = sweep.rl.steps;
  const cost = runCost({
    runId: run.runId,
    settings,
    recipe,
    steps,
    eval: run.eval,
    saveFreq: settings.saveFreq,
    dynamicSampling: algo.dynamicSampling?.enabled ?? false,
  });
  const { overrides, dropped } = versionedOverrides(algo, {
    runId: run.runId,
    seed: run.seed,
    steps,
    eval: { n: run.eval.n, every: run.eval.every },
    memory: cost.memory,
    settings,
    recipe,
    paths: {
      trainFiles: settings.trainDatasets.map((d) => verlDataPath(clusterSweep, "train", d)),
      valFiles: settings.valDatasets.map((d) => verlDataPath(clusterSweep, "test", d)),
      runDir: clusterRunDir,
      aceDir: join(clusterRunDir, VERL_DIR),
    },
  });
  const entrypoint = entrypointFor(algo, settings);
  const script = launchScript(
    run,
    { settings, entrypoint, overrides, verlRoot, release, dropped },
    verlEnv(algo, settings, clusterRunDir, recipe),
  );
  const address = settings.rayAddress ?? env.RAY_ADDRESS ?? null;
  const rayJobCommand = rayJobSubmit(join(clusterRunDir, VERL_DIR, "launch.sh"), address, run.runId);
  return {
    overrides,
    script,
    // `command` by the name the docs give it
    rayJobCommand,
    command: rayJobCommand,
    entrypoint,
    verlVersion: release.version,
    target: `verl v${release.version}`,
    notes: dropped.map((d) => `not expressible in verl v${release.version}, so not passed: ${d}`),
    // the checkout launch.sh runs from (settings.verlRoot, else VERL_ROOT when planned); null: $VERL_ROOT at launch
    verlRoot,
    cost,
    // data.max_prompt_length: VERL drops validation prompts longer than this (prompt_filter.ts)
    maxPromptLength: recipe.maxPromptLength,
    // the run folder as the cluster sees it (settings.clusterSweepDir, else the local absolute path)
    clusterRunDir,
    // by path relative to the run folder
    files: {
      [`${VERL_DIR}/launch.sh`]: script,
      [`${VERL_DIR}/overrides.txt`]: overrides.join("\n") + "\n",
      [`${VERL_DIR}/ray_job.sh`]: rayJobScript(rayJobCommand, verlRoot, release),
      // the Python modules, copied so that the Ray job carries them and VERL loads them from the run folder
      [`${VERL_DIR}/ace_verl.py`]: readFileSync(new URL("./ace_verl.py", import.meta.url), "utf8"),
      [`${VERL_DIR}/${REWARD_MODULE}`]: readFileSync(new URL(`./${REWARD_MODULE}`, import.meta.url), "utf8"),
      [`${VERL_DIR}/${GRADER_SCRIPT}`]: graderScript(settings),
    },
  };
}

/**
 * What `deno task sweep --dry-run` prints for a VERL run and what its folder receives: Hydra overrides in order
 * (the last ones win), launch.sh as `script`, and `command` submitting it to the Ray cluster.
 */
export type VerlRunPlan = ReturnType<typeof verlRunPlan>;

/** The sweep registry's name for `verlRunPlan`. */
export const planRun: (run: RunConfig, sweep: PlanSweep) => LaunchPlan = verlRunPlan;

/** Sets VERL_ROOT to the planned checkout, else from the environment (a clear error when unset). */
function verlRootLines(verlRoot: string | null, release: VerlRelease): string {
  const value = verlRoot === null
    ? `"\${VERL_ROOT:?set VERL_ROOT to a verl v${release.version} checkout (or settings.verlRoot)}"`
    : shellQuote(verlRoot);
  return `VERL_ROOT=${value}\nexport VERL_ROOT\n`;
}

/** Bash that stops unless `python` imports the release's verl (a source checkout of a tag reports x.y.z.dev). */
function versionCheck(python: string, entrypoint: string, release: VerlRelease): string {
  const dapo = entrypoint === MAIN_DAPO
    ? `[ -f recipe/dapo/main_dapo.py ] || { echo "launch.sh: $VERL_ROOT has no recipe/dapo/main_dapo.py" >&2; exit 1; }\n`
    : "";
  return `found="$(${shellQuote(python)} -c 'import verl; print(verl.__version__)')" || {
  echo "launch.sh: cannot import verl from $VERL_ROOT" >&2; exit 1; }
case "$found" in
  ${release.reports.join(" | ")}) ;;
  *) echo "launch.sh: verl $found in $VERL_ROOT; these overrides are for verl ${release.version} (key names differ between versions)" >&2
     exit 1 ;;
esac
${dapo}`;
}

function launchScript(
  run: RunConfig,
  plan: {
    settings: VerlSettings;
    entrypoint: string;
    overrides: string[];
    verlRoot: string | null;
    release: VerlRelease;
    dropped: string[];
  },
  vars: Record<string, string>,
): string {
  const { settings, entrypoint, overrides, verlRoot, release, dropped } = plan;
  const env = Object.entries(vars).map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join("");
  // Workers get launch.sh's PYTHONPATH (this folder, the checkout, then the caller's own entries), extended, not
  // replaced; and VERL's file logger path, new per start (the logger truncates its file).
  const args = [
    ...overrides.map(shellQuote),
    `"${workerPythonPath("$PYTHONPATH")}"`,
    `"++ray_kwargs.ray_init.runtime_env.env_vars.VERL_FILE_LOGGER_PATH='$VERL_FILE_LOGGER_PATH'"`,
  ].map((o) => `  ${o}`).join(" \\\n");
  const algo = configHash(run.algo);
  const python = shellQuote(settings.python);
  const root = verlRootLines(verlRoot, release);
  const check = versionCheck(settings.python, entrypoint, release);
  // header lines naming what the release cannot take from the algorithm
  const droppedLines = dropped.length === 0
    ? ""
    : `# Not expressible in verl v${release.version}, so not passed:\n` +
      dropped.map((d) => `#   ${d}\n`).join("");
  // VERL's file logger writes per-step metrics to <run>/verl_metrics/<start time>-<pid>.jsonl (ingest merges them)
  return `#!/usr/bin/env bash
# acebench VERL run ${run.runId}: method ${run.method} (preset ${run.preset}), seed ${run.seed}, algo ${algo}.
# Runs verl v${release.version} (${entrypoint}) from ${verlRoot ?? "$VERL_ROOT"}.
# Generated by acebench (bench/engines/verl); regenerate rather than edit. Runs locally, or on a cluster
# through ray_job.sh.
${droppedLines}set -euo pipefail
HERE="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
${root}# DAPO's recipe config loads file://verl/trainer/config and imports \`recipe\`: both relative to the checkout.
cd "$VERL_ROOT"
# ace_verl.py sits next to this script; Ray workers get the same path through the runtime env (last override).
export PYTHONPATH="$HERE:$VERL_ROOT\${PYTHONPATH:+:$PYTHONPATH}"
${check}${env}mkdir -p "$(dirname "$HERE")/${VERL_METRICS_DIR}"
export VERL_FILE_LOGGER_PATH="$(dirname "$HERE")/${VERL_METRICS_DIR}/$(date -u +%Y%m%dT%H%M%SZ)-$$.jsonl"
exec ${python} -m ${entrypoint} \\
${args}
`;
}

function rayJobSubmit(launchPath: string, address: string | null, runId: string): string {
  const addr = address === null ? `"\${RAY_ADDRESS:-${DEFAULT_RAY_ADDRESS}}"` : shellQuote(address);
  return `ray job submit --address ${addr} --submission-id "acebench-${runId}-$(date +%Y%m%d-%H%M%S)" ` +
    `--working-dir "$VERL_ROOT" --runtime-env-json "{\\"excludes\\": [\\".git\\"], \\"env_vars\\": {\\"VERL_ROOT\\": \\"$VERL_ROOT\\"}}" ` +
    `-- bash ${shellQuote(launchPath)}`;
}

function rayJobScript(command: string, verlRoot: string | null, release: VerlRelease): string {
  return `#!/usr/bin/env bash
# Submit launch.sh to the Ray cluster (the VERL checkout as the job's working dir) and follow its logs
# (exit status = the job's). The run folder must be on a filesystem every node sees.
set -euo pipefail
${verlRootLines(verlRoot, release)}${command}
`;
}

/** Write the plan's files into the run folder atomically (scripts made executable). */
export function writeRunPlan(plan: VerlRunPlan, runDir: string): void {
  for (const [rel, content] of Object.entries(plan.files)) {
    const path = join(runDir, rel);
    atomicWrite(path, content);
    if (rel.endsWith(".sh")) chmodSync(path, 0o755);
  }
}
