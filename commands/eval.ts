// `deno task eval`: sample an OpenAI-compatible server on a dataset, grade with gradeMany, write the Pass@k
// report. Lives in commands/ because it composes datasets → bench/external → reports.
import { resolve } from "node:path";
import {
  bool,
  flagLines,
  type FlagTable,
  type FlagValues,
  int,
  list,
  num,
  parseTable,
  shellQuote,
  str,
  UsageError,
} from "../common/args.ts";
import { exists } from "../common/fs.ts";
import { lockFolder } from "../common/lock.ts";
import { progressBar, progressEnabled } from "../common/progress.ts";
import {
  DATASET_NAMES,
  fileDatasetName,
  isDatasetFile,
  loadFileDataset,
  type MathRecord,
  resolveTemplate,
} from "../datasets/mod.ts";
import {
  DEFAULT_RETRY,
  defaultTemplateFor,
  type EvalOutcome,
  type EvalProblem,
  type EvalRow,
  type EvalSettings,
  evaluateEndpoint,
  failureAdvice,
  InterruptedError,
  normaliseBaseUrl,
  parseServerSampling,
  ProgressLog,
  readSamples,
  renderHealth,
  selectProblems,
  type TransportOptions,
} from "../bench/external/mod.ts";
import { type ExtraColumn, reportedKs, suiteCell, writeReport } from "../reports/mod.ts";
import { slicesOf } from "../reports/passk.ts";
import { fetchHint, loadFetched, runSuite, SUITES, type SuiteStep } from "./eval_suite.ts";
import {
  checkpointSettings,
  COMPACT_TEMPLATE,
  defaultSettings,
  renderPrompt,
  taskSets,
} from "../bench/engines/tfjs/mod.ts";

/** The flags of `deno task eval`, declared once for parsing, --help and validation. */
export const FLAGS = {
  endpoint: str("URL", "server base URL, e.g. http://127.0.0.1:8000/v1 (a bare host gets /v1)"),
  model: str("NAME", "model name as the server lists it (GET /v1/models)"),
  dataset: str(
    "NAME|FILE",
    `${
      DATASET_NAMES.join(" | ")
    } (deno task fetch first); a .jsonl/.parquet file (reported as file-<stem>); ` +
      "or synthetic:DIR, the held-out tasks of a tfjs sweep or checkpoint (its evaluation's settings the " +
      "defaults)",
  ),
  suite: str(
    "NAME",
    `rlvr: ${SUITES.rlvr.join(", ")} in turn, each in DIR/<dataset>/, then DIR/suite.md and suite.csv`,
  ),
  "problem-key": str("KEY", "with --dataset FILE: the problem's field (default problem, else question)"),
  "answer-key": str(
    "KEY",
    "with --dataset FILE: the answer's field (default answer, else solution's last \\boxed{}); KEY:boxed, " +
      "KEY:gsm8k extract from KEY",
  ),
  "id-key": str("KEY", "with --dataset FILE: the id's field (default id, idx or unique_id, else the line)"),
  duplicates: str(
    "MODE",
    "with --dataset FILE: a repeated problem is refused naming both lines (the default) or kept once",
    { choices: ["refuse", "keep-first"] },
  ),
  out: str("DIR", "the eval's folder (required)"),
  limit: int("only the first N problems (with --subset-seed: a seeded random N)", { min: 1 }),
  "subset-seed": int("with --limit: the seed of the random N", { min: 0, value: "S" }),
  n: int("samples per problem (one request where supported)", { min: 1, default: 1 }),
  k: list("k values for Pass@k, each <= n (default: powers of two up to n)"),
  temperature: num("sampling temperature (default 0.6)", { min: 0, max: 100, value: "T" }),
  "top-p": num("nucleus sampling (default 0.95)", { min: Number.MIN_VALUE, max: 1, value: "P" }),
  "max-tokens": int("default 4096; a sample cut off there is flagged truncated", { min: 1 }),
  seed: int("base seed of the requests' seeds", { min: 0, default: 0, value: "S" }),
  sampling: str(
    "LIST",
    "server-specific sampling parameters, NAME=VALUE,... or JSON, e.g. top_k=-1,min_p=0 (recorded; see " +
      "docs/external-eval.md)",
  ),
  chat: bool("chat/completions with one user message (the default)"),
  completions: bool("raw completions instead of chat"),
  "prompt-template": str(
    "X",
    "dapo-answer | boxed | raw | compact (the tfjs engine's prompts) | a FILE with {problem} (default: " +
      "dapo-answer for dapo-math-17k, boxed otherwise)",
  ),
  "api-key-env": str("VAR", "send the key held in variable VAR as a bearer token"),
  concurrency: int("requests in flight", { min: 1, default: 16 }),
  "max-n-per-request": int(
    "cap n per request (default: n; lowered, and said once, if the server refuses or ignores n)",
    { min: 1 },
  ),
  timeout: num("seconds per request attempt", { min: 0.001, default: 600, value: "S" }),
  retries: int("retries per request on 429/5xx/network errors", {
    min: 0,
    default: DEFAULT_RETRY.maxRetries,
  }),
  grader: str(
    "MODE",
    "default (a benchmark score) or strict (explicit answer markers only, as sweeps grade); recorded",
    { choices: ["default", "strict"] },
  ),
  "exclude-truncated": bool("leave samples cut off at --max-tokens out of Pass@k"),
  repair: bool("drop bad and duplicate lines of samples.jsonl (after a backup) and redo them"),
  "cache-dir": str("DIR", "dataset cache (default $ACEBENCH_CACHE or ~/.cache/acebench)"),
  mirror: str("DIR", "fetch a missing dataset from this offline folder (deno task fetch --list)"),
} as const satisfies FlagTable;

