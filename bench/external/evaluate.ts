// An external-model evaluation as a run folder: eval.json (older folders: sweep.json of kind "eval"), runs/<model-slug>/{config.json,
// samples.jsonl, eval.jsonl, status.json}, so `deno task report DIR` reads it like a sweep.
import { join } from "node:path";
import { exists } from "../../common/fs.ts";
import { configHash } from "../../common/hash.ts";
import { Rng } from "../../common/prng.ts";
import { machineInfo, versionInfo } from "../../common/provenance.ts";
import { readSamples } from "./samples.ts";
import type { FileDataset, MathRecord, PromptTemplate } from "../../datasets/mod.ts";
import {
  type EvalSample,
  readFolderFile,
  runDir,
  runFile,
  writeEvalSamples,
  writeFolderFile,
  writeRunConfig,
} from "../../common/run_folder.ts";
import { serverDefaults, type ServerValue } from "./sampling.ts";
import type { SamplingParams } from "./client.ts";
import { RECORD_VERSION, runRecordFrom, type SweepRecord } from "../../common/protocol.ts";
import { GRADE_TIMEOUT_MS, type GradeResult, graderVersion } from "../../evaluators/mod.ts";

/** Everything that defines an external evaluation. */
export interface EvalSettings extends SamplingParams {
  /** Normalised base URL (recorded, not part of the identity: a restarted server may move ports). */
  endpoint: string;
  model: string;
  mode: "chat" | "completions";
  dataset: string;
  /** First N problems (after the optional seeded shuffle); null = all. */
  limit: number | null;
  /** When set, the `limit` problems are a seeded random subset rather than the first ones. */
  subsetSeed: number | null;
  template: PromptTemplate;
  n: number;
  ks: number[];
  seed: number;
  /** Server-specific sampling parameters (`--sampling`), sent with every request; {} when none. */
  server: Record<string, ServerValue>;
  /** Grader mode (`--grader`); absent: "default". Not part of the samples' identity: eval.jsonl is re-graded. */
  grader?: "strict" | "default";
  /** A user's problem file (`--dataset FILE`): its path, the sha256 of its bytes and the fields read. */
  datasetFile?: Pick<FileDataset, "path" | "sha256" | "problemKey" | "answerKey"> & {
    /** The id field (absent: ids are row numbers). */
    idKey?: string;
    /** "keep-first" when repeated problems were left out (absent: there were none, or they were refused). */
    duplicates?: "keep-first";
  };
  /**
   * `--dataset synthetic:DIR`: the tfjs sweep or checkpoint folder whose held-out tasks are evaluated, the task
   * settings that define them, and how the sweep evaluated them (eval's defaults; a difference is noted).
   */
  taskSet?: {
    source: string;
    tasks: {
      families: string[];
      testSize: number;
      seed: number;
      difficulty: number;
      difficultyByFamily: Record<string, number>;
    };
    sweepEval: Pick<EvalSettings, "temperature" | "topP" | "maxTokens"> & {
      grader: "strict" | "default";
      template: string;
    };
  };
}

/** The problem fields an evaluation needs. */
export type EvalProblem = Pick<MathRecord, "id" | "problem" | "answer" | "meta">;

/** One graded sample in eval.jsonl (the run-folder format; `step` is 0: there is no training). */
export interface EvalRow extends EvalSample {
  step: 0;
  /** The reference answer the sample was graded against, as the dataset publishes it. */
  gold: string;
  rule: string;
  meta: { subject?: string; level?: number; family?: string; truncated: boolean };
}

/** Folder-safe name of a model, e.g. "Qwen/Qwen2.5-Math-7B" → "Qwen_Qwen2.5-Math-7B". */
export function modelSlug(model: string): string {
  const slug = model.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+|_+$/g, "");
  return slug === "" ? "model" : slug;
}

/**
 * The identity of the samples: what changes them. n, k, limit and the endpoint URL are left out on purpose, so
 * a re-run may ask for more samples or problems (it extends the same file) or reach the server on a new port.
 */
