// `deno task sweep`: run a training sweep (resumable, parallel), then write its report.
import { cpus } from "node:os";
import { join } from "node:path";
import { parseFlags, parseNumber, UsageError } from "../common/args.ts";
import { lockFolder } from "../common/lock.ts";
import {
  describePlan,
  engineSpec,
  expandRuns,
  filterRuns,
  presetPath,
  readSweepConfig,
  runSweep,
  writeSweepJson,
} from "../bench/sweep/mod.ts";
import { engineIngest, writeReportChecked } from "../reports/mod.ts";

/** Usage text for `deno task sweep`. */
export const usage =
  `usage: deno task sweep [--config FILE | --preset NAME] [--out DIR] [--only PATTERN] [--workers N]
                       [--dry-run [--verbose]] [--no-report]

Runs every method × ACE-grid point × seed of a sweep config in parallel workers, then writes the report
(passk.csv, summary.md, plots/) into the sweep folder. Re-running the same command skips finished runs and
resumes unfinished ones from their checkpoints; a diverged run is marked failed and the sweep goes on.
With no flags it runs the embedded default (bench/configs/default.json: tfjs engine, grpo, ace-grpo, dapo,
ace-dapo × 12 seeds on 320 problems, n = 32). The report exits 1 on incomplete data unless runs failed (then
the exit code is already 1) or --only selected a subset.

--config FILE     sweep config (JSON, see bench/sweep/sweep.schema.json; a recorded sweep.json works too)
--preset NAME     a config shipped in bench/configs/ (default: default)
--out DIR         sweep folder (default: runs/<name>)
--only PATTERN    run only these runs: a glob over run ids ('ace-*', '*_s1'), else one run id or method
--workers N       parallel runs (default: number of cores)
--dry-run         print the run matrix, what is done, and a time estimate (VERL: a cost and memory table);
                  run nothing
--verbose         with --dry-run on VERL configs: also each run's Hydra overrides, launch script and ray job
--no-report       skip writing the report at the end

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
    verbose: { type: "boolean" },
    "no-report": { type: "boolean" },
  }, false).values as {
    help?: boolean;
    config?: string;
    preset?: string;
    out?: string;
    only?: string;
    workers?: string;
    "dry-run"?: boolean;
    verbose?: boolean;
    "no-report"?: boolean;
  };
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (values.config && values.preset) throw new UsageError("give --config or --preset, not both");
  const path = values.config ?? presetPath(values.preset ?? "default");
  const sweep = readSweepConfig(path);
  const all = expandRuns(sweep);
  const runs = filterRuns(all, values.only);
  if (runs.length === 0) {
    throw new UsageError(`--only '${values.only}' matches none of: ${all.map((r) => r.runId).join(", ")}`);
  }
  const out = values.out ?? join("runs", sweep.name);
  const workers = parseNumber(values.workers, "workers", cpus().length, 1, 256);
  if (values["dry-run"]) {
    console.log(await describePlan(sweep, runs, out, workers, engineSpec(sweep.engine), values.verbose));
    return 0;
  }
  // One writer per folder: a second sweep on `out` exits 2 here instead of retraining finished runs.
  const lock = lockFolder(out, { onStale: (m) => console.error(m) });
  try {
    return await sweepLocked(sweep, all, runs, out, workers, values["no-report"]);
  } finally {
    lock.release();
  }
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
    const { written, issues } = await writeReportChecked(out, { ingest: engineIngest() });
    for (const path of written) console.error(`wrote ${path}`);
    // Failed runs already make the exit code 1; runs left out by --only are not an error of this sweep.
    const partial = outcome.failed.length > 0 || runs.length < all.length;
    if (issues.length && !partial) {
      console.error(`sweep ${sweep.name}: incomplete data, cells marked † in the summary:`);
      for (const i of issues) console.error(`  ${i.runId}: ${i.message}`);
      return 1;
    }
  }
  return outcome.failed.length ? 1 : 0;
}
