// One external evaluation end to end: check the folder and the server, sample (resumably), grade, and record
// the run status and its health. Nothing in the folder is written before the preflight passes.
import { rmSync, statSync } from "node:fs";
import { atomicWrite, exists, readIfExists, writeJson } from "../../common/fs.ts";
import { evalFile, runFile, type RunStatus, sweepFile, writeStatus } from "../../common/run_folder.ts";
import { gradeMany } from "../../evaluators/mod.ts";
import { type Endpoint, EndpointError, InterruptedError, preflight } from "./client.ts";
import { failureAdvice, sampleAll, type SamplerOptions, type SamplerStats } from "./sampler.ts";
import { readSamples, repairSamples } from "./samples.ts";
import { runHealth } from "./health.ts";
import {
  checkEvalDir,
  evalPaths,
  type EvalProblem,
  type EvalSettings,
  gradeSamples,
  openEvalDir,
} from "./evaluate.ts";
import { applyTemplate } from "./templates.ts";

/**
 * Transport options that do not change the samples (so they are not part of the run's identity). `signal` is
 * aborted on SIGINT/SIGTERM: requests stop, status.json says "interrupted" at once, and evaluateEndpoint throws an
 * InterruptedError once in-flight requests have settled.
 */
export interface TransportOptions
  extends
    Pick<Endpoint, "apiKey" | "apiKeyEnv" | "timeoutMs" | "retry" | "signal">,
    Omit<SamplerOptions, "endpoint" | "params" | "n" | "seed" | "samplesPath"> {
  /** The command line that produced the run, recorded in eval.json. */
  command?: string;
  /** Leave samples cut off by max_tokens out of eval.jsonl and Pass@k. */
  excludeTruncated?: boolean;
  /** Drop bad lines of samples.jsonl (after a backup) before resuming; told what was dropped. */
  repair?: (message: string) => void;
}

/** The outcome: where it went, what sampling did, the graded rows, and the run's health. */
export type EvalOutcome = Awaited<ReturnType<typeof evaluateEndpoint>>;

const sizeOf = (path: string) => exists(path) ? statSync(path).size : 0;

/**
 * Remember `files` (their bytes; absent ones as absent) and the size of samples.jsonl; the function returned puts
 * the files back when no sample was added since, and says whether it did.
 */
function undoUnlessSampled(files: string[], samplesPath: string): () => boolean {
  const saved = files.map((path) => [path, readIfExists(path)] as const);
  const bytes = sizeOf(samplesPath);
  return () => {
    if (sizeOf(samplesPath) !== bytes) return false;
    for (const [path, data] of saved) {
      if (data === null) rmSync(path, { force: true });
      else atomicWrite(path, data);
    }
    return true;
  };
}

/**
 * Evaluate `problems` on the endpoint into `out` (the run-folder format). Re-running with the same settings
 * resumes: finished samples are kept, only missing ones are requested (so a re-run retries only the problems
 * that failed). status.json ends "done" with `failedProblems` listing any problem the server rejected or that
 * ran out of retries. A fatal error (refused key, unknown model) before any sample is added leaves eval.json,
 * config.json and status.json as they were. The caller holds the folder's lock (common/lock.ts).
 */
export async function evaluateEndpoint(
  problems: readonly EvalProblem[],
  settings: EvalSettings,
  out: string,
  transport: TransportOptions,
) {
  // The transport's own fields (key, timeout, retry, signal) ride along; complete() reads only Endpoint's.
  const endpoint: Endpoint = {
    ...transport,
    baseUrl: settings.endpoint,
    model: settings.model,
    mode: settings.mode,
  };
  checkEvalDir(out, settings);
  endpoint.llamaCpp = (await preflight(endpoint)).llamaCpp;
  const paths = evalPaths(out, settings);
  if (transport.repair) transport.repair(repairSamples(paths.samplesPath));
  const written = [evalFile(out), sweepFile(out), runFile(paths.runDir, "config"), paths.statusPath];
  const undo = undoUnlessSampled(written, paths.samplesPath);
  openEvalDir(out, settings, transport.command);
  const startedAt = new Date().toISOString();
  writeStatus(paths.runDir, { state: "running", startedAt });
  const end = (state: RunStatus["state"], rest: Partial<RunStatus>) =>
    writeStatus(paths.runDir, { state, startedAt, finishedAt: new Date().toISOString(), ...rest });
  // Written the moment the signal comes, so a second Ctrl-C (or a kill after it) still leaves an honest state.
  const onAbort = () =>
    end("interrupted", {
      reason: `interrupted by ${transport.signal?.reason ?? "a signal"}; re-run the same command to resume`,
    });
  transport.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const jobs = problems.map((p) => ({ id: p.id, prompt: applyTemplate(settings.template, p.problem) }));
    let stats: SamplerStats;
    try {
      stats = await sampleAll(jobs, {
        ...transport,
        endpoint,
        params: settings,
        n: settings.n,
        seed: settings.seed,
        samplesPath: paths.samplesPath,
      });
    } catch (e) {
      if (e instanceof InterruptedError) throw e; // status.json already says "interrupted"
      // Nothing sampled: the folder stays as it was (e.g. a key refused after the preflight).
      if (!(e instanceof EndpointError && undo())) {
        end("failed", { reason: (e as Error).message.split("\n")[0] });
      }
      throw e;
    }
    const rows = await gradeSamples(
      problems,
      settings.dataset,
      paths,
      settings.n,
      (items) => gradeMany(items.map((i) => ({ ...i, strict: settings.grader === "strict" }))),
      transport.excludeTruncated,
    );
    if (transport.signal?.aborted) throw new InterruptedError(String(transport.signal.reason));
    const scored = new Set(rows.map((r) => r.problemId)).size;
    const { failed, nSplit } = stats;
    const excludeTruncated = transport.excludeTruncated ?? false;
    const given = { dataset: settings.dataset, n: settings.n, scored, failed, excludeTruncated, nSplit };
    const health = runHealth(given, problems.map((p) => p.id), readSamples(paths.samplesPath));
    writeJson(runFile(paths.runDir, "health"), health);
    const advice = failureAdvice(failed);
    if (scored === 0 && problems.length > 0) {
      // Nothing to report: the run failed, whatever the cause (a status "done" over 0 problems reads as a result).
      const first = failed[0]?.error ?? "no sample graded";
      end("failed", { reason: `every problem failed (first: ${first}); ${advice}`, failedProblems: failed });
    } else if (failed.length) {
      const note = `${failed.length} of ${problems.length} problems failed; Pass@k is over the other ` +
        `${scored}; ${advice}`;
      end("done", { note, failedProblems: failed });
    } else end("done", {});
    return { paths, stats, rows, health };
  } finally {
    transport.signal?.removeEventListener("abort", onAbort);
  }
}
