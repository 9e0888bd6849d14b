// One external evaluation end to end: check the server, sample (resumably), grade, and record the run status.
import { writeJson } from "../../common/fs.ts";
import { gradeMany } from "../../evaluators/mod.ts";
import { type Endpoint, preflight } from "./client.ts";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry.ts";
import { sampleAll, type SamplerStats } from "./sampler.ts";
import {
  type EvalPaths,
  type EvalProblem,
  type EvalRow,
  type EvalSettings,
  gradeSamples,
  openEvalDir,
  usageSummary,
} from "./evaluate.ts";
import { applyTemplate } from "./templates.ts";

/** Transport options that do not change the samples (so they are not part of the run's identity). */
export interface TransportOptions {
  apiKey?: string;
  apiKeyEnv?: string;
  concurrency: number;
  /** Largest n per request (default: all n at once). */
  maxPerRequest?: number;
  timeoutMs: number;
  retry?: RetryPolicy;
  onProgress?: (done: number, total: number) => void;
  onRetry?: (problemId: string, reason: string, delayMs: number) => void;
  /** Grader pool size (0 grades inline; default: one worker per core). */
  gradeWorkers?: number;
  /** The command line that produced the run, recorded in sweep.json. */
  command?: string;
}

/** The outcome: where it went, what sampling did, the graded rows, and usage totals. */
export interface EvalOutcome {
  paths: EvalPaths;
  stats: SamplerStats;
  rows: EvalRow[];
  /** Problems with all n samples graded, out of the problems asked for. */
  complete: number;
  problems: number;
  usage: ReturnType<typeof usageSummary>;
}

/**
 * Evaluate `problems` on the endpoint into `out` (the run-folder format). Re-running with the same settings
 * resumes: finished samples are kept, only missing ones are requested. status.json ends "done" when every
 * problem has n samples, else "failed" with a reason saying to re-run.
 */
export async function evaluateEndpoint(
  problems: readonly EvalProblem[],
  settings: EvalSettings,
  out: string,
  transport: TransportOptions,
): Promise<EvalOutcome> {
  const endpoint: Endpoint = {
    baseUrl: settings.endpoint,
    model: settings.model,
    apiKey: transport.apiKey,
    apiKeyEnv: transport.apiKeyEnv,
    mode: settings.mode,
    timeoutMs: transport.timeoutMs,
    retry: transport.retry ?? DEFAULT_RETRY,
  };
  await preflight(endpoint);
  const paths = openEvalDir(out, settings, transport.command);
  const startedAt = new Date().toISOString();
  writeJson(paths.statusPath, { state: "running", startedAt });
  const jobs = problems.map((p) => ({ id: p.id, prompt: applyTemplate(settings.template, p.problem) }));
  let stats: SamplerStats;
  try {
    stats = await sampleAll(jobs, {
      endpoint,
      params: { temperature: settings.temperature, topP: settings.topP, maxTokens: settings.maxTokens },
      n: settings.n,
      seed: settings.seed,
      concurrency: transport.concurrency,
      maxPerRequest: transport.maxPerRequest ?? settings.n,
      samplesPath: paths.samplesPath,
      onProgress: transport.onProgress,
      onRetry: transport.onRetry && ((id, e) => transport.onRetry!(id, e.reason, e.delayMs)),
    });
  } catch (e) {
    const reason = `${(e as Error).message.split("\n")[0]}`;
    writeJson(paths.statusPath, { state: "failed", reason, startedAt, finishedAt: new Date().toISOString() });
    throw e;
  }
  const rows = await gradeSamples(
    problems,
    settings.dataset,
    paths,
    settings.n,
    // Only name `workers` when asked: gradeMany then picks inline grading or a pool by the batch size.
    (items) =>
      gradeMany(items, transport.gradeWorkers === undefined ? {} : { workers: transport.gradeWorkers }),
  );
  const complete = rows.length / settings.n;
  const finishedAt = new Date().toISOString();
  if (complete < problems.length) {
    const reason =
      `${problems.length - complete} of ${problems.length} problems lack samples after retries ` +
      `(first: ${stats.failed[0]?.error ?? "unknown"}); re-run the same command to resume`;
    writeJson(paths.statusPath, { state: "failed", reason, startedAt, finishedAt });
  } else {
    writeJson(paths.statusPath, { state: "done", startedAt, finishedAt });
  }
  return { paths, stats, rows, complete, problems: problems.length, usage: usageSummary(paths.samplesPath) };
}
