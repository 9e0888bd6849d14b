// A minimal OpenAI-compatible client (vLLM, SGLang, llama.cpp, Ollama): completions or chat, n per request,
// retries with backoff on 429/5xx/network errors/malformed replies, usage and latency recorded.
import { setTimeout as sleep } from "node:timers/promises";
import { Rng } from "../../common/prng.ts";
import { isRetryableStatus, parseRetryAfter, retryDelayMs, type RetryPolicy } from "./retry.ts";
import type { ServerValue } from "./sampling.ts";

/** Where and how to talk to the server. */
export interface Endpoint {
  /** Base URL including the API prefix, e.g. "http://127.0.0.1:8000/v1" (see `normaliseBaseUrl`). */
  baseUrl: string;
  model: string;
  /** Bearer token; sent only when set. */
  apiKey?: string;
  /** "chat" sends one user message to /chat/completions; "completions" sends the raw prompt to /completions. */
  mode: "chat" | "completions";
  /** Per-attempt timeout in milliseconds (a long generation can take minutes). */
  timeoutMs: number;
  retry: RetryPolicy;
  /** Name of the environment variable the key came from, quoted in the "refused key" error. */
  apiKeyEnv?: string;
  /** Aborting it (Ctrl-C) ends the request in flight and any backoff wait with an InterruptedError. */
  signal?: AbortSignal;
  /** The server is llama.cpp's llama-server (its GET /models says owned_by "llamacpp"), told by `preflight`. */
  llamaCpp?: boolean;
}

/** Sampling parameters sent with every request (OpenAI names on the wire), and `stop: []`. */
export interface SamplingParams {
  temperature: number;
  topP: number;
  maxTokens: number;
  /** Server-specific parameters (`--sampling`: top_k, min_p, repetition_penalty, …), sent as given. */
  server?: Readonly<Record<string, ServerValue>>;
}

/** Token counts for a whole request (all n choices together), as the server reports them. */
export type TokenUsage = { prompt_tokens: number; completion_tokens: number };

/**
 * A successful request: its choices in index order, usage, the wall time (ms) of the successful attempt, and the
 * reason of each failed attempt before it.
 */
export type ApiCompletion = Awaited<ReturnType<typeof complete>>;

/** A failure retrying cannot fix (refused key, unknown model, bad request); `reason`: "HTTP 400: <message>". */
export class EndpointError extends Error {
  constructor(message: string, readonly status?: number, readonly reason?: string) {
    super(message);
    this.name = "EndpointError";
  }
}

/** The endpoint cannot serve this run at all (unreachable, not the API, the model not served): no problem can pass. */
export class EndpointSetupError extends EndpointError {
  override name = "EndpointSetupError";
}

/**
 * True for a rejection of one request rather than of the whole run: a 4xx other than 401/403 (the key),
 * 404 (the model or route) and the retried 408/409/429, e.g. vLLM's 400 for a prompt + max_tokens past the
 * model's context. The problem is recorded as failed and the run goes on.
 */
export function isPerRequestRejection(e: unknown): e is EndpointError {
  const s = (e as EndpointError)?.status;
  return e instanceof EndpointError && s !== undefined && s >= 400 && s < 500 &&
    ![401, 403, 404].includes(s) &&
    !isRetryableStatus(s);
}

/** The run was interrupted (SIGINT/SIGTERM) while a request or a backoff wait was under way. */
export class InterruptedError extends Error {
  constructor(readonly signal: string) {
    super(`interrupted by ${signal}`);
    this.name = "InterruptedError";
  }
}

/** Throw an InterruptedError when the endpoint's signal has been aborted (its reason names the signal). */
function checkInterrupted(ep: Endpoint): void {
  if (ep.signal?.aborted) throw new InterruptedError(String(ep.signal.reason ?? "abort"));
}

/** Transient failures persisted past the retry budget; re-running resumes. */
export class RetriesExhaustedError extends Error {
  /** `last` is the reason of the final failed attempt, e.g. "HTTP 503: overloaded" or "malformed JSON reply: …". */
  constructor(message: string, readonly last: string) {
    super(message);
    this.name = "RetriesExhaustedError";
  }
}

/** Accept "http://host:8000" or ".../v1": a bare host gets "/v1"; any other path is kept as given. */
export function normaliseBaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EndpointError(`--endpoint: '${url}' is not a URL; pass e.g. http://127.0.0.1:8000/v1`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new EndpointError(`--endpoint: '${url}' must start with http:// or https://`);
  }
  const path = parsed.pathname.replace(/\/+$/, "");
  return `${parsed.origin}${path === "" ? "/v1" : path}`;
}

/** A successful attempt, or a failed one worth retrying (after Retry-After when the server sent one). */
type Attempt = { body: unknown; latencyMs: number } | { reason: string; retryAfterMs?: number | null };

