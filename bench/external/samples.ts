// The raw samples file: one JSON line per sample, appended as replies arrive; resume reads it back.
import { readFileSync, truncateSync } from "node:fs";
import { appendJsonl, readJsonl } from "../../common/fs.ts";
import type { TokenUsage } from "./client.ts";

/** One sampled continuation as stored in samples.jsonl. */
export interface SampleRecord {
  problemId: string;
  /** Sample index within the problem, 0..n-1; unique per problem. */
  sample: number;
  text: string;
  finish_reason: string | null;
  /** Usage of the whole request this sample came from (shared by its `request_n` samples). */
  usage: TokenUsage | null;
  /** Wall time of the successful attempt of that request, in milliseconds. */
  latency_ms: number;
  /** Request id "problemId#firstSample"; usage totals count each request once. */
  request: string;
  request_n: number;
  attempts: number;
}

/**
 * Drop a torn final line left by a crash mid-append, so the next append starts on a fresh line.
 * Returns the number of bytes dropped (0 when the file is absent or intact).
 */
export function repairTornTail(path: string): number {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return 0;
    throw e;
  }
  if (bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) return 0;
  const keep = bytes.lastIndexOf(0x0a) + 1;
  truncateSync(path, keep);
  return bytes.length - keep;
}

/** Samples already on disk, by problem then sample index; a duplicate line (never written by us) keeps the first. */
export function readSamples(path: string): Map<string, Map<number, SampleRecord>> {
  const out = new Map<string, Map<number, SampleRecord>>();
  readJsonl<SampleRecord>(path).forEach((r, line) => {
    if (typeof r?.problemId !== "string" || !Number.isInteger(r?.sample) || typeof r?.text !== "string") {
      throw new Error(`${path}:${line + 1}: not a sample record (needs problemId, sample, text)`);
    }
    let byIndex = out.get(r.problemId);
    if (!byIndex) out.set(r.problemId, byIndex = new Map());
    if (!byIndex.has(r.sample)) byIndex.set(r.sample, r);
  });
  return out;
}

/** Append one request's samples in a single write; a crash tears at most the last line, which resume repairs. */
export function appendSamples(path: string, records: readonly SampleRecord[]): void {
  appendJsonl(path, records);
}