/** Usage text for `deno task eval`. */
export const usage =
  `usage: deno task eval --endpoint URL --model NAME (--dataset NAME|FILE | --suite rlvr) --out DIR [flags]

Samples n answers per problem from any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama,
or \`deno task serve\`), appending each to DIR/runs/<model>/samples.jsonl as it arrives, grades them
and writes the same Pass@k report as a sweep (DIR/passk.csv, summary.md, plots/; per subject and
level for MATH-500), with a run-health block in summary.md. Re-running the same command resumes
without repeating or losing a sample. A problem the server rejects (e.g. prompt + max tokens past the
model's context) or that runs out of retries is listed and left out of Pass@k; the run finishes,
exits 1, and the same command retries only those problems. One eval per --out at a time. Ctrl-C
(SIGINT/SIGTERM) stops at once with status "interrupted" (exit 130/143); the same command resumes.

${flagLines(FLAGS)}

example:
  deno task eval --endpoint http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-Math-1.5B --dataset math500 \\
    --n 8 --k 1,2,4,8 --completions --prompt-template boxed --out out/eval-qwen-math500`;

/** Parsed eval flags. */
type Values = FlagValues<typeof FLAGS>;

/** A required flag's value; UsageError naming it when absent. */
function required(v: Values, flag: "endpoint" | "model" | "dataset" | "out"): string {
  const value = v[flag];
  if (!value) throw new UsageError(`--${flag} is required`);
  return value;
}

