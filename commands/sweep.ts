// `deno task sweep`: run a training sweep (resumable, parallel), then write its report.
import { cpus } from "node:os";
import { join } from "node:path";
import { parseFlags, parseNumber, UsageError } from "../common/args.ts";
import { exists } from "../common/fs.ts";
import { lockFolder } from "../common/lock.ts";
import { readStatus, removeDuplicates, runDir } from "../common/run_folder.ts";
import {
  calibrate,
  checkSweepConfig,
  describePlan,
  engineSpec,
  expandRuns,
  filterRuns,
  LOCAL_ENGINES,
  measuredSecondsPerStep,
  presetPath,
  readSweepConfig,
  runSweep,
  smokeConfig,
  smokeNote,
  writeSweepJson,
} from "../bench/sweep/mod.ts";
import { blockingIssues, issueLines, writeReportChecked } from "../reports/mod.ts";

/** Usage text for `deno task sweep`. */
export const usage =
  `usage: deno task sweep [--config FILE | --preset NAME] [--out DIR] [--only PATTERN] [--workers N]
                       [--dry-run [--no-calibrate] [--verbose]] [--no-report] [--repair] [--smoke]

Runs every method × ACE-grid point × base model × seed of a sweep config in parallel workers (first each
base model the runs start from: a tfjs SFT per base), then writes the report (passk.csv, summary.md, plots/)
into the sweep folder. Re-running the same command skips finished runs and resumes unfinished ones (and an
unfinished SFT) from their checkpoints; a diverged run is marked failed and the sweep goes on.
With no flags it runs the embedded default (bench/configs/default.json: tfjs engine, 16 base models, grpo,
ace-grpo, dapo, ace-dapo × 1 seed per base on 320 problems, n = 32). The report exits 1 on incomplete data unless runs failed (then
the exit code is already 1) or --only selected a subset.

--config FILE     sweep config (JSON, see bench/sweep/sweep.schema.json; a recorded sweep.json works too)
--preset NAME     a config shipped in bench/configs/ (default: default)
--out DIR         sweep folder (default: runs/<name>)
--only PATTERN    run only these runs: a glob over run ids ('ace-*', '*_b3_*'), else one run id or method
--workers N       parallel runs (default: number of cores)
--dry-run         print the design (bases, seeds per base), the run matrix, what is done, and a time estimate (VERL: a cost
                  and memory table); run nothing in the sweep folder
                  (with no finished run there, a local engine is calibrated first: a few RL steps of one run,
                  and a short SFT base model for tfjs, in a temp folder; the estimate says so)
--no-calibrate    with --dry-run: skip the calibration (no estimate on a fresh folder)
--verbose         with --dry-run on VERL configs: also each run's Hydra overrides, launch script and ray job
--no-report       skip writing the report at the end
--smoke           the config shrunk to seconds (2 bases or seeds, 2 RL steps, n = 4, a tiny tfjs model; VERL:
                  the real plan, never launched) under the name <name>-smoke: checks that a config runs end to
                  end; its numbers are no result
--repair          first drop duplicate eval samples and metrics lines (left by two sweeps writing one folder
                  before the lock held) from every run, saying how many

examples:
  deno task sweep --preset ci-tabular --out runs/ci-tabular
  deno task sweep --dry-run
  deno task sweep --only 'ace-grpo*'`;

/** Entry point for `deno task sweep`. */
export async function main(args: string[]): Promise<number> {
  const values = parseFlags(args, {
    config: { type: "string" },
    preset: { type: "string" },
    out: { type: "string" },
    only: { type: "string" },
    workers: { type: "string" },
    "dry-run": { type: "boolean" },
    "no-calibrate": { type: "boolean" },
    verbose: { type: "boolean" },
    "no-report": { type: "boolean" },
    repair: { type: "boolean" },
    smoke: { type: "boolean" },
  }, false).values as {
    help?: boolean;
    config?: string;
    preset?: string;
    out?: string;
    only?: string;
    workers?: string;
    "dry-run"?: boolean;
    "no-calibrate"?: boolean;
    verbose?: boolean;
    "no-report"?: boolean;
    repair?: boolean;
    smoke?: boolean;
  };
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (values.config && values.preset) throw new UsageError("give --config or --preset, not both");
  const path = values.config ?? presetPath(values.preset ?? "default");
  const read = readSweepConfig(path);
  const sweep = values.smoke ? checkSweepConfig(smokeConfig(read), `${path} (--smoke)`) : read;
  const note = values.smoke ? smokeNote(read) : null;
  if (note) console.error(note);
  const all = expandRuns(sweep);
  const runs = filterRuns(all, values.only);
  if (runs.length === 0) {
    throw new UsageError(`--only '${values.only}' matches none of: ${all.map((r) => r.runId).join(", ")}`);
  }
  const out = values.out ?? join("runs", sweep.name);
  const workers = parseNumber(values.workers, "workers", cpus().length, 1, 256);
  if (values["dry-run"]) {
    const spec = engineSpec(sweep.engine);
    const fresh = runs.some((r) => readStatus(runDir(out, r.runId))?.state !== "done") &&
      measuredSecondsPerStep(out, runs) === null;
    let calibration = null;
    if (fresh && LOCAL_ENGINES.includes(spec.name) && !values["no-calibrate"]) {
      console.error(
        `sweep ${sweep.name}: no finished run in ${out}; calibrating (a few RL steps of one run)…`,
      );
      calibration = await calibrate(sweep, spec);
    }
    console.log(await describePlan(sweep, runs, out, workers, spec, calibration, values.verbose));
    return 0;
  }
  // One writer per folder: a second sweep on `out` exits 2 here instead of retraining finished runs.
  const command = ["deno task sweep", ...args].join(" ");
  const lock = lockFolder(out, { command });
  try {
    if (values.repair) repairRuns(out);
    return await sweepLocked(sweep, all, runs, out, workers, values["no-report"]);
  } finally {
    lock.release();
  }
}

/** `--repair`: drop duplicate eval samples and metrics lines from every run folder of the sweep, saying how many. */
function repairRuns(out: string): void {
  let evalSamples = 0, metricsLines = 0;
  const runs = join(out, "runs");
  for (const entry of exists(runs) ? Deno.readDirSync(runs) : []) {
    if (!entry.isDirectory) continue;
    const dropped = removeDuplicates(join(runs, entry.name));
    if (dropped.evalSamples + dropped.metricsLines === 0) continue;
    console.error(
      `--repair: ${entry.name}: dropped ${dropped.evalSamples} duplicate eval samples, ` +
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
    const { written, issues, answers } = await writeReportChecked(out);
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