export function samplesIdentity(s: EvalSettings): string {
  return configHash({
    model: s.model,
    mode: s.mode,
    dataset: s.dataset,
    subsetSeed: s.subsetSeed,
    template: s.template.text,
    temperature: s.temperature,
    topP: s.topP,
    maxTokens: s.maxTokens,
    seed: s.seed,
    // Only when set, so folders made before --sampling existed keep their hash.
    ...(Object.keys(s.server).length ? { server: s.server } : {}),
    // A file's content and the fields read define its problems; its path does not (it may move).
    ...(s.datasetFile
      ? {
        file: {
          sha256: s.datasetFile.sha256,
          problem: s.datasetFile.problemKey,
          answer: s.datasetFile.answerKey,
          // Only when set, so folders made before these existed keep their hash.
          ...(s.datasetFile.idKey ? { id: s.datasetFile.idKey } : {}),
          ...(s.datasetFile.duplicates ? { duplicates: s.datasetFile.duplicates } : {}),
        },
      }
      : {}),
    // The task settings define the problems of synthetic:DIR (ids repeat across task seeds); its path does not.
    ...(s.taskSet ? { tasks: s.taskSet.tasks } : {}),
  });
}

/** eval.json's `config`: the invocation to re-run (null: not known) and the settings the record does not hold. */
function evalFileConfig(s: EvalSettings, command?: string) {
  const { endpoint, model, mode, dataset, taskSet, limit, subsetSeed, template } = s;
  // Only synthetic:DIR has a task set: the field is optional to readers.
  const tasks = taskSet && { taskSet };
  return { command: command ?? null, endpoint, model, mode, dataset, ...tasks, limit, subsetSeed, template };
}

/** eval.json's `config` (see `evalFileConfig`). */
export type EvalFileConfig = ReturnType<typeof evalFileConfig>;

/**
 * eval.json's `record` of an evaluation (common/protocol.ts): one seed on one model, and the protocol — the
 * dataset and which of its problems, the template, what was sent and what was left to the server's defaults,
 * the grader mode and version with the pool's per-answer timeout, n and ks.
 */
function evalRecord(s: EvalSettings): SweepRecord {
  const sent = { temperature: s.temperature, top_p: s.topP, max_tokens: s.maxTokens, seed: s.seed, stop: [] };
  const f = s.datasetFile;
  const ts = s.taskSet;
  const all = f
    ? `file ${f.path} (sha256 ${f.sha256.slice(0, 12)}; problem from ${f.problemKey}, ` +
      `answer from ${f.answerKey}${f.idKey ? `, id from ${f.idKey}` : ""}` +
      `${f.duplicates ? "; repeats left out" : ""})`
    : ts
    ? `test of ${ts.source} (${ts.tasks.testSize} problems; families ${ts.tasks.families.join(", ")}; ` +
      `task seed ${ts.tasks.seed})`
    : "test";
  const which = s.limit === null
    ? all
    : s.subsetSeed === null
    ? `${all}, first ${s.limit}`
    : `${all}, ${s.limit} at random (subset seed ${s.subsetSeed})`;
  return {
    version: RECORD_VERSION,
    design: { kind: "seeds", seeds: [s.seed] },
    methods: [{ name: s.model, preset: "external", family: "standard", baseline: null }],
    protocol: {
      datasets: [s.dataset],
      split: which,
      // A shipped template by name; a file by its path and the hash of its text (the file may change).
      template: /^[a-z-]+$/.test(s.template.name)
        ? s.template.name
        : `file ${s.template.name} (${configHash(s.template.text)})`,
      sampling: { sent: { ...sent, ...s.server }, serverDefaults: serverDefaults(s.server) },
      grader: { mode: s.grader ?? "default", version: graderVersion(), timeoutMs: GRADE_TIMEOUT_MS },
      n: s.n,
      ks: [...s.ks],
    },
  };
}

/** The problems to evaluate: all, the first `limit`, or a seeded random subset of `limit` (in dataset order). */
export function selectProblems<T>(
  records: readonly T[],
  limit: number | null,
  subsetSeed: number | null,
): T[] {
  if (limit === null || limit >= records.length) return [...records];
  if (subsetSeed === null) return records.slice(0, limit);
  const picked = Rng.seeded(subsetSeed).shuffle(records.map((_, i) => i)).slice(0, limit);
  return picked.sort((a, b) => a - b).map((i) => records[i]);
}

/** Paths of an evaluation's run folder. */
export type EvalPaths = ReturnType<typeof evalPaths>;

/** The paths of the run folder of these settings in `out` (nothing is read or written). */
export function evalPaths(out: string, s: EvalSettings) {
  const runId = modelSlug(s.model);
  const dir = runDir(out, runId);
  return { runId, runDir: dir, samplesPath: runFile(dir, "samples"), statusPath: runFile(dir, "status") };
}