/** Parse and check every flag into settings; UsageError on anything malformed. */
export function settingsFromFlags(v: Values): EvalSettings {
  if (v.chat && v.completions) throw new UsageError("--chat and --completions exclude each other");
  const given = required(v, "dataset");
  const file = isDatasetFile(given);
  const taskSet = taskSetOf(given);
  if (!file && !taskSet && !DATASET_NAMES.includes(given as MathRecord["dataset"])) {
    const known = DATASET_NAMES.join(", ");
    throw new UsageError(
      `--dataset: unknown '${given}' (known: ${known}, synthetic:DIR of a tfjs sweep or checkpoint, or a ` +
        ".jsonl/.parquet file)",
    );
  }
  for (const flag of ["problem-key", "answer-key", "id-key", "duplicates"] as const) {
    if (v[flag] !== undefined && !file) {
      throw new UsageError(`--${flag}: only with --dataset FILE (a .jsonl or .parquet file), not '${given}'`);
    }
  }
  const dataset = file ? fileDatasetName(given) : taskSet ? "synthetic" : given;
  const n = v.n;
  const tooBig = v.k?.find((k) => k > n);
  if (tooBig) {
    throw new UsageError(`--k: k=${tooBig} > --n ${n}; Pass@k needs at least k samples per problem`);
  }
  if (v["subset-seed"] !== undefined && v.limit === undefined) {
    throw new UsageError("--subset-seed needs --limit N");
  }
  if (v["prompt-template"] === COMPACT && dataset !== "synthetic") {
    throw new UsageError(
      `--prompt-template compact: only with --dataset synthetic (the tfjs engine's own tasks; MATH-500 and ` +
        `AIME are beyond a model trained from scratch), not '${dataset}'`,
    );
  }
  const name = v["prompt-template"] ?? (taskSet ? COMPACT : defaultTemplateFor(dataset));
  const template = name === COMPACT ? COMPACT_TEMPLATE : asUsage(() => resolveTemplate(name));
  const sweepEval = taskSet?.sweepEval;
  return {
    endpoint: asUsage(() => normaliseBaseUrl(required(v, "endpoint"))),
    model: required(v, "model"),
    mode: v.completions ? "completions" : "chat",
    dataset,
    limit: v.limit ?? null,
    subsetSeed: v["subset-seed"] ?? null,
    template,
    n,
    ks: reportedKs(n, v.k, true),
    temperature: v.temperature ?? sweepEval?.temperature ?? 0.6,
    topP: v["top-p"] ?? sweepEval?.topP ?? 0.95,
    maxTokens: v["max-tokens"] ?? sweepEval?.maxTokens ?? 4096,
    seed: v.seed,
    server: v.sampling === undefined ? {} : asUsage(() => parseServerSampling(v.sampling!)),
    grader: v.grader ?? sweepEval?.grader ?? "default",
    ...(taskSet ? { taskSet } : {}),
  };
}

/** `f()`, its Error turned into a UsageError with the same message after `prefix` (a bad flag value exits 2). */
function asUsage<T>(f: () => T, prefix = ""): T {
  try {
    return f();
  } catch (e) {
    throw new UsageError(prefix + (e as Error).message);
  }
}

/**
 * The recorded task set of `--dataset synthetic:DIR`: what defines its problems, and how the tfjs engine
 * evaluates a checkpoint during its sweep (policy.ts `evaluate`), eval's defaults for it; null for any other.
 */
function taskSetOf(given: string): EvalSettings["taskSet"] | null {
  if (!given.startsWith("synthetic:")) return null;
  const source = resolve(given.slice("synthetic:".length));
  const s = asUsage(() => checkpointSettings(source), `--dataset ${given}: `);
  const { families, testSize, seed, difficulty, difficultyByFamily } = s.tasks;
  return {
    source,
    tasks: { families, testSize, seed, difficulty, difficultyByFamily },
    sweepEval: {
      temperature: s.eval.temperature,
      topP: s.eval.topP,
      maxTokens: s.rl.maxNewTokens,
      grader: "strict",
      template: COMPACT,
    },
  };
}

/** The flag of each setting compared with the sweep's own evaluation. */
const SWEEP_EVAL_FLAGS = {
  temperature: "--temperature",
  topP: "--top-p",
  maxTokens: "--max-tokens",
  grader: "--grader",
  template: "--prompt-template",
} as const;

/**
 * One note for each setting of this eval that differs from the sweep's own evaluation of the checkpoint
 * (`--dataset synthetic:DIR`): each makes its Pass@k not comparable with the sweep's. Empty when they agree.
 */
export function sweepDifferences(s: EvalSettings): string[] {
  const sweep = s.taskSet?.sweepEval;
  if (!sweep) return [];
  const mine = { ...s, grader: s.grader ?? "default", template: s.template.name };
  const keys = Object.keys(SWEEP_EVAL_FLAGS) as (keyof typeof SWEEP_EVAL_FLAGS)[];
  return keys.filter((k) => mine[k] !== sweep[k]).map((k) =>
    `${SWEEP_EVAL_FLAGS[k]} ${mine[k]} differs from the sweep's evaluation (${sweep[k]}): ` +
    "this Pass@k is not comparable with the sweep's"
  );
}

