// VERL validation generation dumps → the run's eval.jsonl, graded by acebench's grader (not VERL's own score or
// best@k), so `deno task report` treats VERL runs like any other sweep.
import { createReadStream, readdirSync } from "node:fs";
import { createInterface } from "node:readline";
import { basename, join } from "node:path";
import { exists, readJsonl } from "../../../common/fs.ts";
import { sha256 } from "../../../common/hash.ts";
import { gradeMany } from "../../../evaluators/mod.ts";
import { gradingOf } from "../registry.ts";
import { readVerlParquet } from "./export.ts";
import { ACE_METRICS_FILE } from "./overrides.ts";
import {
  type EvalSample,
  readRunConfig,
  readStatus,
  type RunStatus,
  writeEvalSamples,
  writeMetrics,
  writeStatus,
} from "../../../common/run_folder.ts";
import { readVerlMetrics } from "./verl_metrics.ts";
import { RESTARTS_FILE } from "./reward.ts";
import { VERL_DIR } from "./launch.ts";
import { readValFilter, TEMPLATE_TOKENS, type ValFilter } from "./prompt_filter.ts";

/** One line of eval.jsonl (ARCHITECTURE.md). */
export interface EvalLine extends EvalSample {
  rule: string;
  meta: { engine: "verl"; verlScore: number | null; matched: boolean; matchedBy: MatchKind | null };
}

/** Where VERL writes the dumps of a run (`trainer.validation_data_dir` in the generated overrides). */
export const DUMP_DIR = "val_generations";

/**
 * Read every `*.jsonl` dump in `dir` (VERL's `<step>.jsonl`) line by line: a step of long samples can exceed V8's
 * string limit as one file. VERL's field names (input, output, gts, score, step) or plain ones (prompt, response,
 * ground_truth); the step defaults to the file name's. A line without a prompt or output throws naming file:line.
 */
export async function readVerlDumps(dir: string): Promise<{ samples: DumpSample[]; files: number }> {
  if (!exists(dir)) throw new Error(`${dir}: no VERL validation dumps (trainer.validation_data_dir) found`);
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort((a, b) =>
    (fileStep(a) - fileStep(b)) || a.localeCompare(b)
  );
  const samples: DumpSample[] = [];
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(join(dir, file)), crlfDelay: Infinity });
    let i = 0;
    for await (const line of lines) {
      i += 1;
      if (line.trim() === "") continue;
      const where = `${join(dir, file)}:${i}`;
      let row: Record<string, unknown>;
      try {
        row = JSON.parse(line);
      } catch (e) {
        throw new Error(`${where}: invalid JSON line: ${(e as Error).message}`);
      }
      samples.push(parseSample(row, where, fileStep(file)));
    }
  }
  return { samples, files: files.length };
}

function fileStep(file: string): number {
  return Number(basename(file, ".jsonl"));
}

function pick(row: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) if (row[name] !== undefined && row[name] !== null) return row[name];
  return undefined;
}

/** One generation from a dump, with where it came from. */
function parseSample(row: Record<string, unknown>, where: string, stepFromFile: number) {
  const prompt = pick(row, ["input", "prompt"]);
  const output = pick(row, ["output", "response"]);
  if (typeof prompt !== "string") {
    throw new Error(`${where}: field 'input' (or 'prompt') is missing or not a string`);
  }
  if (typeof output !== "string") throw new Error(`${where}: field 'output' is missing or not a string`);
  const step = row.step ?? (Number.isFinite(stepFromFile) ? stepFromFile : undefined);
  if (typeof step !== "number" || !Number.isInteger(step) || step < 0) {
    throw new Error(
      `${where}: field 'step' is ${JSON.stringify(step)}; expected an integer ≥ 0 (or a <step>.jsonl name)`,
    );
  }
  const gold = pick(row, ["gts", "ground_truth", "gt"]);
  if (gold !== undefined && typeof gold !== "string" && typeof gold !== "number") {
    throw new Error(`${where}: field 'gts' is ${JSON.stringify(gold)}; expected a string`);
  }
  const score = row.score;
  const id = pick(row, ["problemId", "problem_id", "id"]);
  const source = pick(row, ["data_source", "dataset"]);
  return {
    step,
    prompt,
    output,
    // as VERL saw it; null when the dump has none (the exported data then supplies it)
    gold: gold === undefined ? null : String(gold),
    // VERL's own reward, kept for comparison
    verlScore: typeof score === "number" ? score : null,
    // optional identity carried by the dump itself
    dataSource: typeof source === "string" ? source : null,
    problemId: typeof id === "string" || typeof id === "number" ? String(id) : null,
    where,
  };
}

