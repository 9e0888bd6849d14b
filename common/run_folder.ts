// The run-folder store: the only module that names the files of a sweep or run folder, with their typed readers
// and writers. Engines, the sweep runner, `deno task eval` and reports go through it. Layout (ARCHITECTURE.md,
// "Run folders"):
//   <sweep>/sweep.json
//   <eval>/eval.json                                               (`deno task eval`; older folders: sweep.json)
//   <sweep>/runs/<runId>/{config.json, status.json, metrics.jsonl, eval.jsonl, checkpoints/}
//   <eval>/runs/<model>/{…, samples.jsonl, health.json}        (`deno task eval`)
import { join } from "node:path";
import { atomicWrite, exists, readJson, readJsonl, writeJson } from "./fs.ts";

/** File names inside one run folder. */
export const RUN_FILES = {
  config: "config.json",
  status: "status.json",
  metrics: "metrics.jsonl",
  eval: "eval.jsonl",
  /** `deno task eval`: the raw samples, appended as they arrive (owned by bench/external/samples.ts). */
  samples: "samples.jsonl",
  /** `deno task eval`: the run-health record. */
  health: "health.json",
  checkpoints: "checkpoints",
} as const;

/** The sweep's own record, beside `runs/`. */
export const SWEEP_FILE = "sweep.json";

/**
 * An evaluation's record (`deno task eval`: model, endpoint, dataset, template, sampling, protocol), beside
 * `runs/`. Folders written before it have the same record (kind "eval") as sweep.json, which is still read.
 */
export const EVAL_FILE = "eval.json";

/** The folder of one run inside a sweep: `<sweepDir>/runs/<runId>`. */
export function runDir(sweepDir: string, runId: string): string {
  return join(sweepDir, "runs", runId);
}

/** Path of one of a run folder's files. */
export function runFile(dir: string, file: keyof typeof RUN_FILES): string {
  return join(dir, RUN_FILES[file]);
}

/** Path of a sweep folder's sweep.json. */
export function sweepFile(sweepDir: string): string {
  return join(sweepDir, SWEEP_FILE);
}

/** Path of an evaluation folder's eval.json. */
export function evalFile(dir: string): string {
  return join(dir, EVAL_FILE);
}

/**
 * The file holding a folder's record: eval.json (an evaluation), else sweep.json (a sweep, or an evaluation
 * written before eval.json), or null when it has neither (e.g. a bare run folder).
 */
export function recordFile(dir: string): string | null {
  return exists(evalFile(dir)) ? evalFile(dir) : exists(sweepFile(dir)) ? sweepFile(dir) : null;
}

/** A folder's record (`recordFile`: eval.json or sweep.json), or null when it has none. */
export function readSweepRecord<T = Record<string, unknown>>(sweepDir: string): T | null {
  const path = recordFile(sweepDir);
  return path ? readJson<T>(path) : null;
}

/**
 * Write an evaluation folder's eval.json (atomically). A folder written before eval.json keeps its record in
 * sweep.json (kind "eval"): that file is removed once eval.json holds the record, so a folder has one record.
 */
export function writeEvalRecord(dir: string, record: Record<string, unknown>): void {
  writeJson(evalFile(dir), record);
  const legacy = sweepFile(dir);
  if (exists(legacy) && readJson<{ kind?: string }>(legacy).kind === "eval") Deno.removeSync(legacy);
}

/** Write a sweep folder's sweep.json (atomically). */
export function writeSweepRecord(sweepDir: string, record: unknown): void {
  writeJson(sweepFile(sweepDir), record);
}

/**
 * config.json of a run as readers use it: the resolved RunConfig plus `ace` (sweeps), or the eval settings
 * (`deno task eval`: `model` instead of `method`). Every field is optional because folder kinds differ.
 */
export interface RecordedConfig {
  runId?: string;
  engine?: string;
  method?: string;
  model?: string;
  preset?: string;
  seed?: number;
  /** 0-based base model the run starts from; absent means 0. */
  base?: number;
  eval?: { n?: number; ks?: number[]; every?: number };
  settings?: { rl?: { steps?: number }; [key: string]: unknown };
  rl?: { steps?: number };
  /** The run's typed record (method family and baseline, evaluation protocol): common/protocol.ts `runRecordOf`. */
  record?: unknown;
  /** The backend the engine resolved while running (tfjs "auto" → "blas"), recorded through `recordInConfig`. */
  backendDecision?: BackendDecisionRecord;
  [key: string]: unknown;
}