/** The key named by --api-key-env, or undefined without the flag; an unset variable is a clear error. */
function apiKeyFrom(v: Values): string | undefined {
  const name = v["api-key-env"];
  if (name === undefined) return undefined;
  const key = Deno.env.get(name);
  if (!key) {
    throw new UsageError(
      `--api-key-env ${name}: the variable is empty or not set; export ${name}=<key> first`,
    );
  }
  return key;
}

/** Records of the dataset; "not fetched yet" becomes one line saying how to fetch it. A file's identity (path,
 * sha256, fields read) is recorded in `settings.datasetFile`. */
async function loadProblems(v: Values, settings: EvalSettings): Promise<MathRecord[]> {
  const dataset = settings.dataset;
  if (v.dataset && isDatasetFile(v.dataset)) {
    const duplicates = v.duplicates ?? "refuse";
    const file = await loadFileDataset(resolve(v.dataset), {
      problemKey: v["problem-key"],
      answerKey: v["answer-key"],
      idKey: v["id-key"],
      duplicates,
    });
    for (const warning of file.warnings) console.error(`acebench eval: ${file.path}: ${warning}`);
    settings.datasetFile = {
      path: file.path,
      sha256: file.sha256,
      problemKey: file.problemKey,
      answerKey: file.answerKey,
      ...(file.idKey === null ? {} : { idKey: file.idKey }),
      ...(duplicates === "keep-first" ? { duplicates } : {}),
    };
    return file.records;
  }
  const records = await loadFetched(dataset, { cacheDir: v["cache-dir"], mirror: v.mirror });
  if (records) return records;
  throw new Error(`dataset '${dataset}' is not fetched yet: ${fetchHint([dataset], v["cache-dir"])}`);
}

/** The template name for the tfjs engine's own prompts ("3+4*5="), rendered from a synthetic record's parameters. */
const COMPACT = COMPACT_TEMPLATE.name;

/**
 * The tfjs engine's held-out tasks: its sweep's for `--dataset synthetic:DIR` (same ids, problems and order;
 * differences from the sweep's evaluation printed), else its defaults. Under the compact template the problem text
 * is the compact prompt a model trained from scratch was trained on (its prompt window holds nothing longer).
 */
function tfjsProblems(settings: EvalSettings): MathRecord[] {
  const t = settings.taskSet;
  const tfjs = t ? checkpointSettings(t.source) : defaultSettings();
  const test = taskSets(tfjs).test;
  const what = `(${test.length} problems; families ${tfjs.tasks.families.join(", ")}`;
  console.error(
    t
      ? `acebench eval: the held-out tasks of ${t.source} ${what}; task seed ${t.tasks.seed})`
      : `acebench eval: --prompt-template compact: the tfjs engine's default held-out tasks ${what}); ` +
        "--dataset synthetic:DIR takes a sweep's own",
  );
  for (const note of sweepDifferences(settings)) console.error(`acebench eval: note: ${note}`);
  return settings.template.name === COMPACT ? test.map((r) => ({ ...r, problem: renderPrompt(r) })) : test;
}

/** Entry point for `deno task eval`. */
export async function main(args: string[]): Promise<number> {
  const { values: v } = parseTable(args, FLAGS);
  if (v.suite !== undefined) {
    if (v.dataset !== undefined) throw new UsageError("--suite and --dataset exclude each other");
    const out = required(v, "out");
    return await runSuite(v.suite, args, { out, cacheDir: v["cache-dir"], mirror: v.mirror }, evalOnce);
  }
  return (await evalOnce(args)).code;
}