export type DumpSample = ReturnType<typeof parseSample>;

/** The validation problems a sweep exported (`<sweep>/data/verl/test-*.parquet`), for mapping dumps back to ids. */
async function validationIndex(sweepDir: string) {
  const dir = join(sweepDir, "data", "verl");
  const files = exists(dir)
    ? readdirSync(dir).filter((f) => f.startsWith("test-") && f.endsWith(".parquet"))
    : [];
  const rows = [];
  for (const file of files.sort()) rows.push(...await readVerlParquet(join(dir, file)));
  return rows.map((row) => ({
    id: row.extra_info.id,
    dataset: row.extra_info.dataset,
    gold: row.reward_model.ground_truth,
    content: row.prompt[row.prompt.length - 1].content,
  }));
}

/** An exported validation problem, found by its rendered prompt text. */
type IndexedProblem = Awaited<ReturnType<typeof validationIndex>>[number];

/** How a dumped prompt was mapped to its problem (null: not mapped). */
export type MatchKind = "exact" | "contains" | "alphanumeric" | "ground-truth";

/** Text without whitespace: a tokenizer's decode may add or drop spaces (" ." → "."), never letters. */
function withoutSpaces(text: string): string {
  return text.replace(/\s+/g, "");
}

/** Letters and digits only (lower-cased): survives any clean-up of spaces and punctuation around them. */
function alphanumeric(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * Find the problem a dumped prompt came from. VERL dumps the decoded prompt after the chat template, so the
 * exported user message appears inside it up to spacing: exact match first, else the longest exported message
 * contained in it with whitespace removed, else with only letters and digits kept; failing that, the only
 * exported problem with the sample's ground truth.
 */
function matcher(index: IndexedProblem[]): (prompt: string, gold: string | null) => Match | null {
  const exact = new Map(index.map((p) => [p.content, p]));
  const keyed = [...index].sort((a, b) => b.content.length - a.content.length)
    .map((p) => ({ p, spaceless: withoutSpaces(p.content), alnum: alphanumeric(p.content) }));
  const byGold = new Map<string, IndexedProblem[]>();
  for (const p of index) byGold.set(p.gold, [...(byGold.get(p.gold) ?? []), p]);
  const cache = new Map<string, Match | null>();
  const byPrompt = (prompt: string): Match | null => {
    const hit = exact.get(prompt);
    if (hit) return { problem: hit, kind: "exact" };
    const spaceless = withoutSpaces(prompt);
    const contained = keyed.find((k) => spaceless.includes(k.spaceless));
    if (contained) return { problem: contained.p, kind: "contains" };
    const alnum = alphanumeric(prompt);
    const loose = keyed.find((k) => k.alnum.length > 0 && alnum.includes(k.alnum));
    return loose ? { problem: loose.p, kind: "alphanumeric" } : null;
  };
  return (prompt, gold) => {
    let hit = cache.get(prompt);
    if (hit === undefined) {
      hit = byPrompt(prompt);
      cache.set(prompt, hit);
    }
    if (hit === null && gold !== null && byGold.get(gold)?.length === 1) {
      return { problem: byGold.get(gold)![0], kind: "ground-truth" };
    }
    return hit;
  };
}

type Match = { problem: IndexedProblem; kind: MatchKind };

/**
 * Grade a run's VERL validation dumps (`<runDir>/val_generations/*.jsonl`) as the sweep's recorded protocol says
 * (`gradingOf`) and write `<runDir>/eval.jsonl` atomically, problems identified through the sweep's exported
 * validation parquet. A step lacking samples of the plan (eval.n of every exported problem) throws, unless
 * `partial`: then what exists is kept and status.json's `lostSamples` marks its cells †.
 */
export async function ingestVerlDumps(
  runDir: string,
  options: { dumpDir?: string; sweepDir?: string; partial?: boolean } = {},
) {
  const { samples, files } = await readVerlDumps(options.dumpDir ?? join(runDir, DUMP_DIR));
  const sweepDir = options.sweepDir ?? join(runDir, "..", "..");
  const index = await validationIndex(sweepDir);
  const find = matcher(index);
  const identified = samples.map((s) => identify(s, find));
  const { strict, timeoutMs } = gradingOf("verl", sweepDir);
  const grades = await gradeMany(
    identified.map((s) => ({ prediction: s.sample.output, gold: s.gold, strict })),
    timeoutMs === null ? {} : { timeoutMs },
  );
  const counters = new Map<string, number>();
  const lines: EvalLine[] = identified.map(({ sample, dataset, problemId, matchedBy }, i) => {
    const key = `${sample.step}\u0000${dataset}\u0000${problemId}`;
    const index = counters.get(key) ?? 0;
    counters.set(key, index + 1);
    const g = grades[i];
    return {
      step: sample.step,
      dataset,
      problemId,
      sample: index,
      correct: g.correct,
      status: g.status,
      extracted: g.extracted,
      rule: g.rule,
      meta: { engine: "verl", verlScore: sample.verlScore, matched: matchedBy !== null, matchedBy },
    };
  });
  const n = readRunConfig(runDir)?.eval?.n;
  if (n === undefined) {
    console.error(
      `${runDir}: no config.json eval.n, so the dumps' completeness (n samples per problem) is not checked`,
    );
  }
  const filter = readValFilter(runDir);
  const gaps = dumpGaps(lines, index, n, filter);
  const described = gaps.map((g) => `step ${g.step} (${g.dataset}): ${g.text}`).join("; ");
  const where = `${runDir}: VERL dump ${described}`;
  if (gaps.some((g) => g.over)) {
    throw new Error(
      `${where}; more samples than the plan's n = ${n} (config.json eval.n): not this run's dumps?`,
    );
  }
  if (gaps.length && !options.partial) {
    throw new Error(
      `${where}; the run lost samples (a failed reward group?); re-run, or ingest with ` +
        `\`deno task report ${sweepDir} --ingest --partial\` to keep them with their cells marked †`,
    );
  }
  // what can fail (a malformed metrics or restarts file) is read before anything is written
  const metricsSteps = ingestVerlMetrics(runDir);
  const restarts = readJsonl(join(runDir, VERL_DIR, RESTARTS_FILE)).length;
  writeEvalSamples(runDir, lines);
  const filtered = filteredProblems(runDir, filter, lines);
  const lastStep = Math.max(-1, ...lines.map((l) => l.step));
  const lost = gaps.map((g) => ({
    dataset: g.dataset,
    step: g.step,
    message: `VERL dump lacks ${g.lacking} of ${g.expected} samples: ${g.text} (ingested with --partial)`,
  }));
  return {
    files,
    samples: lines.length,
    steps: [...new Set(lines.map((l) => l.step))].sort((a, b) => a - b),
    problems: new Set(lines.map((l) => `${l.dataset}/${l.problemId}`)).size,
    // prompts that matched no exported validation problem (their id is a hash of the prompt)
    unmatched: lines.filter((l) => !l.meta.matched).length,
    correct: lines.filter((l) => l.correct).length,
    // training steps with diagnostics turned into metrics.jsonl (0 without ace_metrics.jsonl)
    metricsSteps,
    // the dumps reach the run's last RL step, so status.json now says "done"
    finished: updateStatus(runDir, filtered, lost, lastStep, restarts),
    // "dataset/id" of problems VERL's prompt-length filter left out
    filtered: filtered?.problems.map((p) => `${p.dataset}/${p.problemId}`) ?? [],
    // reward grader restarts (reward.py's verl/grader_restarts.jsonl), also in status.json
    graderRestarts: restarts,
  };
}

/**
 * Problems over the plan's prompt limit no dump holds (VERL filtered them), said on stderr, as status.json's
 * `filteredProblems` (null: none; undefined: the plan has no filter).
 */
function filteredProblems(runDir: string, filter: ValFilter | null, lines: readonly EvalLine[]) {
  if (filter === null) return undefined;
  const seen = new Set(lines.map((l) => `${l.dataset}/${l.problemId}`));
  const over = filter.overLimit.filter((p) => !seen.has(`${p.dataset}/${p.id}`));
  if (over.length === 0) return null;
  const how = filter.method === "tokenizer"
    ? `exact counts with ${filter.why}'s chat template`
    : `a bound of UTF-8 bytes + ${TEMPLATE_TOKENS} template tokens, no tokenizer: ${filter.why}`;
  console.error(
    `${runDir}: ${over.length} problem(s) over data.max_prompt_length ${filter.maxPromptLength} not validated ` +
      `by VERL (${how}): ${over.map((p) => `${p.dataset}/${p.id}`).join(", ")}`,
  );
  const problems = over.map((p) => ({ dataset: p.dataset, problemId: p.id, tokens: p.tokens }));
  return { maxPromptLength: filter.maxPromptLength, method: filter.method, problems };
}

/**
 * status.json after an ingest, in one write: `filteredProblems` (null: removed), the cells a partial ingest kept
 * with samples missing (`lostSamples`; none: removed), "done" once the dumps reach settings.rl.steps (the runner,
 * which never launched the run, said planned), and reward.py's `graderRestarts`. Returns whether the run is done.
 */
function updateStatus(
  runDir: string,
  filtered: RunStatus["filteredProblems"] | null,
  lost: NonNullable<RunStatus["lostSamples"]>,
  lastStep: number,
  restarts: number,
): boolean {
  const before = readStatus(runDir);
  let status = before && { ...before };
  if (status && filtered) status.filteredProblems = filtered;
  else if (status && filtered === null) delete status.filteredProblems;
  if (lost.length || status?.lostSamples) {
    status = { state: "planned", startedAt: new Date().toISOString(), ...status };
    if (lost.length) status.lostSamples = lost;
    else delete status.lostSamples;
  }
  const steps = readRunConfig<{ rl?: { steps?: number } }>(runDir)?.settings.rl?.steps;
  const finished = typeof steps === "number" && lastStep >= steps;
  if (finished && status?.state !== "done") {
    const { reason: _reason, ...rest }: Partial<RunStatus> = status ?? {};
    const now = new Date().toISOString();
    const note = `VERL validation dumps reach step ${lastStep}`;
    status = { ...rest, state: "done", startedAt: rest.startedAt ?? now, finishedAt: now, note };
  }
  if (status && restarts !== (status.graderRestarts ?? 0)) {
    status.graderRestarts = restarts;
    if (restarts > 0) {
      console.error(`${runDir}: the reward grader was restarted ${restarts} time(s) (${RESTARTS_FILE})`);
    }
  }
  if (status && JSON.stringify(status) !== JSON.stringify(before)) writeStatus(runDir, status);
  return finished;
}

/**
 * Compare each dumped step with the plan, n samples of every exported validation problem: VERL writes whatever
 * survived validation, so a failed reward group shows up only as missing samples. A problem over the plan's prompt
 * limit (`filter`) may be absent, never partly present. No gaps without a recorded n.
 */
function dumpGaps(
  lines: readonly EvalLine[],
  planned: readonly IndexedProblem[],
  n: number | undefined,
  filter: ValFilter | null,
) {
  if (n === undefined || !Number.isInteger(n)) return [];
  const cells = new Map<string, Map<string, number>>(); // "step\0dataset" → problemId → samples
  const count = (step: number, dataset: string, id: string, add: number) => {
    const key = `${step}\u0000${dataset}`;
    const byProblem = cells.get(key) ?? new Map<string, number>();
    byProblem.set(id, (byProblem.get(id) ?? 0) + add);
    cells.set(key, byProblem);
  };
  const over = new Set(filter?.overLimit.map((p) => `${p.dataset}\u0000${p.id}`));
  const asked = planned.filter((p) => !over.has(`${p.dataset}\u0000${p.id}`));
  for (const step of new Set(lines.map((l) => l.step))) {
    for (const p of asked) count(step, p.dataset, p.id, 0);
  }
  for (const l of lines) count(l.step, l.dataset, l.problemId, 1);
  const gaps = [...cells].flatMap(([key, byProblem]) => {
    const [step, dataset] = key.split("\u0000");
    const counts = [...byProblem.values()];
    const absent = counts.filter((c) => c === 0).length;
    const odd = new Map<number, number>(); // samples → problems with that many (0 < samples ≠ n)
    for (const c of counts.filter((c) => c > 0 && c !== n)) odd.set(c, (odd.get(c) ?? 0) + 1);
    if (absent === 0 && odd.size === 0) return [];
    const parts = [
      ...(absent ? [`${absent} of ${counts.length} problems absent`] : []),
      ...[...odd].sort((a, b) => a[0] - b[0]).map(([c, k]) =>
        `${k} problem${k === 1 ? "" : "s"} with ${c} of ${n} samples`
      ),
    ];
    return [{
      step: Number(step),
      dataset,
      text: parts.join(", "),
      lacking: counts.reduce((t, c) => t + Math.max(0, n - c), 0),
      expected: counts.length * n,
      over: counts.some((c) => c > n),
    }];
  });
  return gaps.sort((a, b) => a.step - b.step || a.dataset.localeCompare(b.dataset));
}

/**
 * Merge `<runDir>/ace_metrics.jsonl` (ace_verl.py's; a resumed job repeats steps) and VERL's own `verl_metrics/`
 * into metrics.jsonl, one line per step, a step's last record winning; returns the steps (0: nothing written).
 */
function ingestVerlMetrics(runDir: string): number {
  const source = join(runDir, ACE_METRICS_FILE);
  const verl = readVerlMetrics(runDir);
  if (!exists(source) && verl.size === 0) return 0;
  const byStep = new Map<number, Record<string, unknown>>();
  for (const [step, fields] of verl) byStep.set(step, { step, ...fields });
  readJsonl<Record<string, unknown>>(source).forEach((record, i) => {
    if (!Number.isInteger(record.step)) throw new Error(`${source}: record ${i + 1} has no integer 'step'`);
    byStep.set(record.step as number, { ...verl.get(record.step as number), ...record });
  });
  const lines = [...byStep.keys()].sort((a, b) => a - b).map((step) => byStep.get(step));
  writeMetrics(runDir, lines);
  return lines.length;
}

function identify(sample: DumpSample, find: (prompt: string, gold: string | null) => Match | null) {
  const match = find(sample.prompt, sample.gold);
  const hit = match?.problem;
  const gold = sample.gold ?? hit?.gold;
  if (gold === undefined) {
    throw new Error(`${sample.where}: no ground truth ('gts') and the prompt matches no exported problem`);
  }
  return {
    sample,
    gold,
    matchedBy: match?.kind ?? null,
    dataset: hit?.dataset ?? sample.dataSource ?? "unknown",
    problemId: sample.problemId ?? hit?.id ?? `prompt-${sha256(sample.prompt).slice(0, 12)}`,
  };
}
