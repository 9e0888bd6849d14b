// The run-folder store: the only module that names the files of a sweep or run folder, with their typed readers
// and writers. Engines, the sweep runner, `deno task eval` and reports go through it. Layout (ARCHITECTURE.md,
// "Run folders"):
//   <sweep>/sweep.json
//   <eval>/eval.json                                               (`deno task eval`; older folders: sweep.json)
//   <sweep>/runs/<runId>/{config.json, status.json, metrics.jsonl, eval.jsonl, checkpoints/}
//   <eval>/runs/<model>/{…, samples.jsonl, health.json}        (`deno task eval`)
import { join } from "node:path";
import { atomicWrite, exists, readJson, readJsonl, writeJson } from "./fs.ts";
import { RECORD_VERSION, type RunRecord, runRecordOf, type SweepRecord, sweepRecordOf } from "./protocol.ts";

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

/** The folder of one run inside a sweep: `<sweepDir>/runs/<runId>`. */
export function runDir(sweepDir: string, runId: string): string {
  return join(sweepDir, "runs", runId);
}

/** Path of one of a run folder's files. */
export function runFile(dir: string, file: keyof typeof RUN_FILES): string {
  return join(dir, RUN_FILES[file]);
}

/** Path of a sweep folder's sweep.json: the sweep's own record, beside `runs/`. */
export function sweepFile(sweepDir: string): string {
  return join(sweepDir, "sweep.json");
}

/** Path of an evaluation folder's eval.json, beside `runs/` (older evaluations: sweep.json, still read). */
export function evalFile(dir: string): string {
  return join(dir, "eval.json");
}

/**
 * sweep.json (a sweep) or eval.json (an evaluation): what made the folder (`config`: a sweep's resolved config,
 * itself a valid `--config`, or an evaluation's settings), its typed `record` (design, methods, protocol; null
 * for a folder written before records), and provenance. `kind` is not stored: it is the file's.
 */
export interface FolderFile<C = unknown> {
  kind: "sweep" | "eval";
  config: C;
  record: SweepRecord | null;
  configHash: string;
  /** The runs planned, in order. */
  runIds: string[];
  versions: Record<string, string | null>;
  machine: Record<string, string | number>;
  writtenAt: string;
}

/** The provenance fields of sweep.json and eval.json, beside `config` and `record`. */
const PROVENANCE = ["configHash", "runIds", "versions", "machine", "writtenAt"] as const;

/** Fields a version-1 eval record kept beside its settings that the v2 record holds (or the file's kind says). */
const V1_EVAL_ONLY = ["kind", "name", "engine", "methods", "seeds", "eval", "sampling"];

/**
 * The one migration step of sweep.json/eval.json, pure: a version-2 value is returned as it is; a version-1 one
 * (the config's fields beside `record` and provenance) or one written before records (no `record`: null) is
 * split into `config`, `record` (version 2) and provenance. `kind` is "eval" for eval.json or a v1 record of
 * kind "eval", else "sweep".
 */
export function migrateFolderFile(raw: Record<string, unknown>, file: string): FolderFile {
  const kind = file.endsWith("eval.json") || raw.kind === "eval" ? "eval" : "sweep";
  if ("config" in raw) return { ...raw, kind } as unknown as FolderFile;
  const config = Object.fromEntries(
    Object.entries(raw).filter(([k]) =>
      !["record", "backend", ...PROVENANCE].includes(k) && !(kind === "eval" && V1_EVAL_ONLY.includes(k))
    ),
  );
  const provenance = Object.fromEntries(PROVENANCE.map((k) => [k, raw[k]]));
  return { ...provenance, kind, config, record: upgraded(raw.record) } as FolderFile;
}

/** A record of version 1 as version 2 (the same fields); another version as it is (refused on validation). */
function upgraded(record: unknown): unknown {
  const r = record as { version?: unknown } | undefined;
  return r?.version === 1 ? { ...r, version: RECORD_VERSION } : r ?? null;
}

/**
 * A folder's eval.json (an evaluation), else sweep.json (a sweep, or an evaluation written before eval.json),
 * migrated (`migrateFolderFile`) and its record validated; null when it has neither (e.g. a bare run folder).
 */
export function readFolderFile<C = unknown>(dir: string): FolderFile<C> | null {
  const path = [evalFile(dir), sweepFile(dir)].find(exists);
  if (!path) return null;
  const file = migrateFolderFile(readJson<Record<string, unknown>>(path), path);
  return { ...file, record: file.record && sweepRecordOf(file.record, path) } as FolderFile<C>;
}

/**
 * Write a folder's sweep.json or eval.json (by `kind`, atomically). An evaluation written before eval.json kept
 * its record in sweep.json: that file is removed once eval.json holds it, so a folder has one record.
 */
export function writeFolderFile(dir: string, file: FolderFile): void {
  const { kind, ...stored } = file;
  writeJson(kind === "eval" ? evalFile(dir) : sweepFile(dir), stored);
  const legacy = sweepFile(dir);
  if (kind === "eval" && exists(legacy) && readJson<{ kind?: string }>(legacy).kind === "eval") {
    Deno.removeSync(legacy);
  }
}

/**
 * config.json of a run: the resolved RunConfig (`S`: the engine's settings, `A`: its algorithm config; a
 * `deno task eval` run: `method` is the model, `settings` the eval's), its record (null: written before
 * records), and the backend the engine resolved while running (tfjs "auto" → "blas", `recordInConfig`).
 */
