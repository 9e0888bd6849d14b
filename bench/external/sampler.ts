// Sample n continuations for every problem from an OpenAI-compatible server, appending each reply to
// samples.jsonl as it arrives; a re-run requests only the sample indices not yet on disk.
import { Rng } from "../../common/prng.ts";
import {
  complete,
  type Endpoint,
  EndpointError,
  InterruptedError,
  isPerRequestRejection,
  RetriesExhaustedError,
  type SamplingParams,
} from "./client.ts";
import { isContextError, maxTokensAdvice } from "./context_limit.ts";
import { appendJsonl } from "../../common/fs.ts";
import { readSamples, repairTornTail, type SampleRecord } from "./samples.ts";

/** One problem to sample: its id (the key in samples.jsonl) and the fully rendered prompt. */
export type SampleJob = { id: string; prompt: string };

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
  /** Largest `n` sent in one request (default: all n at once); lowered when the server returns fewer choices. */
  maxPerRequest?: number;
  /** Path of samples.jsonl (created if absent). */
  samplesPath: string;
  /** Called after each appended request with the running count of finished samples. */
  onProgress?: (done: number, total: number) => void;
  onRetry?: (problemId: string, reason: string) => void;
  /** Called when a problem fails for good (rejected, or out of retries). */
  onFailure?: (f: FailedProblem) => void;
  /** Told once per change of the per-request n (the server refused or ignored `n`): one line for stderr. */
  onNotice?: (message: string) => void;
}

/** Why the per-request n was lowered during the run, for the run's record. */
export interface NSplit {
  /** The n asked per request before the server refused or ignored it. */
  asked: number;
  /** The n per request used from then on. */
  perRequest: number;
  /** "refused": an HTTP 400 to n > 1; "ignored": fewer choices came back than asked. */
  cause: "refused" | "ignored";
  /** The server's message (refused) or what it answered (ignored). */
  reason: string;
}

/** A problem that could not be sampled: the server rejected it, or transient failures outlasted the retries. */
export interface FailedProblem {
  problemId: string;
  kind: "rejected" | "retries";
  /** One line without the problem id, e.g. "HTTP 400: …; --max-tokens 3000 would fit (…)". */
  error: string;
}

/**
 * What to do about failed problems, in one sentence: a re-run retries only those that ran out of retries; the ones
 * the server rejected (a prompt past its context, a bad request) would be rejected again, so it says so. "" if none.
 */
export function failureAdvice(failed: readonly FailedProblem[]): string {
  const retried = failed.filter((f) => f.kind === "retries").length;
  const rejected = failed.length - retried;
  return [
    retried ? `re-run the same command to retry the ${retried} that ran out of retries` : "",
    rejected
      ? `the server rejected ${rejected} (a re-run sends the same requests: change the prompt template, ` +
        `--max-tokens or the server)`
      : "",
  ].filter(Boolean).join("; ");
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
  /** Set when the server refused or ignored the n asked and requests were split; null otherwise. */
  nSplit: NSplit | null;
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
  const indices = Array.from({ length: opts.n }, (_, i) => i);
  const missingOf = (id: string) => indices.filter((i) => !onDisk.get(id)?.has(i));
  const todo = jobs.map((job) => ({ job, missing: missingOf(job.id) })).filter((t) => t.missing.length > 0);
  const total = jobs.length * opts.n;
  const resumed = total - todo.reduce((s, t) => s + t.missing.length, 0);
  const perRequest = Math.max(1, Math.min(opts.maxPerRequest ?? opts.n, opts.n));
  const stats: SamplerStats = {
    resumed,
    added: 0,
    requests: 0,
    failed: [],
    repairedBytes,
    perRequest,
    nSplit: null,
  };
  let fatal: EndpointError | null = null;
  let interrupted: InterruptedError | null = null;
  const fail = (f: FailedProblem) => {
    stats.failed.push(f);
    opts.onFailure?.(f);
  };
  opts.onProgress?.(resumed, total);

  const sampleJob = async ({ job, missing }: (typeof todo)[number], index: number) => {
    const jitter = Rng.seeded(`${opts.seed}|jitter|${index}`);
    try {
      while (missing.length > 0 && fatal === null && interrupted === null) {
        const got = await sampleOnce(job, missing, opts, stats, jitter);
        missing = missing.slice(got);
        opts.onProgress?.(resumed + stats.added, total);
      }
    } catch (e) {
      if (e instanceof InterruptedError) interrupted ??= e;
      else if (isPerRequestRejection(e)) {
        const advice = maxTokensAdvice(e.reason ?? "", opts.params.maxTokens);
        const error = (e.reason ?? e.message) + (advice ? `; ${advice}` : "");
        fail({ problemId: job.id, kind: "rejected", error });
      } else if (e instanceof EndpointError) fatal ??= e;
      else if (e instanceof RetriesExhaustedError) {
        fail({ problemId: job.id, kind: "retries", error: e.message });
      } else throw e;
    }
  };
  // At most `concurrency` lanes, each taking the next problem when it finishes one.
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < todo.length; i = next++) await sampleJob(todo[i], i);
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, todo.length) }, lane));
  if (interrupted) throw interrupted;
  if (fatal) throw fatal;
  const order = new Map(jobs.map((j, i) => [j.id, i]));
  stats.failed.sort((a, b) => order.get(a.problemId)! - order.get(b.problemId)!);
  return stats;
}

