// Runs a sweep: the engine's shared `prepare`, then every unfinished run in parallel Deno Workers, with
// progress bars, resumable state on disk (status.json per run) and failures recorded without stopping the sweep.
import { cpus } from "node:os";
import { exists } from "../../common/fs.ts";
import { multiProgress, type Progress, progressEnabled } from "../../common/progress.ts";
import { machineInfo, versionInfo } from "../../common/provenance.ts";
import {
  readFolderFile,
  readMetrics,
  readStatus,
  recordInConfig,
  runDir,
  runFile,
  type RunStatus,
  writeFolderFile,
  writeRunConfig,
  writeStatus,
} from "../../common/run_folder.ts";
import type { RunConfig, RunHooks, RunOutcome } from "../engines/engine.ts";
import {
  type EngineCluster,
  engineRef,
  type EngineSpec,
  engineSpec,
  loadCluster,
} from "../engines/registry.ts";
import { baseSeed, type SweepConfig, sweepHash } from "./config.ts";
import { checkJob, checkReport, type WorkerJob } from "./job.ts";
import { sweepRecord } from "./record.ts";
import { runRecordFrom } from "../../common/protocol.ts";

/** How to run a sweep. */
export interface SweepOptions {
  /** Sweep folder (created). */
  out: string;
  /** Parallel workers (default: number of cores, at most the number of pending runs). */
  workers?: number;
  /** Engine override (tests use a fake engine module); default from the registry. */
  engine?: EngineSpec;
}

/** What happened to each run. */
export interface SweepOutcome {
  done: string[];
  /** Runs the engine only planned (VERL without a launcher): launch them outside, then report. */
  planned: string[];
  skipped: string[];
  failed: { runId: string; reason: string }[];
  /** True when Ctrl-C stopped the sweep; unfinished runs stay "running" and resume next time. */
  interrupted: boolean;
}

const workerUrl = new URL("./worker.ts", import.meta.url);

/** Live workers and how to stop each (resolving its job as interrupted). */
type Active = Map<Worker, (reason: string | null) => void>;

/**
 * Write `<out>/sweep.json` (resolved config, configHash, versions, machine, and the `record`: design, methods'
 * families and baselines, evaluation protocol). A folder that already holds a different sweep (another hash) is
 * refused, so resuming can never mix the results of two configs.
 */
export function writeSweepJson(out: string, sweep: SweepConfig, runs: RunConfig[]): void {
  const hash = sweepHash(sweep);
  const old = readFolderFile(out);
  if (old && old.configHash !== hash) {
    throw new Error(
      `${out} holds a different sweep (configHash ${old.configHash} ≠ ${hash}); choose another --out or delete it`,
    );
  }
  writeFolderFile(out, {
    kind: "sweep",
    config: sweep,
    record: sweepRecord(sweep, runs),
    configHash: hash,
    runIds: runs.map((r) => r.runId),
    versions: versionInfo(),
    machine: machineInfo(),
    writtenAt: new Date().toISOString(),
  });
}

/** How a worker's job ended: the engine's outcome, or the failure reason. */
type JobResult = { outcome: RunOutcome; failure: null } | { outcome: null; failure: string };

/** What a job reports while it runs: the engine's hooks, and (runs) the resolved config the engine will run. */
type JobHooks = RunHooks & { onConfig?(config: RunConfig<unknown>): void };

/** Run one job in a fresh worker; resolves with the engine's outcome or the failure reason (job.ts checks). */
function runInWorker(job: WorkerJob, hooks: JobHooks, active: Active) {
  return new Promise<JobResult>((resolve) => {
    try {
      checkJob(job);
    } catch (e) {
      return resolve({ outcome: null, failure: (e as Error).message });
    }
    const worker = new Worker(workerUrl, { type: "module" });
    const finish = (result: JobResult) => {
      active.delete(worker);
      worker.terminate();
      resolve(result);
    };
    const fail = (failure: string) => finish({ outcome: null, failure });
    active.set(worker, (reason) => fail(reason ?? "interrupted"));
    worker.onmessage = (e: MessageEvent<unknown>) => {
      let report;
      try {
        report = checkReport(e.data);
      } catch (err) {
        return fail((err as Error).message);
      }
      if (report.kind === "progress") hooks.onProgress(report.step, report.total);
      else if (report.kind === "config") hooks.onConfig?.(report.config);
      else if (report.kind === "record") hooks.onRecord?.(report.fields);
      else if (report.kind === "done") finish({ outcome: report.outcome, failure: null });
      else {
        if (Deno.env.get("ACEBENCH_DEBUG") && report.stack) console.error(report.stack);
        fail(report.message.split("\n")[0] || "engine error");
      }
    };
    worker.onerror = (e) => {
      e.preventDefault();
      fail(`worker crashed: ${e.message}`);
    };
    worker.onmessageerror = () => fail("worker report could not be deserialized");
    try {
      worker.postMessage(job);
    } catch (e) {
      fail(`sweep job could not be posted: ${(e as Error).message.split("\n")[0]}`);
    }
  });
}