/**
 * Check, without writing, that `out` may take these settings: empty, or an eval with the same identity hash.
 * A training sweep, samples made with other settings, or samples without the eval.json that says how they were
 * made are refused with a one-line error, so resume never mixes samples.
 */
export function checkEvalDir(out: string, s: EvalSettings): void {
  const old = readFolderFile(out);
  if (old === null) {
    const runs = join(out, "runs");
    const dirs = exists(runs) ? [...Deno.readDirSync(runs)].filter((e) => e.isDirectory) : [];
    const orphan = dirs.map((e) => runFile(join(runs, e.name), "samples")).find(exists);
    if (orphan) {
      throw new Error(
        `${out} holds samples (${orphan}) but no eval.json, so the settings they were made with are unknown; ` +
          `restore eval.json from a backup, or move runs/ away (mv ${runs} ${runs}.old) to start afresh`,
      );
    }
    return;
  }
  if (old.kind !== "eval") {
    throw new Error(`${out} holds a training sweep, not an eval; choose another --out`);
  }
  if (old.configHash !== samplesIdentity(s) || old.runIds[0] !== modelSlug(s.model)) {
    throw new Error(
      `${out} holds samples made with different settings (model, dataset or its file, template, sampling or seed); ` +
        `choose another --out or delete it`,
    );
  }
}

/**
 * Create or reopen the run folder after `checkEvalDir`: writes eval.json (with `command`, the invocation to
 * re-run; an older folder's sweep.json record moves there) and config.json.
 */
export function openEvalDir(out: string, s: EvalSettings, command?: string): void {
  const { runId, runDir } = evalPaths(out, s);
  const record = evalRecord(s);
  const { endpoint, model, mode, dataset, template } = s;
  writeFolderFile(out, {
    kind: "eval",
    config: evalFileConfig(s, command),
    record,
    configHash: samplesIdentity(s),
    runIds: [runId],
    versions: versionInfo(),
    machine: machineInfo(),
    writtenAt: new Date().toISOString(),
  });
  writeRunConfig(runDir, {
    runId,
    engine: "external",
    method: s.model,
    preset: "external",
    seed: s.seed,
    base: 0,
    algo: {},
    settings: { endpoint, model, mode, dataset, template: template.name },
    eval: { n: s.n, ks: s.ks, every: 0 },
    record: runRecordFrom(record, s.model),
  });
}

/**
 * Grade the first n samples of every problem with all n on disk and write eval.jsonl atomically (it is derived,
 * so it is rewritten whole from samples.jsonl each time). A sample cut off by max_tokens is graded as is and
 * flagged `truncated`; with `excludeTruncated` it is left out of eval.jsonl (and so of Pass@k), staying in
 * samples.jsonl.
 */
export async function gradeSamples(
  problems: readonly EvalProblem[],
  dataset: string,
  paths: EvalPaths,
  n: number,
  gradeMany: (items: { prediction: string; gold: string; problem: string }[]) => Promise<GradeResult[]>,
  excludeTruncated = false,
): Promise<EvalRow[]> {
  const onDisk = readSamples(paths.samplesPath);
  const flat = problems.flatMap((problem) => {
    const samples = Array.from({ length: n }, (_, i) => onDisk.get(problem.id)?.get(i));
    return samples.every((s) => s !== undefined) ? samples.map((s) => ({ problem, s: s! })) : [];
  }).filter(({ s }) => !(excludeTruncated && s.finish_reason === "length"));
  const grades = await gradeMany(
    flat.map(({ problem, s }) => ({ prediction: s.text, gold: problem.answer, problem: problem.problem })),
  );
  const rows: EvalRow[] = flat.map(({ problem, s }, i) => ({
    step: 0,
    dataset,
    problemId: problem.id,
    sample: s.sample,
    gold: problem.answer,
    correct: grades[i].correct,
    status: grades[i].status,
    extracted: grades[i].extracted,
    rule: grades[i].rule,
    meta: {
      subject: problem.meta.subject,
      level: problem.meta.level,
      // The synthetic task family: the report's per-family rows.
      ...(typeof problem.meta.family === "string" ? { family: problem.meta.family } : {}),
      truncated: s.finish_reason === "length",
    },
  }));
  writeEvalSamples(paths.runDir, rows);
  return rows;
}