/** One eval (one dataset), returning its exit code, its outcome when sampling ran, and its settings. */
async function evalOnce(args: string[]): Promise<SuiteStep> {
  const v = parseTable(args, FLAGS).values;
  const settings = settingsFromFlags(v);
  const out = required(v, "out");
  const apiKey = apiKeyFrom(v);
  const all = settings.taskSet || settings.template.name === COMPACT
    ? tfjsProblems(settings)
    : await loadProblems(v, settings);
  const problems = selectProblems(all, settings.limit, settings.subsetSeed);
  const command = ["deno task eval", ...args.map(shellQuote)].join(" ");
  const existed = exists(out);
  // One writer per folder: a second eval on `out` exits 2 here, before any request.
  const lock = lockFolder(out, { command, flag: "out" });
  const interrupt = onSignals();
  try {
    const { code, outcome } = await evalLocked(settings, problems, out, {
      concurrency: v.concurrency,
      maxPerRequest: v["max-n-per-request"],
      timeoutMs: v.timeout * 1000,
      retry: { ...DEFAULT_RETRY, maxRetries: v.retries },
      apiKey,
      apiKeyEnv: v["api-key-env"],
      excludeTruncated: v["exclude-truncated"],
      repair: v.repair ? (m) => console.error(m) : undefined,
      command,
      signal: interrupt.signal,
    });
    return { code, outcome, settings };
  } catch (e) {
    // A run stopped before writing anything (preflight, bad folder) leaves no empty folder behind.
    lock.release();
    if (!existed && [...Deno.readDirSync(out)].length === 0) Deno.removeSync(out);
    if (!(e instanceof InterruptedError)) throw e;
    console.error(
      `acebench eval: ${e.message}; the samples received so far are kept in ${out} (status "interrupted" once ` +
        `sampling had begun); re-run the same command to resume`,
    );
    return { code: e.signal === "SIGTERM" ? 143 : 130, outcome: null, settings };
  } finally {
    interrupt.dispose();
    lock.release();
  }
}

/**
 * SIGINT/SIGTERM abort the returned signal (its reason is the signal's name), so eval stops its requests and
 * records "interrupted"; a second signal exits at once (status.json already says "interrupted").
 */
function onSignals(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const signals = Deno.build.os === "windows" ? ["SIGINT"] as const : ["SIGINT", "SIGTERM"] as const;
  const handler = (name: "SIGINT" | "SIGTERM") => () => {
    if (controller.signal.aborted) Deno.exit(name === "SIGTERM" ? 143 : 130);
    console.error(`acebench eval: ${name}: stopping (again to quit at once)`);
    controller.abort(name);
  };
  const handlers = signals.map((name) => [name, handler(name)] as const);
  for (const [name, h] of handlers) Deno.addSignalListener(name, h);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const [name, h] of handlers) Deno.removeSignalListener(name, h);
    },
  };
}

/** Evaluate, print the outcome and write the report; exit code 1 when a problem failed. */
async function evalLocked(
  settings: EvalSettings,
  problems: EvalProblem[],
  out: string,
  transport: TransportOptions,
): Promise<{ code: number; outcome: EvalOutcome }> {
  const total = problems.length * settings.n;
  const bar = progressBar(`eval ${settings.model}`, total, "samples");
  // Without a terminal (a log file, CI) a plain line every 15 s says the run is alive.
  const log = progressEnabled() || Deno.env.get("ACEBENCH_QUIET")
    ? null
    : new ProgressLog(`eval ${settings.model}`, total).start();
  let retries = 0;
  let outcome: EvalOutcome;
  try {
    outcome = await evaluateEndpoint(problems, settings, out, {
      ...transport,
      onProgress: (done) => {
        bar.update(done);
        log?.update(done);
      },
      onRetry: (id, reason) => {
        retries++;
        log?.error(`${id}: ${reason}`);
      },
      onFailure: (f) => log?.error(`${f.problemId}: ${f.error}`),
      // A new line first, so the notice does not overwrite the progress bar's line on a terminal.
      onNotice: (m) => console.error(`${progressEnabled() ? "\n" : ""}acebench eval: ${m}`),
    });
  } finally {
    bar.stop();
    log?.stop();
  }
  printOutcome(outcome, settings, retries);
  const failed = outcome.stats.failed;
  if (outcome.rows.length > 0) {
    const { written } = await writeReport(out, {
      columns: [truncatedColumn(outcome.rows, outcome.paths.samplesPath, settings.n)],
      sections: [...taskSetSection(settings), renderHealth(outcome.health)],
    });
    console.log(`report: ${written.join(", ")}`);
  }
  if (failed.length > 0) {
    console.error(`acebench eval: ${failed.length} of ${outcome.health.problems} problems failed:`);
    for (const f of failed.slice(0, 10)) console.error(`  ${f.problemId}: ${f.error}`);
    if (failed.length > 10) console.error(`  … and ${failed.length - 10} more (status.json lists them all)`);
    const scope = outcome.health.scored === 0
      ? "no problem was scored, so there is no report"
      : `Pass@k is over the other ${outcome.health.scored}`;
    console.error(`${scope}; ${failureAdvice(failed)}`);
    return { code: 1, outcome };
  }
  return { code: 0, outcome };
}

