// When to retry a failed request and how long to wait: exponential backoff with jitter, or the server's Retry-After.
import type { Rng } from "../../common/prng.ts";

/** How retries are paced; delays in milliseconds. */
export interface RetryPolicy {
  /** Attempts after the first one before giving up. */
  maxRetries: number;
  /** Backoff before retry r (0-based) is baseMs·2^r, capped at maxMs, times a jitter factor in [0.5, 1). */
  baseMs: number;
  maxMs: number;
  /** A Retry-After longer than this is capped (a misbehaving server must not stall the run for hours). */
  maxRetryAfterMs: number;
}

/** Defaults suited to a shared inference server: 8 retries, 1 s doubling to 60 s, Retry-After up to 10 min. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 8,
  baseMs: 1000,
  maxMs: 60_000,
  maxRetryAfterMs: 600_000,
};

/** HTTP statuses worth retrying: request timeout, conflict, rate limiting and every server-side error. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Parse a Retry-After header into milliseconds: delta-seconds (fractions tolerated) or an HTTP date
 * (relative to `nowMs`); null when absent or unparseable, 0 for dates in the past.
 */
export function parseRetryAfter(header: string | null, nowMs = Date.now()): number | null {
  const text = header?.trim() ?? "";
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text); // NaN for "" and for anything not a date
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** Delay before retry number `retry` (0-based): the server's Retry-After if given, else jittered backoff. */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterMs: number | null,
  rng: Rng,
): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const backoff = Math.min(policy.maxMs, policy.baseMs * 2 ** retry);
  // Jitter spreads out clients that failed together so they do not retry in lockstep.
  return backoff * (0.5 + 0.5 * rng.float());
}
