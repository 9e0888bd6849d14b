// The run-folder contract: what every engine (and `deno task eval`) writes and what sweeps, reports and the
// external evaluation read. Layout (ARCHITECTURE.md, "Run folders"):
//   <sweep>/sweep.json
//   <sweep>/runs/<runId>/{config.json, status.json, metrics.jsonl, eval.jsonl, checkpoints/}
import { join } from "node:path";
import { atomicWrite, exists, readJson, readJsonl } from "./fs.ts";

/** File names inside one run folder. */
export const RUN_FILES = {
  config: "config.json",
  status: "status.json",
  metrics: "metrics.jsonl",
  eval: "eval.jsonl",
  checkpoints: "checkpoints",
} as const;

/** The sweep's own record, beside `runs/`. */
export const SWEEP_FILE = "sweep.json";

/** The folder of one run inside a sweep: `<sweepDir>/runs/<runId>`. */
export function runDir(sweepDir: string, runId: string): string {
  return join(sweepDir, "runs", runId);
}

/** status.json of a run. */
export interface RunStatus {
  /** "planned": the engine only wrote a launch plan (VERL with settings.launch "none"). */
  state: "running" | "done" | "failed" | "planned";
  reason?: string;
  startedAt: string;
  finishedAt?: string;
  /** Wall seconds of the last attempt (feeds `--dry-run` estimates of later sweeps). */
  seconds?: number;
  /** How many times the run was started (1 + resumes). */
  attempts?: number;
}

/** Read a run's status.json, or null when the run never started. */
export function readStatus(dir: string): RunStatus | null {
  const path = join(dir, RUN_FILES.status);
  return exists(path) ? readJson<RunStatus>(path) : null;
}

/** One line of a run's eval.jsonl: a graded evaluation sample (engines add their own `meta`). */
export interface EvalSample {
  /** RL step the policy was evaluated at (0 = before RL). */
  step: number;
  dataset: string;
  problemId: string;
  /** Sample index within the problem, 0 … n−1. */
  sample: number;
  correct: boolean;
  /** The grader's status: correct | wrong | no_answer | parse_error | timeout. */
  status: string;
  extracted: string | null;
  rule?: string;
  meta?: Record<string, unknown>;
}

function checkSample(s: Record<string, unknown>, where: string): EvalSample {
  const bad = (field: string, want: string) => {
    throw new Error(`${where}: field '${field}' must be ${want}, got ${JSON.stringify(s[field])}`);
  };
  if (!Number.isInteger(s.step)) bad("step", "an integer");
  if (typeof s.dataset !== "string") bad("dataset", "a string");
  if (typeof s.problemId !== "string") bad("problemId", "a string");
  if (typeof s.correct !== "boolean") bad("correct", "true or false");
  return s as unknown as EvalSample;
}

/**
 * The graded samples of a run folder's eval.jsonl ([] when the file is absent). A line missing `step`,
 * `dataset`, `problemId` or `correct` throws an error naming the file, the line and the field.
 */
export function readEvalSamples(dir: string): EvalSample[] {
  const path = join(dir, RUN_FILES.eval);
  return readJsonl<Record<string, unknown>>(path).map((s, i) => checkSample(s, `${path}:${i + 1}`));
}

/** The index of an eval sample: one line per (step, dataset, problemId, sample) in a healthy eval.jsonl. */
function sampleKey(s: Record<string, unknown>): string {
  return JSON.stringify([s.step, s.dataset, s.problemId, s.sample]);
}

/** Keep the first line of each key; returns the kept lines and how many were dropped. */
function firstOfEach(lines: string[], key: (r: Record<string, unknown>) => string) {
  const seen = new Set<string>();
  const kept = lines.filter((line) => {
    const k = key(JSON.parse(line));
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { kept, dropped: lines.length - kept.length };
}

/** Rewrite a JSON-lines file without duplicate keys (first kept; a torn last line dropped); returns the count. */
function dedupeJsonl(path: string, key: (r: Record<string, unknown>) => string): number {
  if (!exists(path)) return 0;
  const lines = readJsonl<unknown>(path).map((r) => JSON.stringify(r));
  const { kept, dropped } = firstOfEach(lines, key);
  if (dropped > 0) atomicWrite(path, kept.map((l) => l + "\n").join(""));
  return dropped;
}

/**
 * `--repair` of a run folder damaged by two concurrent writers: drop duplicate eval samples (same step, dataset,
 * problemId, sample) and duplicate metrics lines (same step), keeping the first of each. Returns the counts.
 */
export function removeDuplicates(dir: string): { evalSamples: number; metricsLines: number } {
  return {
    evalSamples: dedupeJsonl(join(dir, RUN_FILES.eval), sampleKey),
    metricsLines: dedupeJsonl(join(dir, RUN_FILES.metrics), (r) => JSON.stringify(r.step)),
  };
}