/**
 * The largest n a server's refusal allows, when it says so (llama.cpp: "Field 'n': Value must be between
 * 1 <= value <= 2, but got 4", its slot count), else null.
 */
export function nLimitOf(message: string): number | null {
  const m = message.match(/<= value <= (\d+)/) ?? message.match(/\bn\b[^0-9]*(?:at most|<=|≤) ?(\d+)/i);
  return m ? Number(m[1]) : null;
}

/** Lower the per-request n for the whole pass (never raise it), telling and recording it once per change. */
function lowerPerRequest(
  stats: SamplerStats,
  opts: SamplerOptions,
  next: number,
  split: Omit<NSplit, "perRequest">,
) {
  const to = Math.max(1, Math.min(stats.perRequest, next));
  if (to >= stats.perRequest) return;
  stats.perRequest = to;
  stats.nSplit = { ...split, asked: stats.nSplit?.asked ?? split.asked, perRequest: to };
  opts.onNotice?.(`${splitCause(split)}; sending n = ${to} per request from now on`);
}

/** Why requests were split, e.g. "the server refused n = 4 (HTTP 400: …)". */
export function splitCause(s: Omit<NSplit, "perRequest">): string {
  return s.cause === "refused"
    ? `the server refused n = ${s.asked} (${s.reason})`
    : `the server answered ${s.reason} to n = ${s.asked}`;
}

/** Whether the server takes this job's prompt with n = 1 (a probe whose sample is not kept); false on a 400. */
async function acceptsOne(job: SampleJob, opts: SamplerOptions, seed: number, jitter: Rng): Promise<boolean> {
  try {
    await complete(opts.endpoint, job.prompt, 1, opts.params, seed, jitter);
    return true;
  } catch (e) {
    if (e instanceof EndpointError && e.status === 400) return false;
    throw e;
  }
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
  const onRetry = opts.onRetry && ((reason: string) => opts.onRetry!(job.id, reason));
  let reply;
  try {
    reply = await complete(opts.endpoint, job.prompt, ask, opts.params, seed, jitter, onRetry);
  } catch (e) {
    if (!(e instanceof EndpointError) || e.status !== 400 || ask === 1) throw e;
    // A context-limit rejection is about the prompt, not n: a smaller request cannot help, so none is sent.
    if (isContextError(e.reason ?? "")) throw e;
    const reason = e.reason ?? e.message;
    const stated = nLimitOf(reason);
    // A 400 that names no n limit may be about the prompt (a word outside a small model's vocabulary): if n = 1
    // is refused too, the problem fails and n stays as asked.
    if (stated === null && !(await acceptsOne(job, opts, seed, jitter))) throw e;
    // The server refuses this n (llama.cpp: more than its slots): split into requests it takes, the limit it
    // states or half, and ask again (0 samples this time; the caller loops).
    lowerPerRequest(stats, opts, stated ?? Math.floor(ask / 2), { asked: ask, cause: "refused", reason });
    return 0;
  }
  stats.requests++;
  const choices = reply.choices.slice(0, ask);
  // A server that ignores n (e.g. answers 1 choice to n=8) gets smaller requests from now on.
  if (choices.length < ask) {
    const reason = `${choices.length} choice${choices.length === 1 ? "" : "s"}`;
    lowerPerRequest(stats, opts, choices.length, { asked: ask, cause: "ignored", reason });
  }
  const request = `${job.id}#${missing[0]}`;
  const records: SampleRecord[] = choices.map((c, i) => ({
    problemId: job.id,
    sample: missing[i],
    prompt: job.prompt,
    text: c.text,
    finish_reason: c.finishReason,
    usage: reply.usage,
    latency_ms: Math.round(reply.latencyMs),
    request,
    request_n: choices.length,
    ...(reply.usageScope === "first_choice" ? { usage_scope: "first_choice" as const } : {}),
    attempts: reply.attempts,
    ...(reply.retryReasons.length ? { retry_reasons: reply.retryReasons } : {}),
  }));
  // One write per request: a crash tears at most the last line, which resume repairs.
  appendJsonl(opts.samplesPath, records);
  stats.added += records.length;
  return records.length;
}