export interface RecordedConfig<S = unknown, A = unknown> {
  /** Folder name under `<sweep>/runs/`, e.g. "ace-grpo_a1_softplus_sum_s2". */
  runId: string;
  /** Engine name: "tabular" | "tfjs" | "verl". */
  engine: string;
  /** Method label shown in reports, e.g. "grpo", "ace-grpo". */
  method: string;
  /** Preset the method starts from (a key of the RL core's PRESETS). */
  preset: string;
  /** RL seed (within its base); every random choice of the run derives from it and the base (`runStream`). */
  seed: number;
  /**
   * 0-based index of the base model the run starts from (tfjs: `<sweep>/base/<b>/`; tabular: world b; VERL: 0,
   * the pretrained model). A config.json without it is base 0 (sweeps before bases shared one base).
   */
  base: number;
  /** The RL core's resolved algorithm (preset merged with overrides, schema-validated). */
  algo: A;
  /** Engine settings (world for tabular; model, SFT, task and RL schedule for tfjs; cluster for verl). */
  settings: S;
  /** n samples per problem, Pass@k at `ks`, evaluated every `every` steps. */
  eval: { n: number; ks: number[]; every: number };
  record: RunRecord | null;
  backendDecision?: BackendDecisionRecord;
}

/** What an engine learns while running and adds to its config.json (`RunHooks.onRecord`). */
export type LearnedFields = Pick<RecordedConfig, "backendDecision">;

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
  /** On the blas backend: the native kernels' library (bench/engines/tfjs/ops/native.ts), or why they are off. */
  native?: string;
}

/**
 * The one migration step of config.json, pure: a version-1 record becomes version 2, an absent one null, a
 * missing `base` 0, `model` (older evaluations) is the method, and what older folders kept at the top level
 * moves where the run has it: ACE's options (`ace`, before 2026-12-05) into `algo.ace`, `rl` into `settings.rl`.
 */
export function migrateRunConfig(raw: Record<string, unknown>): RecordedConfig {
  const { ace, rl, record, ...rest } = raw;
  const algo = (raw.algo ?? {}) as { ace?: unknown };
  return {
    ...rest,
    method: raw.method ?? raw.model,
    base: raw.base ?? 0,
    algo: ace && !algo.ace ? { ...algo, ace } : algo,
    settings: { ...(rl ? { rl } : {}), ...raw.settings as object },
    record: upgraded(record),
  } as RecordedConfig;
}

/** A run's config.json, migrated and its record validated (naming the file and field); null when absent. */
export function readRunConfig<S = unknown, A = unknown>(dir: string): RecordedConfig<S, A> | null {
  const path = runFile(dir, "config");
  if (!exists(path)) return null;
  const config = migrateRunConfig(readJson<Record<string, unknown>>(path));
  return { ...config, record: config.record && runRecordOf(config.record, path) } as RecordedConfig<S, A>;
}

/** Write a run's config.json (atomically). */
export function writeRunConfig(dir: string, config: RecordedConfig): void {
  writeJson(runFile(dir, "config"), config);
}

/** Add what the engine learned while running (e.g. the resolved backend) to the run's config.json. */
export function recordInConfig(dir: string, fields: LearnedFields): void {
  writeRunConfig(dir, { ...readRunConfig(dir)!, ...fields });
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
export function readStatus(dir: string): RunStatus | null {
  const path = runFile(dir, "status");
  return exists(path) ? readJson<RunStatus>(path) : null;
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
  atomicWrite(runFile(dir, "metrics"), jsonLines(records));
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

/** A run's graded eval.jsonl samples ([] when absent); a line with a bad field throws naming file, line, field. */
export function readEvalSamples(dir: string): EvalSample[] {
  const path = runFile(dir, "eval");
  return readJsonl<Record<string, unknown>>(path).map((s, i) => checkSample(s, `${path}:${i + 1}`));
}

/** Replace a run's eval.jsonl (atomically): for samples derived whole from another file (eval, VERL dumps). */
export function writeEvalSamples(dir: string, samples: readonly unknown[]): void {
  atomicWrite(runFile(dir, "eval"), jsonLines(samples));
}

/** Records as JSON-lines text. */
function jsonLines(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}

/** Rewrite a JSON-lines file without duplicate keys (first kept; a torn last line dropped); returns the count. */
function dedupeJsonl(path: string, key: (r: Record<string, unknown>) => unknown): number {
  const records = readJsonl<Record<string, unknown>>(path);
  // Reversed, so the first record of a key is the one the map keeps.
  const first = new Map(records.toReversed().map((r) => [JSON.stringify(key(r)), r]));
  const kept = records.filter((r) => first.get(JSON.stringify(key(r))) === r);
  if (kept.length < records.length) atomicWrite(path, jsonLines(kept));
  return records.length - kept.length;
}

/** `--repair` after two concurrent writers: drop repeated eval samples and metrics lines (first kept); counts. */
export function removeDuplicates(dir: string): { evalSamples: number; metricsLines: number } {
  return {
    evalSamples: dedupeJsonl(runFile(dir, "eval"), (s) => [s.step, s.dataset, s.problemId, s.sample]),
    metricsLines: dedupeJsonl(runFile(dir, "metrics"), (r) => r.step),
  };
}