/**
 * Settle a finished run: done only if the engine returned, the losses are finite and samples were written;
 * planned when the engine only planned it.
 */
function settleRun(dir: string, status: RunStatus, result: JobResult, started: number): RunStatus {
  let reason = result.failure;
  if (result.outcome === "done") {
    // the first step whose loss is not a finite number (JSON has no NaN, so engines write null)
    const bad = readMetrics<{ step?: number; loss?: unknown }>(dir)
      .find((m) => "loss" in m && !(typeof m.loss === "number" && Number.isFinite(m.loss)));
    if (bad) reason = `diverged: non-finite loss at step ${bad.step ?? -1}`;
    else if (!exists(runFile(dir, "eval"))) reason = "engine finished without writing eval.jsonl";
  }
  // what the engine added to status.json while it ran (a VERL job's submission, its grader) is kept
  const next: RunStatus = {
    ...readStatus(dir),
    ...status,
    state: reason !== null ? "failed" : result.outcome === "planned" ? "planned" : "done",
    finishedAt: new Date().toISOString(),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  if (reason !== null) next.reason = reason;
  else delete next.reason;
  writeStatus(dir, next);
  return next;
}

/**
 * Run a sweep into `options.out`: finished runs (status done) are skipped, unfinished ones resume from their
 * checkpoints, failed ones are retried. Ctrl-C stops the workers and leaves unfinished runs resumable.
 */
export async function runSweep(
  sweep: SweepConfig,
  runs: RunConfig[],
  options: SweepOptions,
): Promise<SweepOutcome> {
  const spec = options.engine ?? engineSpec(sweep.engine);
  const out = options.out;
  const outcome: SweepOutcome = { done: [], planned: [], skipped: [], failed: [], interrupted: false };
  const pending = runs.filter((r) => {
    const skip = readStatus(runDir(out, r.runId))?.state === "done";
    if (skip) outcome.skipped.push(r.runId);
    return !skip;
  });
  const log = progressEnabled() ? () => {} : (line: string) => console.error(line);
  if (outcome.skipped.length) log(`sweep ${sweep.name}: ${outcome.skipped.length} finished runs skipped`);
  if (pending.length === 0) return outcome;

  const active: Active = new Map();
  const cluster = await loadCluster(spec);
  let sigint = false; // Ctrl-C, not a failed prepare, hands running cluster jobs to the engine
  const onSigint = () => {
    sigint = true;
    outcome.interrupted = true;
    for (const stop of [...active.values()]) stop("interrupted");
  };
  Deno.addSignalListener("SIGINT", onSigint);
  const bars = multiProgress();
  try {
    log(`sweep ${sweep.name}: preparing the ${spec.name} engine`);
    const prepared = prepareBases(sweep, pending, spec, out, bars, active, outcome);
    // Counts finished runs of the whole selection, so a resumed sweep starts at the runs already done.
    const overall = bars.add(`sweep ${sweep.name}`, runs.length, "runs", outcome.skipped.length);
    // Runs in base order, so the lanes start on the first bases while the last ones are still being trained.
    const queue = [...pending].sort((a, b) => (a.base ?? 0) - (b.base ?? 0));
    // An engine whose runs are cluster jobs (VERL under ray-job) sets the lanes to what its cluster holds.
    const slots = cluster ? await cluster.concurrency(sweep.settings) : null;
    if (slots !== null) console.error(`sweep ${sweep.name}: up to ${slots} cluster jobs in flight`);
    const width = Math.max(1, Math.min(slots ?? options.workers ?? cpus().length, queue.length));
    const lane = async () => {
      for (let job = prepared.queue.shift(); job && !outcome.interrupted; job = prepared.queue.shift()) {
        await job();
      }
      for (let run = queue.shift(); run && !outcome.interrupted; run = queue.shift()) {
        const failure = await prepared.done.get(run.base ?? 0);
        if (failure !== null || outcome.interrupted) break;
        await executeRun(run, spec, out, bars.add(run.runId, sweep.rl.steps), outcome, active, log);
        if (!outcome.interrupted) overall.increment();
      }
    };
    await Promise.all(Array.from({ length: width }, lane));
    if (sigint && cluster) await interruptJobs(cluster, out, pending);
    if (prepared.failure.length) {
      outcome.interrupted = false;
      throw new Error(`${spec.name} prepare failed: ${prepared.failure[0]}`);
    }
  } finally {
    bars.stop();
    Deno.removeSignalListener("SIGINT", onSigint);
  }
  return outcome;
}

/** After Ctrl-C: the engine stops or detaches the job of every run the interrupted sweep left running. */
async function interruptJobs(cluster: EngineCluster, out: string, runs: RunConfig[]): Promise<void> {
  for (const run of runs) {
    const dir = runDir(out, run.runId);
    if (readStatus(dir)?.state !== "running") continue;
    try {
      await cluster.interrupt(dir, run.settings);
    } catch (e) {
      console.error(`run ${run.runId}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
}

/**
 * One prepare job per base that pending runs start from (tfjs: an SFT each), for the runner's lanes to take
 * first; `done` resolves per base with its failure or null. A failed base stops the sweep (its bar appears on
 * the engine's first progress report, so engines without a long prepare show none).
 */
function prepareBases(
  sweep: SweepConfig,
  pending: RunConfig[],
  spec: EngineSpec,
  out: string,
  bars: ReturnType<typeof multiProgress>,
  active: Active,
  outcome: SweepOutcome,
) {
  const bases = [...new Set(pending.map((r) => r.base ?? 0))].sort((a, b) => a - b);
  const failure: string[] = [];
  const done = new Map<number, Promise<string | null>>();
  const queue: (() => Promise<void>)[] = [];
  for (const base of bases) {
    let settle!: (failure: string | null) => void;
    done.set(base, new Promise((resolve) => (settle = resolve)));
    queue.push(async () => {
      const bar: { bar?: Progress } = {};
      const label = bases.length > 1 || sweep.bases !== undefined ? `base ${base}` : `${spec.name} prepare`;
      const job: WorkerJob = {
        kind: "prepare",
        engine: engineRef(spec),
        settings: sweep.settings,
        seed: baseSeed(sweep, base),
        base,
        eval: sweep.eval,
        sweepDir: out,
      };
      const result = await runInWorker(
        job,
        { onProgress: (step, total) => (bar.bar ??= bars.add(label, total)).update(step) },
        active,
      );
      bar.bar?.stop();
      const reason = outcome.interrupted ? "interrupted" : result.failure;
      if (reason !== null && !outcome.interrupted) {
        failure.push(bases.length > 1 ? `base ${base}: ${reason}` : reason);
        outcome.interrupted = true; // stops the other lanes; the error is thrown once they have returned
        for (const stop of [...active.values()]) stop("another base failed");
      }
      settle(reason);
    });
  }
  return { queue, done, failure };
}

async function executeRun(
  run: RunConfig,
  spec: EngineSpec,
  out: string,
  bar: Progress,
  outcome: SweepOutcome,
  active: Active,
  log: (line: string) => void,
): Promise<void> {
  const dir = runDir(out, run.runId);
  const sweepRecord = readFolderFile(out)?.record ?? null;
  const previous = readStatus(dir);
  const status: RunStatus = {
    state: "running",
    startedAt: new Date().toISOString(),
    attempts: (previous?.attempts ?? 0) + 1,
  };
  writeStatus(dir, status);
  log(`run ${run.runId}: ${previous ? "resuming" : "starting"}`);
  const started = performance.now();
  const result = await runInWorker(
    { kind: "run", engine: engineRef(spec), run, runDir: dir, sweepDir: out },
    {
      onProgress(step, total) {
        bar.setTotal(total);
        bar.update(step);
      },
      // The run as the engine resolved it (settings with defaults, algorithm fitted to the engine).
      onConfig: (config) =>
        writeRunConfig(dir, { ...config, record: sweepRecord && runRecordFrom(sweepRecord, config.method) }),
      // What the engine learned while running (e.g. the backend `auto` chose), added to config.json.
      onRecord: (fields) => recordInConfig(dir, fields),
    },
    active,
  );
  bar.stop();
  if (outcome.interrupted) return; // status stays "running": the next invocation resumes it
  const settled = settleRun(dir, status, result, started);
  if (settled.state === "done" || settled.state === "planned") {
    outcome[settled.state].push(run.runId);
    log(`run ${run.runId}: ${settled.state} in ${settled.seconds} s`);
  } else {
    outcome.failed.push({ runId: run.runId, reason: settled.reason ?? "" });
    log(`run ${run.runId}: failed: ${settled.reason}`);
  }
}