/** A backend decision as config.json records it (tfjs `BackendDecision`): what was asked, what ran, and why. */
export interface BackendDecisionRecord {
  requested: string;
  backend: string;
  reason: string;
  /** What `auto` measured per candidate backend (ms), when it measured. */
  measured?: Record<string, number>;
  /** On the blas backend: the library, its kernels and threads per product. */
  blas?: { library: string; core: string; threads: number };
  /** Threads of the process that ran its products (1 off blas), and whether large products were cut in two. */
  blasThreads?: { threads: number; split: boolean };
}

/** A run's config.json, or null when the run has none yet. */
export function readRunConfig(dir: string): RecordedConfig | null {
  return exists(runFile(dir, "config")) ? readJson<RecordedConfig>(runFile(dir, "config")) : null;
}

/** Write a run's config.json (atomically). */
export function writeRunConfig(dir: string, config: RecordedConfig): void {
  writeJson(runFile(dir, "config"), config);
}

/** Add fields the engine learned while running (e.g. the resolved backend) to the run's config.json. */
export function recordInConfig(dir: string, fields: Record<string, unknown>): void {
  writeRunConfig(dir, { ...readRunConfig(dir), ...fields });
}

/** status.json of a run. */
export interface RunStatus {
  /**
   * "planned": the engine only wrote a launch plan (VERL with settings.launch "none"); "interrupted": stopped by
   * SIGINT/SIGTERM (`deno task eval`), resumable by re-running the same command.
   */
  state: "running" | "done" | "failed" | "planned" | "interrupted";
  reason?: string;
  startedAt: string;
  finishedAt?: string;
  /** Wall seconds of the last attempt (feeds `--dry-run` estimates of later sweeps). */
  seconds?: number;
  /** How many times the run was started (1 + resumes). */
  attempts?: number;
  /** A line for readers (eval: how many problems failed; VERL ingest: the step the dumps reach). */
  note?: string;
  /** `deno task eval`: the problems the server refused or that ran out of retries, with the error. */
  failedProblems?: { problemId: string; error: string }[];
  /** VERL ingest with --partial: cells whose dumps lack samples, each with what it lacks (the report marks them †). */
  lostSamples?: { dataset: string; step: number; message: string }[];
  /**
   * VERL: validation problems over the run's data.max_prompt_length that its prompt filter left out, counted with
   * the model's tokenizer ("tokenizer") or bounded ("estimate": tokens is an upper bound).
   */
  filteredProblems?: {
    maxPromptLength: number;
    method: "tokenizer" | "estimate";
    problems: { dataset: string; problemId: string; tokens: number }[];
  };
  /** VERL: times a reward grader was restarted during the run (reward.py logs each in verl/grader_restarts.jsonl). */
  graderRestarts?: number;
  /** VERL: sha256 of the sweep's bundled grader (its SHA256SUMS) the run was planned with and scored by. */
  graderBundleSha256?: string;
  /** VERL through Ray's job API: the run's current submission (id without timestamp, attempt from 1). */
  rayJob?: { submissionId: string; attempt: number; state: string };
}

/** Read a run's status.json, or null when the run never started. */
export function readStatus<T extends RunStatus = RunStatus>(dir: string): T | null {
  const path = runFile(dir, "status");
  return exists(path) ? readJson<T>(path) : null;
}

/** The one writer of status.json (atomic); every field is declared in RunStatus (no caller adds its own). */
export function writeStatus(dir: string, status: RunStatus): void {
  writeJson(runFile(dir, "status"), status);
}

/** A run's metrics.jsonl records ([] when absent; a torn last line is ignored). */
export function readMetrics<T = Record<string, unknown>>(dir: string): T[] {
  return readJsonl<T>(runFile(dir, "metrics"));
}

/** Replace a run's metrics.jsonl (atomically) with these records. */
export function writeMetrics(dir: string, records: readonly unknown[]): void {
  atomicWrite(runFile(dir, "metrics"), records.map((r) => JSON.stringify(r) + "\n").join(""));
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
  const path = runFile(dir, "eval");
  return readJsonl<Record<string, unknown>>(path).map((s, i) => checkSample(s, `${path}:${i + 1}`));
}

/** Replace a run's eval.jsonl (atomically): for samples derived whole from another file (eval, VERL dumps). */
export function writeEvalSamples(dir: string, samples: readonly unknown[]): void {
  atomicWrite(runFile(dir, "eval"), samples.map((r) => JSON.stringify(r) + "\n").join(""));
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
    evalSamples: dedupeJsonl(runFile(dir, "eval"), sampleKey),
    metricsLines: dedupeJsonl(runFile(dir, "metrics"), (r) => JSON.stringify(r.step)),
  };
}