/**
 * One HTTP attempt: network trouble, a malformed reply or one `isValid` rejects is retryable; a non-retryable
 * HTTP status throws the fatal EndpointError at once.
 */
async function attempt(
  ep: Endpoint,
  path: string,
  body: unknown | undefined,
  isValid: (body: unknown) => string | null,
): Promise<Attempt> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (ep.apiKey) headers.authorization = `Bearer ${ep.apiKey}`;
  const start = performance.now();
  const timeout = AbortSignal.timeout(ep.timeoutMs);
  let res: Response | undefined;
  let text: string;
  try {
    res = await fetch(`${ep.baseUrl}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: ep.signal ? AbortSignal.any([timeout, ep.signal]) : timeout,
    });
    text = await res.text();
  } catch (e) {
    checkInterrupted(ep);
    // Headers came but the body did not: the server dropped the connection mid-reply.
    return { reason: res ? `connection dropped mid-reply (${networkReason(e, ep)})` : networkReason(e, ep) };
  }
  const latencyMs = performance.now() - start;
  if (!res.ok) {
    const reason = `HTTP ${res.status}: ${serverMessage(text)}`;
    if (!isRetryableStatus(res.status)) throw fatalError(ep, res.status, reason);
    return { reason, retryAfterMs: parseRetryAfter(res.headers.get("retry-after")) };
  }
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return { reason: `malformed JSON reply: ${text.slice(0, 80)}` };
  }
  const problem = isValid(reply);
  return problem === null ? { body: reply, latencyMs } : { reason: `malformed reply: ${problem}` };
}

function networkReason(e: unknown, ep: Endpoint): string {
  const err = e as Error & { cause?: Error };
  if (err?.name === "TimeoutError") return `no reply within ${ep.timeoutMs} ms`;
  // fetch says only "fetch failed"; the cause holds the useful part, e.g. "Connection refused (os error 111)".
  const detail = err?.cause?.message?.split(": ").at(-1);
  const message = err?.message?.split("\n")[0] ?? String(e);
  return detail ? `${message}: ${detail}` : message;
}

/** The server's own error message, from an OpenAI-style `{ error: { message } }` body or the raw text. */
function serverMessage(text: string): string {
  try {
    const j = JSON.parse(text);
    const msg = j?.error?.message ?? j?.message ?? j?.detail ?? j?.error;
    if (typeof msg === "string") return msg.split("\n")[0].slice(0, 200);
  } catch { /* not JSON: use the text */ }
  return text.split("\n")[0].slice(0, 200) || "(empty body)";
}

/** Turn a non-retryable HTTP failure into a one-line error that says what to do. */
function fatalError(ep: Endpoint, status: number | undefined, reason: string): EndpointError {
  const where = ep.apiKeyEnv ? `the key in $${ep.apiKeyEnv}` : "the request without an API key";
  const message = status === 401 || status === 403
    ? `${ep.baseUrl} refused ${where} (${reason}); pass --api-key-env VAR naming a variable that holds a valid key`
    : status === 404
    ? `${ep.baseUrl}: ${reason}; check --model (GET ${ep.baseUrl}/models lists the served names), ` +
      `--endpoint and --chat/--completions`
    : `${ep.baseUrl} rejected the request (${reason}); ` +
      `check --max-tokens, --n and the prompt template against what the server accepts`;
  return new EndpointError(message, status, reason);
}

/**
 * Send a request, retrying transient failures with backoff (Retry-After honoured) up to the policy's budget.
 * `isValid` rejects a 200 reply whose shape is wrong, which is then retried like malformed JSON.
 */
async function requestJson(
  ep: Endpoint,
  path: string,
  body: unknown | undefined,
  rng: Rng,
  isValid: (body: unknown) => string | null = () => null,
  onRetry?: (reason: string, delayMs: number) => void,
): Promise<{ body: unknown; latencyMs: number; attempts: number; retryReasons: string[] }> {
  const retryReasons: string[] = [];
  for (let retry = 0;; retry++) {
    const a = await attempt(ep, path, body, isValid);
    if ("body" in a) return { ...a, attempts: retry + 1, retryReasons };
    retryReasons.push(a.reason);
    if (retry >= ep.retry.maxRetries) break;
    const delayMs = retryDelayMs(ep.retry, retry, a.retryAfterMs ?? null, rng);
    onRetry?.(a.reason, delayMs);
    // An abort (Ctrl-C) ends the wait at once, as a rejection; checkInterrupted names the signal.
    await sleep(delayMs, undefined, { signal: ep.signal }).catch(() => {});
    checkInterrupted(ep);
  }
  const last = retryReasons.at(-1)!;
  throw new RetriesExhaustedError(`gave up after ${ep.retry.maxRetries + 1} attempts (last: ${last})`, last);
}

/** Check a completions/chat reply; returns what is wrong with it, or null. */
function completionProblem(mode: Endpoint["mode"]) {
  return (body: unknown): string | null => {
    const choices = (body as { choices?: unknown })?.choices;
    if (!Array.isArray(choices) || choices.length === 0) return "no choices";
    for (const c of choices) {
      const text = mode === "chat" ? c?.message?.content : c?.text;
      // A chat reply may carry null content when a reasoning parser moved everything elsewhere.
      if (typeof text !== "string" && !(mode === "chat" && text === null)) return "a choice without text";
    }
    return null;
  };
}

/** Ask for `n` continuations of one prompt; the server may return fewer (some ignore `n`). */
export async function complete(
  ep: Endpoint,
  prompt: string,
  n: number,
  params: SamplingParams,
  seed: number,
  rng: Rng,
  onRetry?: (reason: string, delayMs: number) => void,
) {
  // Server-specific parameters first, so eval's own can never be overridden (parseServerSampling refuses them).
  const common = {
    ...params.server,
    model: ep.model,
    n,
    temperature: params.temperature,
    top_p: params.topP,
    max_tokens: params.maxTokens,
    seed,
    stop: [],
  };
  const [path, body] = ep.mode === "chat"
    ? ["/chat/completions", { ...common, messages: [{ role: "user", content: prompt }] }]
    : ["/completions", { ...common, prompt }];
  const { body: raw, ...meta } = await requestJson(ep, path, body, rng, completionProblem(ep.mode), onRetry);
  const reply = raw as {
    choices: {
      index?: number;
      text?: string;
      message?: { content: string | null };
      finish_reason?: string;
    }[];
    usage?: Partial<TokenUsage>;
    timings?: unknown;
  };
  const ordered = [...reply.choices].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const choices = ordered.map((c) => ({
    text: (ep.mode === "chat" ? c.message?.content : c.text) ?? "",
    // "stop", "length" (truncated by max_tokens), or whatever the server reports.
    finishReason: c.finish_reason ?? null,
  }));
  const u = reply.usage;
  const usage = u && typeof u.prompt_tokens === "number" && typeof u.completion_tokens === "number"
    ? { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens }
    : null;
  // llama.cpp merges n single-choice results and keeps the first one's usage; its replies carry `timings`.
  const llamaCpp = ep.llamaCpp || (typeof reply.timings === "object" && reply.timings !== null);
  // What `usage.completion_tokens` covers: with n > 1 on llama.cpp, the first choice only.
  const usageScope: "all" | "first_choice" = choices.length > 1 && llamaCpp ? "first_choice" : "all";
  return { choices, usage, usageScope, ...meta };
}

/** The preflight failure, told apart: a failing server, something that is not the API, or nothing listening. */
function unreachable(ep: Endpoint, last: string): EndpointError {
  return new EndpointSetupError(
    last.startsWith("HTTP ")
      ? `${ep.baseUrl} keeps failing (${last}); check the server's log, then re-run`
      : last.startsWith("malformed")
      ? `${ep.baseUrl} is not an OpenAI-compatible API (GET /models: ${last}); fix --endpoint (it usually ends in /v1)`
      : `cannot reach ${ep.baseUrl} (${last}); start the server or fix --endpoint`,
  );
}

