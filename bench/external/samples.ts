// The raw samples file: one JSON line per sample, appended as replies arrive; resume reads it back.
import { copyFileSync, truncateSync } from "node:fs";
import { atomicWrite, readIfExists } from "../../common/fs.ts";
import type { TokenUsage } from "./client.ts";

/** One sampled continuation as stored in samples.jsonl. */
export interface SampleRecord {
  problemId: string;
  /** Sample index within the problem, 0..n-1; unique per problem. */
  sample: number;
  /** The prompt sent, template applied (absent in files written before it was recorded). */
  prompt?: string;
  text: string;
  finish_reason: string | null;
  /** Usage of the whole request this sample came from (shared by its `request_n` samples). */
  usage: TokenUsage | null;
  /** Wall time of the successful attempt of that request, in milliseconds. */
  latency_ms: number;
  /** Request id "problemId#firstSample"; usage totals count each request once. */
  request: string;
  request_n: number;
  /**
   * "first_choice" when `usage.completion_tokens` covers only the first of the request's choices (llama.cpp with
   * n > 1); absent when it covers all `request_n` of them.
   */
  usage_scope?: "first_choice";
  attempts: number;
  /** Why each failed attempt of that request failed, e.g. ["HTTP 503: overloaded"] (absent: none failed). */
  retry_reasons?: string[];
}

/** Drop a torn final line left by a crash mid-append, so the next append starts afresh; bytes dropped (0: none). */
export function repairTornTail(path: string): number {
  const bytes = readIfExists(path);
  if (bytes === null || bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) return 0;
  const keep = bytes.lastIndexOf(0x0a) + 1;
  truncateSync(path, keep);
  return bytes.length - keep;
}

/** A line of samples.jsonl that is not a sample record (bad JSON or missing fields), by 1-based number. */
export type BadLine = { line: number; problem: string };

/** Every line of the file: the records, and the bad lines (a torn final line without newline is skipped). */
function scanSamples(path: string): { lines: string[]; records: (SampleRecord | null)[]; bad: BadLine[] } {
  const bytes = readIfExists(path);
  if (bytes === null) return { lines: [], records: [], bad: [] };
  const lines = bytes.toString("utf8").split("\n");
  lines.pop(); // "" after the final newline, or a torn tail (repairTornTail drops it before appending)
  const bad: BadLine[] = [];
  const records = lines.map((line, i): SampleRecord | null => {
    if (line.trim() === "") return null;
    let r: SampleRecord;
    try {
      r = JSON.parse(line);
    } catch (e) {
      bad.push({ line: i + 1, problem: `invalid JSON (${(e as Error).message})` });
      return null;
    }
    if (typeof r?.problemId !== "string" || !Number.isInteger(r?.sample) || typeof r?.text !== "string") {
      bad.push({ line: i + 1, problem: "not a sample record (needs problemId, sample, text)" });
      return null;
    }
    return r;
  });
  return { lines, records, bad };
}

/**
 * Samples already on disk, by problem then sample index; a duplicate line (never written by us) keeps the first.
 * A bad line in the middle throws, naming the line and the `--repair` flag that drops it.
 */
export function readSamples(path: string): Map<string, Map<number, SampleRecord>> {
  const { records, bad } = scanSamples(path);
  if (bad.length > 0) {
    const more = bad.length > 1 ? ` (and ${bad.length - 1} more bad lines)` : "";
    throw new Error(
      `${path}:${bad[0].line}: ${bad[0].problem}${more}; re-run the same command with --repair to drop ` +
        `the bad lines (the file is backed up first)`,
    );
  }
  const out = new Map<string, Map<number, SampleRecord>>();
  for (const r of records) {
    if (r === null) continue;
    let byIndex = out.get(r.problemId);
    if (!byIndex) out.set(r.problemId, byIndex = new Map());
    if (!byIndex.has(r.sample)) byIndex.set(r.sample, r);
  }
  return out;
}

/**
 * `--repair`: drop every bad line of samples.jsonl, and every duplicate (problemId, sample) line after the first
 * (left by two writers on one folder), after copying the file to `<path>.bak-<UTC time>`; the dropped bad samples
 * are requested again. Returns one line saying what was dropped and where the backup is.
 */
export function repairSamples(path: string): string {
  repairTornTail(path);
  const { lines, records, bad } = scanSamples(path);
  const seen = new Set<string>();
  const drop = new Set(bad.map((b) => b.line));
  let duplicates = 0;
  records.forEach((r, i) => {
    if (r === null) return;
    const key = `${r.problemId}#${r.sample}`;
    if (seen.has(key)) drop.add(i + 1), duplicates++;
    seen.add(key);
  });
  if (drop.size === 0) return `--repair: ${path} has no bad line and no duplicate sample`;
  const backup = `${path}.bak-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  copyFileSync(path, backup);
  const kept = lines.filter((l, i) => !drop.has(i + 1) && l.trim() !== "");
  atomicWrite(path, kept.map((l) => l + "\n").join(""));
  return `--repair: dropped ${bad.length} bad lines` +
    (bad.length ? ` (lines ${bad.map((d) => d.line).join(", ")})` : "") +
    ` and ${duplicates} duplicate samples of ${path}; backup in ${backup}`;
}
