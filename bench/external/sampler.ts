// Sample n continuations for every problem from an OpenAI-compatible server, appending each reply to
// samples.jsonl as it arrives; a re-run requests only the sample indices not yet on disk.
import { Rng } from "../../common/prng.ts";
import {
  complete,
  type Endpoint,
  EndpointError,
  isPerRequestRejection,
  RetriesExhaustedError,
  type RetryEvent,
  type SamplingParams,
} from "./client.ts";
import { maxTokensAdvice } from "./context_limit.ts";
import { runPool } from "./pool.ts";
import { appendSamples, readSamples, repairTornTail, type SampleRecord } from "./samples.ts";

/** One problem to sample: its id (the key in samples.jsonl) and the fully rendered prompt. */
export interface SampleJob {
  id: string;
  prompt: string;
}

/** How to sample. */
export interface SamplerOptions {
  endpoint: Endpoint;
  params: SamplingParams;
  /** Samples per problem. */
  n: number;
  /** Base seed: request seeds and retry jitter derive from it. */
  seed: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Largest `n` sent in one request; lowered automatically when the server returns fewer choices. */
  maxPerRequest: number;
  /** Path of samples.jsonl (created if absent). */
  samplesPath: string;
  /** Called after each appended request with the running count of finished samples. */
  onProgress?: (done: number, total: number) => void;
  onRetry?: (problemId: string, e: RetryEvent) => void;
  /** Called when a problem fails for good (rejected, or out of retries). */
  onFailure?: (f: FailedProblem) => void;
}

/** A problem that could not be sampled: the server rejected it, or transient failures outlasted the retries. */
export interface FailedProblem {
  problemId: string;
  kind: "rejected" | "retries";
  /** One line without the problem id, e.g. "HTTP 400: …; --max-tokens 3000 would fit (…)". */
  error: string;
}

/** What a sampling pass did. */
export interface SamplerStats {
  /** Samples found on disk before this pass. */
  resumed: number;
  /** Samples appended by this pass. */
  added: number;
  requests: number;
  /** Problems still missing samples: rejected by the server or out of retries (a re-run requests only them). */
  failed: FailedProblem[];
  /** Bytes of a torn final line dropped from samples.jsonl before resuming. */
  repairedBytes: number;
  /** The per-request n finally used (1 if the server ignores `n`). */
  perRequest: number;
}

/** Request seed for the samples starting at `first`: the same on a re-run, so resumed requests repeat exactly. */
export function requestSeed(seed: number, problemId: string, first: number): number {
  return Rng.seeded(`${seed}|${problemId}|${first}`).int(2 ** 31);
}

/**
 * Sample every job up to n samples, at most `concurrency` requests at once. Transient failures are retried
 * inside the client; a problem that still fails, or that the server rejects (a 4xx such as 400 for a prompt
 * past the context), is reported in `failed` while the others continue. A fatal EndpointError (refused key,
 * unknown model) stops new requests and is rethrown once in-flight ones settle.
 */
export async function sampleAll(jobs: readonly SampleJob[], opts: SamplerOptions): Promise<SamplerStats> {
  const repairedBytes = repairTornTail(opts.samplesPath);
  const onDisk = readSamples(opts.samplesPath);
  const missingOf = (id: string) => {
    const have = onDisk.get(id);
    return Array.from({ length: opts.n }, (_, i) => i).filter((i) => !have?.has(i));
  };
  const todo = jobs.map((job) => ({ job, missing: missingOf(job.id) })).filter((t) => t.missing.length > 0);
  const total = jobs.length * opts.n;
  const resumed = total - todo.reduce((s, t) => s + t.missing.length, 0);
  const stats: SamplerStats = {
    resumed,
    added: 0,
    requests: 0,
    failed: [],
    repairedBytes,
    perRequest: Math.max(1, Math.min(opts.maxPerRequest, opts.n)),
  };
  let fatal: EndpointError | null = null;
  const fail = (f: FailedProblem) => {
    stats.failed.push(f);
    opts.onFailure?.(f);
  };
  opts.onProgress?.(resumed, total);

  await runPool(todo, opts.concurrency, async ({ job, missing }, lane) => {
    const jitter = Rng.seeded(`${opts.seed}|jitter|${lane}`);
    try {
      while (missing.length > 0 && fatal === null) {
        const got = await sampleOnce(job, missing, opts, stats, jitter);
        missing = missing.slice(got);
        opts.onProgress?.(resumed + stats.added, total);
      }
    } catch (e) {
      if (isPerRequestRejection(e)) {
        const advice = maxTokensAdvice(e.reason ?? "", opts.params.maxTokens);
        const error = (e.reason ?? e.message) + (advice ? `; ${advice}` : "");
        fail({ problemId: job.id, kind: "rejected", error });
      } else if (e instanceof EndpointError) fatal ??= e;
      else if (e instanceof RetriesExhaustedError) {
        fail({ problemId: job.id, kind: "retries", error: e.message });
      } else throw e;
    }
  });
  if (fatal) throw fatal;
  const order = new Map(jobs.map((j, i) => [j.id, i]));
  stats.failed.sort((a, b) => order.get(a.problemId)! - order.get(b.problemId)!);
  return stats;
}

/** One request for the first missing indices of a job; appends what came back and returns how many. */
async function sampleOnce(
  job: SampleJob,
  missing: number[],
  opts: SamplerOptions,
  stats: SamplerStats,
  jitter: Rng,
): Promise<number> {
  const ask = Math.min(missing.length, stats.perRequest);
  const seed = requestSeed(opts.seed, job.id, missing[0]);
  const onRetry = opts.onRetry && ((e: RetryEvent) => opts.onRetry!(job.id, e));
  let reply;
  try {
    reply = await complete(opts.endpoint, job.prompt, ask, opts.params, seed, jitter, onRetry);
  } catch (e) {
    // Some servers reject n > 1 outright; fall back to one sample per request for the rest of the run.
    if (!(e instanceof EndpointError) || e.status !== 400 || ask === 1) throw e;
    // A context-limit rejection is about the prompt, not n: asking again with n = 1 cannot help.
    if (maxTokensAdvice(e.reason ?? "", opts.params.maxTokens) !== "") throw e;
    reply = await complete(opts.endpoint, job.prompt, 1, opts.params, seed, jitter, onRetry);
    stats.perRequest = 1;
  }
  stats.requests++;
  const choices = reply.choices.slice(0, ask);
  // A server that ignores n (e.g. answers 1 choice to n=8) gets smaller requests from now on.
  if (choices.length < ask) stats.perRequest = Math.max(1, Math.min(stats.perRequest, choices.length));
  const request = `${job.id}#${missing[0]}`;
  const records: SampleRecord[] = choices.map((c, i) => ({
    problemId: job.id,
    sample: missing[i],
    text: c.text,
    finish_reason: c.finishReason,
    usage: reply.usage,
    latency_ms: Math.round(reply.latencyMs),
    request,
    request_n: choices.length,
    attempts: reply.attempts,
    ...(reply.retryReasons.length ? { retry_reasons: reply.retryReasons } : {}),
  }));
  appendSamples(opts.samplesPath, records);
  stats.added += records.length;
  return records.length;
}