/**
 * Check the server before sampling: reachable, key accepted, model served; returns the served names and whether
 * it is llama.cpp's llama-server (GET /models lists owned_by "llamacpp"; its usage with n > 1 covers one choice).
 * Throws a one-line EndpointError saying what to do. A server without GET /models (404) is let through; sampling
 * will surface a bad name. It tries as often as --retries says, with short waits (0.2 s doubling to 1 s).
 */
export async function preflight(ep: Endpoint): Promise<{ names: string[]; llamaCpp: boolean }> {
  const quick: Endpoint = { ...ep, retry: { ...ep.retry, baseMs: 200, maxMs: 1000 } };
  let body: unknown;
  try {
    body = (await requestJson(quick, "/models", undefined, Rng.seeded("preflight"))).body;
  } catch (e) {
    if (e instanceof EndpointError && e.status === 404) return { names: [], llamaCpp: false };
    if (e instanceof RetriesExhaustedError) throw unreachable(ep, e.last);
    throw e;
  }
  const data = (body as { data?: { id?: unknown; owned_by?: unknown }[] })?.data;
  if (!Array.isArray(data)) return { names: [], llamaCpp: false };
  const names = data.map((d) => String(d?.id));
  const llamaCpp = data.some((d) => d?.owned_by === "llamacpp");
  if (names.length > 0 && !names.includes(ep.model)) {
    throw new EndpointSetupError(
      `model '${ep.model}' is not served by ${ep.baseUrl} (it serves: ${names.slice(0, 8).join(", ")}); ` +
        `pass one of those with --model`,
    );
  }
  return { names, llamaCpp };
}