/** summary.md's section on the task set of `--dataset synthetic:DIR` and how this eval differs from the sweep's. */
function taskSetSection(s: EvalSettings): string[] {
  const t = s.taskSet;
  if (!t) return [];
  const notes = sweepDifferences(s);
  const families = t.tasks.families.join(", ");
  return [
    [
      "## Task set",
      "",
      `The held-out tasks of ${t.source}: ${t.tasks.testSize} problems, families ${families}, ` +
      `task seed ${t.tasks.seed}: the problems its sweep evaluated.`,
      notes.length
        ? notes.map((n) => `- Note: ${n}.`).join("\n")
        : "Temperature, top-p, max tokens, grader mode and prompts are the sweep's evaluation's: this Pass@k " +
          "estimates the same quantity as the sweep's for this checkpoint.",
    ].join("\n"),
  ];
}

/** The one-paragraph result: counts, mean@n, truncation, usage and latency (this run's scope), Pass@k. */
function printOutcome(outcome: EvalOutcome, settings: EvalSettings, retries: number): void {
  const h = outcome.health;
  const correct = outcome.rows.filter((r) => r.correct).length;
  const lat = h.latencyMs;
  console.log(
    `${settings.model} on ${settings.dataset}: ${h.scored}/${h.problems} problems × ${settings.n} ` +
      `samples (${outcome.stats.resumed} resumed, ${outcome.stats.added} new, ${retries} retries this run); ` +
      (outcome.rows.length
        ? `mean@${settings.n} ${(correct / outcome.rows.length).toFixed(4)}; `
        : "nothing scored; ") +
      `${h.truncated} truncated; ${h.requests} requests, ${h.promptTokens}+${h.completionTokens} tokens` +
      (h.usageCounted === "per choice"
        ? ", "
        : ` (as reported by the server: ${h.samplesWithUsage} samples' tokens), `) +
      `latency p50 ${lat?.p50 ?? "-"} ms p95 ${lat?.p95 ?? "-"} ms p99 ${lat?.p99 ?? "-"} ms`,
  );
  if (outcome.rows.length === 0) return;
  const passK = (k: number) => suiteCell(outcome.rows, k)?.mean.toFixed(4) ?? "-";
  console.log(settings.ks.map((k) => `pass@${k} ${passK(k)}`).join(", "));
}

/**
 * The `truncated` column of the eval's passk.csv: samples cut off by max_tokens among the row's graded problems
 * (by dataset and slice), after the shared columns.
 */
function truncatedColumn(rows: readonly EvalRow[], samplesPath: string, n: number): ExtraColumn {
  const onDisk = readSamples(samplesPath);
  const truncated = new Map<string, number>();
  // Each graded problem once (its rows are its samples), counted in every slice it belongs to.
  for (const r of new Map(rows.map((r) => [`${r.dataset}|${r.problemId}`, r])).values()) {
    const cut = [...(onDisk.get(r.problemId)?.values() ?? [])]
      .filter((s) => s.sample < n && s.finish_reason === "length").length;
    for (const key of slicesOf(r, true).map((slice) => `${r.dataset}|${slice}`)) {
      truncated.set(key, (truncated.get(key) ?? 0) + cut);
    }
  }
  return { name: "truncated", value: (row) => truncated.get(`${row.dataset}|${row.slice}`) ?? 0 };
}
