// `deno task sweep`: run a training sweep (resumable, parallel), then write its report.
import { cpus } from "node:os";
import { basename, join } from "node:path";
import {
  bool,
  flagLines,
  type FlagTable,
  num,
  parseTable,
  shellQuote,
  str,
  UsageError,
} from "../common/args.ts";
import { lockFolder } from "../common/lock.ts";
import { removeDuplicates } from "../common/run_folder.ts";
import {
  calibrate,
  checkSweepConfig,
  costKey,
  costModelPath,
  describePlan,
  engineSpec,
  expandRuns,
  filterRuns,
  presetPath,
  readSweepConfig,
  runSweep,
  smokeConfig,
  storeCalibration,
  storedCalibrations,
  writeSweepJson,
} from "../bench/sweep/mod.ts";
import { blockingIssues, issueLines, writeReport } from "../reports/mod.ts";
import { runFolders } from "../reports/ingest.ts";

/** The flags of `deno task sweep`, declared once for parsing, --help and validation. */
export const FLAGS = {
  config: str(
    "FILE",
    "sweep config (JSON, see bench/sweep/sweep.schema.json; a recorded sweep.json works too)",
  ),
  preset: str("NAME", "a config shipped in bench/configs/ (default: default)"),
  out: str("DIR", "sweep folder (default: runs/<name>)"),
  only: str(
    "PATTERN",
    "run only these runs: a glob over run ids ('ace-*', '*_b3_*'), else one run id or method",
  ),
  workers: num("parallel runs (default: cores)", { default: cpus().length, min: 1, max: 256 }),
  "dry-run": bool(
    "print the design (bases, seeds per base), the run matrix, what is done, and a time estimate (VERL: " +
      "a cost and memory table); trains and writes nothing. With no finished run in the folder the estimate " +
      "comes from the stored cost model (bench/sweep/costs.json, $ACEBENCH_COST_MODEL), with its spread",
  ),
  calibrate: bool(
    "with --dry-run: first measure these settings (a few RL steps of one run, and a short SFT base " +
      "model for tfjs, in a temp folder) and store the measurement in the cost model",
  ),
  verbose: bool("with --dry-run on VERL configs: also each run's Hydra overrides, launch script and ray job"),
  "no-report": bool("skip writing the report at the end"),
  smoke: bool(
    "the config shrunk by its engine's registry entry (2 bases or seeds, 2 RL steps, n = 4, a tiny tfjs " +
      "model; VERL only plans) under the name <name>-smoke: checks that a config runs end to end; its numbers " +
      "are no result",
  ),
  repair: bool(
    "first drop duplicate eval samples and metrics lines (left by two sweeps writing one folder before " +
      "the lock held) from every run, saying how many",
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task sweep`. */
export const usage = `usage: deno task sweep [--config FILE | --preset NAME] [flags]

Runs every method × ACE-grid point × base model × seed of a sweep config in parallel workers (first each
base model the runs start from: a tfjs SFT per base), then writes the report (passk.csv, summary.md, plots/)
into the sweep folder. Re-running the same command skips finished runs and resumes unfinished ones (and an
unfinished SFT) from their checkpoints; a diverged run is marked failed and the sweep goes on.
With no flags it runs the embedded default (bench/configs/default.json: tfjs engine, 16 base models, grpo,
ace-grpo, dapo, ace-dapo × 1 seed per base on 320 problems, n = 32). The report exits 1 on incomplete data unless runs failed (then
the exit code is already 1) or --only selected a subset.

${flagLines(FLAGS)}

examples:
  deno task sweep --preset ci-tabular --out runs/ci-tabular
  deno task sweep --dry-run
  deno task sweep --only 'ace-grpo*'`;

/** Entry point for `deno task sweep`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  if (values.config && values.preset) throw new UsageError("give --config or --preset, not both");
  const path = values.config ?? presetPath(values.preset ?? "default");
  const read = readSweepConfig(path);
  const spec = engineSpec(read.engine);
  const sweep = values.smoke ? checkSweepConfig(smokeConfig(read, spec), `${path} (--smoke)`) : read;
  if (values.smoke && spec.smoke.plansOnly) {
    console.error(`sweep ${sweep.name}: --smoke on engine ${spec.name} only plans; nothing is launched`);
  }
  const all = expandRuns(sweep);
  const runs = filterRuns(all, values.only);
  if (runs.length === 0) {
    throw new UsageError(`--only '${values.only}' matches none of: ${all.map((r) => r.runId).join(", ")}`);
  }
  const out = values.out ?? join("runs", sweep.name);
  if (values.calibrate && !(values["dry-run"] && spec.local)) {
    throw new UsageError(`--calibrate goes with --dry-run, on an engine that trains here (not ${spec.name})`);
  }
  if (values["dry-run"]) {
    if (values.calibrate) {
      console.error(`sweep ${sweep.name}: calibrating (a few RL steps of one run in a temp folder)…`);
      storeCalibration(sweep, await calibrate(sweep, spec));
      console.error(`sweep ${sweep.name}: calibration stored in ${costModelPath()} (${costKey(sweep)})`);
    }
    const stored = storedCalibrations(sweep);
    console.log(await describePlan(sweep, runs, out, values.workers, spec, stored, values.verbose));
    return 0;
  }
  // One writer per folder: a second sweep on `out` exits 2 here instead of retraining finished runs.
  const command = ["deno task sweep", ...args.map(shellQuote)].join(" ");
  const lock = lockFolder(out, { command, flag: "out" });
  try {
    if (values.repair) repairRuns(out);
    return await sweepLocked(sweep, all, runs, out, values.workers, values["no-report"]);
  } finally {
    lock.release();
  }
}

/** `--repair`: drop duplicate eval samples and metrics lines from every run folder of the sweep, saying how many. */
function repairRuns(out: string): void {
  let evalSamples = 0, metricsLines = 0;
  for (const run of runFolders(out)) {
    const dropped = removeDuplicates(run);
    if (dropped.evalSamples + dropped.metricsLines === 0) continue;
    console.error(
      `--repair: ${basename(run)}: dropped ${dropped.evalSamples} duplicate eval samples, ` +
        `${dropped.metricsLines} duplicate metrics lines`,
    );
    evalSamples += dropped.evalSamples;
    metricsLines += dropped.metricsLines;
  }
  console.error(
    `--repair: dropped ${evalSamples} duplicate eval samples, ${metricsLines} duplicate metrics lines`,
  );
}

async function sweepLocked(
  sweep: ReturnType<typeof readSweepConfig>,
  all: ReturnType<typeof expandRuns>,
  runs: ReturnType<typeof expandRuns>,
  out: string,
  workers: number,
  noReport: boolean | undefined,
): Promise<number> {
  writeSweepJson(out, sweep, all);
  const started = performance.now();
  const outcome = await runSweep(sweep, runs, { out, workers });
  const minutes = ((performance.now() - started) / 60000).toFixed(1);
  console.error(
    `sweep ${sweep.name}: ${outcome.done.length} done, ${outcome.planned.length} planned, ` +
      `${outcome.skipped.length} already done, ` +
      `${outcome.failed.length} failed in ${minutes} min (${out})`,
  );
  for (const f of outcome.failed) console.error(`  failed ${f.runId}: ${f.reason}`);
  if (outcome.interrupted) {
    console.error(`sweep ${sweep.name}: interrupted; run the same command again to resume`);
    return 130;
  }
  if (outcome.done.length + outcome.skipped.length === 0) {
    console.error(`sweep ${sweep.name}: no finished run, so no report`);
  } else if (!noReport) {
    const { written, issues, answers } = await writeReport(out);
    for (const path of written) console.error(`wrote ${path}`);
    // Failed runs already make the exit code 1; runs left out by --only are not an error of this sweep.
    const partial = outcome.failed.length > 0 || runs.length < all.length;
    if (issues.length && !partial) {
      console.error(`sweep ${sweep.name}: incomplete data, cells marked † in the summary:`);
      for (const line of issueLines(issues, (i) => `${i.runId}: ${i.message}`)) console.error(`  ${line}`);
      // A few ungraded answers (below the report's default share) are marked, not an error.
      if (blockingIssues(issues, answers).blocking.length) return 1;
    }
  }
  return outcome.failed.length ? 1 : 0;
}
