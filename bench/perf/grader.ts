// `deno task bench grader`: grades/s and p50/p99 latency of single `grade` and of `gradeMany`, on MATH-500
// gold vs \boxed{gold}, MATH-500 gold i vs gold i+1, and the labelled corpus; `--frontend-compare` measures
// the hand-written LaTeX front end against @cortex-js/compute-engine on the corpus (accuracy and speed); the
// once-slow adversarial inputs are timed singly; `--labelled FILE` scores a labelled JSON-lines file instead
// (accuracy, FP, FN in default and strict mode).
import { bool, flagLines, type FlagTable, num, parseTable, str } from "../../common/args.ts";
import { exists, readJsonl } from "../../common/fs.ts";
import { Rng } from "../../common/prng.ts";
import { grade } from "../../evaluators/grade.ts";
import { gradeMany, type GradeManyItem, GraderPool } from "../../evaluators/pool.ts";
import { clearParseCache, splitTop, useFrontEnd } from "../../evaluators/forms.ts";
import { latexToMathjs, type Translation } from "../../evaluators/latex.ts";
import { extractGold } from "../../evaluators/extract.ts";
import { normalizeAnswer } from "../../evaluators/normalize.ts";
import { computeEngineToMathjs } from "../../evaluators/frontend_ce.ts";
import { median, percentileSorted as percentile } from "../../evaluators/stats.ts";

/** The flags of `deno task bench grader`, declared once for parsing, --help and validation. */
export const FLAGS = {
  "frontend-compare": bool(
    "also grade the corpus and MATH-500 workloads with compute-engine as the LaTeX front end",
  ),
  workers: num("gradeMany workers", { default: navigator.hardwareConcurrency || 1, min: 1, max: 256 }),
  repeat: num(
    "gradeMany workload = each workload repeated N times, like N samples per problem",
    { default: 16, min: 1, max: 1000 },
  ),
  passes: num(
    "cold single-grade passes per workload; figures are medians over passes",
    { default: 5, min: 1, max: 100 },
  ),
  labelled: str(
    "FILE",
    'only score FILE, JSON lines {prediction, gold, label: boolean} ("expected" also names the label; ' +
      '"labelStrict"/"expectedStrict" the one for strict mode; "strict": true/false scores the line in ' +
      "that mode only): accuracy, false positives (label false, graded correct) and false negatives per mode, " +
      'per family when lines carry a "family" field, and every disagreeing line (repeatable; no speed figures)',
    { multiple: true },
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task bench grader`. */
export const usage = `usage: deno task bench grader [flags]

${flagLines(FLAGS)}

Reads math500/test.jsonl from the dataset mirror $ACEBENCH_DATASET_MIRROR (one made by
bash .ci/make_dataset_mirror.sh DIR) when present, else only the corpus is measured.`;

/** A workload's pair, with the verdict it should get where known. */
type Case = GradeManyItem & { expected?: boolean };

const repoRoot = new URL("../../", import.meta.url).pathname;

function workloads(): Record<string, Case[]> {
  const out: Record<string, Case[]> = {};
  const mirror = Deno.env.get("ACEBENCH_DATASET_MIRROR") || `${repoRoot}../shared/datasets`;
  const math500Path = `${mirror}/math500/test.jsonl`;
  if (exists(math500Path)) {
    const golds = readJsonl<{ answer: string }>(math500Path).map((r) => r.answer);
    out["math500 gold vs \\boxed{gold}"] = golds.map((g) => ({
      prediction: `\\boxed{${g}}`,
      gold: g,
      expected: true,
    }));
    // Labelled false unless the two golds are the same text (then unlabelled: they may truly be equal).
    out["math500 gold i vs gold i+1"] = golds.slice(1).map((g, i) => ({
      prediction: `\\boxed{${golds[i]}}`,
      gold: g,
      expected: golds[i].replace(/\s/g, "") === g.replace(/\s/g, "") ? undefined : false,
    }));
  } else {
    console.log(`note: ${math500Path} not found; measuring the corpus only`);
  }
  out["corpus"] = readJsonl<Case>(`${repoRoot}tests/evaluators/fixtures/corpus.jsonl`);
  return out;
}

/**
 * Inputs that were once slow, by family: quadratic marker regexes on whitespace runs, exponential ± expansion,
 * huge nesting and lengths, and seeded long runs of marker and math fragments. Each must grade far below the
 * pool's 2 s timeout; tests check only that each gets a verdict.
 */
export function adversarialCases(): Record<string, Case[]> {
  const sp = " ".repeat(19_000);
  const pm = (n: number, d: string) => Array(n).fill(d).join("\\pm");
  const pairs = (ps: [string, string][]) => ps.map(([prediction, gold]) => ({ prediction, gold }));
  const rng = Rng.seeded(99);
  // Marker and math fragments, "¦"-separated.
  const frags =
    (" ¦\n¦\t¦$¦$$¦\\(¦\\)¦\\[¦\\]¦Answer¦Answer:¦answer¦final answer is¦the answer is¦**¦.¦. ¦,¦" +
      "I hope it is correct¦A:¦####¦\\boxed¦\\boxed{¦}¦{¦5¦x¦=¦\\pm¦\\begin{pmatrix}¦&¦\\\\¦and¦<|im_end|>¦since¦`")
      .split("¦");
  const runs = Array.from({ length: 150 }, () => {
    const [a, b, c] = [rng.pick(frags), rng.pick(frags), rng.pick(frags)];
    const run = a.repeat(Math.ceil(9000 / a.length));
    return { prediction: c + run + b + run + c, gold: "5" };
  });
  return {
    "huge inputs": pairs([
      ["\\boxed{10^{10^{10^{10}}}}", "1"],
      ["\\boxed{1000000!}", "1"],
      ["\\boxed{" + "{".repeat(100_000) + "1" + "}".repeat(100_000) + "}", "1"],
      ["\\boxed{" + "(".repeat(100_000) + "1" + ")".repeat(100_000) + "}", "1"],
      ["x".repeat(5_000_000), "1"],
      ["\\boxed{" + "1+".repeat(1_000_000) + "1}", "1"],
      ["\\boxed{1}".repeat(200_000), "1"],
      ["\\boxed{2}", "\\boxed{" + "{".repeat(100_000) + "}".repeat(100_000) + "}"],
      ["\\boxed{(x+1)^{10^{9}}}", "(x+1)^{10^{9}+1}"],
    ]),
    "whitespace runs and ±": pairs([
      ["The final answer is x" + sp + "x\ny", "5"],
      ["the answer is x" + sp + "x y", "5"],
      ["The final answer is" + sp, "5"],
      ["Answer" + sp + "x", "5"],
      ["So the total is" + sp + " 5 . x", "5"],
      ["\\boxed{" + pm(249, "1") + "}", pm(249, "2")],
      ["\\boxed{\\frac{" + pm(100, "1") + "}{2}}", "\\frac{" + pm(100, "1") + "}{2}"],
    ]),
    "seeded fragment runs": runs,
  };
}

// One cold-cache pass of single grades: per-grade latency in ms.
function timeSingle(cases: Case[]): { ms: number[]; correct: boolean[] } {
  clearParseCache();
  const ms: number[] = [];
  const correct: boolean[] = [];
  for (const c of cases) {
    const t0 = performance.now();
    correct.push(grade(c.prediction, c.gold, { strict: c.strict }).correct);
    ms.push(performance.now() - t0);
  }
  return { ms, correct };
}

const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;

/** Grades/s, p50, p99 and max latency (ms) of per-grade latencies in ms. */
function latencyStats(ms: number[]): number[] {
  const sorted = [...ms].sort((a, b) => a - b);
  const total = ms.reduce((a, b) => a + b, 0);
  return [ms.length / (total / 1000), percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.at(-1)!];
}

// Several cold passes; each statistic is the median over passes, so one preempted pass on a shared
// machine does not set the figure.
function latencyRow(name: string, cases: Case[], passes: number): string {
  const stats = Array.from({ length: passes }, () => latencyStats(timeSingle(cases).ms));
  const med = (k: number) => median(stats.map((s) => s[k]));
  return row([
    name,
    cases.length,
    Math.round(med(0)),
    med(1).toFixed(3),
    med(2).toFixed(3),
    med(3).toFixed(2),
  ]);
}

/** Entry point for `deno task bench grader`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  if (values.labelled.length) {
    for (const file of values.labelled) printLabelled(file, readLabelled(file));
    return 0;
  }
  const { workers, repeat, passes } = values;
  const loads = workloads();
  console.log(`grader benchmark: ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}`);
  // Warm the JIT once so the first workload is not charged for compilation.
  for (const c of loads["corpus"]) grade(c.prediction, c.gold);

  console.log(`\nsingle grade (cold parse cache; median of ${passes} passes):`);
  console.log(row(["workload", "n", "grades/s", "p50 ms", "p99 ms", "max ms"]));
  console.log(row(["---", "---:", "---:", "---:", "---:", "---:"]));
  for (const [name, cases] of Object.entries(loads)) console.log(latencyRow(name, cases, passes));
  // Once-slow inputs: max ms is what matters (the pool marks an answer `timeout` after 2000 ms).
  for (const [name, cases] of Object.entries(adversarialCases())) {
    console.log(latencyRow(`adversarial: ${name}`, cases, passes));
  }

  console.log(
    `\ngradeMany (each workload repeated ×${repeat}, like ${repeat} samples per problem; grades/s):`,
  );
  console.log(row([
    "workload",
    "n",
    "gradeMany inline (workers: 0)",
    `gradeMany, ${workers} workers (incl. start)`,
    `warm GraderPool(${workers})`,
  ]));
  console.log(row(["---", "---:", "---:", "---:", "---:"]));
  for (const [name, cases] of Object.entries(loads)) {
    const items = Array.from({ length: repeat }, () => cases).flat();
    const gradesPerS = async (f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      return Math.round(items.length / ((performance.now() - t0) / 1000));
    };
    clearParseCache();
    const auto = await gradesPerS(() => gradeMany(items, { workers: 0 }));
    const oneShot = await gradesPerS(() => gradeMany(items, { workers }));
    const pool = new GraderPool(workers);
    try {
      await pool.grade(items.slice(0, workers * 4), { batchSize: 1 });
      const warm = await gradesPerS(() => pool.grade(items));
      console.log(row([name, items.length, auto, oneShot, warm]));
    } finally {
      pool.close();
    }
  }
  if (values["frontend-compare"]) frontendCompare(loads);
  return 0;
}

// Same comparison code, two LaTeX front ends: agreement with the labels and cold-cache latency.
function frontendCompare(loads: Record<string, Case[]>): void {
  const fronts = {
    "hand-written (latex.ts)": latexToMathjs,
    "compute-engine 0.140.0": computeEngineToMathjs,
  };
  console.log("\nLaTeX front end comparison (cold parse cache):");
  console.log(row(["front end", "workload", "accuracy", "grades/s", "p50 ms", "p99 ms"]));
  console.log(row(["---", "---", "---:", "---:", "---:", "---:"]));
  const verdicts: Record<string, boolean[]> = {};
  for (const [frontName, fe] of Object.entries(fronts)) {
    useFrontEnd(fe);
    for (const c of loads["corpus"]) grade(c.prediction, c.gold); // warm-up
    for (const [name, cases] of Object.entries(loads)) {
      const { ms, correct } = timeSingle(cases);
      const labelled = cases.filter((c) => c.expected !== undefined).length;
      const right = cases.filter((c, i) => correct[i] === c.expected).length; // undefined matches no verdict
      const [rate, p50, p99] = latencyStats(ms);
      console.log(row([
        frontName,
        name,
        `${right}/${labelled} (${(100 * right / labelled).toFixed(1)}%)`,
        Math.round(rate),
        p50.toFixed(3),
        p99.toFixed(3),
      ]));
      if (name === "corpus") verdicts[frontName] = correct;
    }
  }
  useFrontEnd();
  translationCoverage(loads, fronts);
  const [a, b] = Object.values(verdicts);
  const differ = loads["corpus"].map((c, i) => ({ c, i })).filter(({ i }) => a[i] !== b[i]);
  console.log(`\ncorpus cases where the front ends disagree (${differ.length}):`);
  for (const { c, i } of differ) {
    const note = (c as { note?: string }).note ?? "";
    console.log(
      `  line ${i + 1} [${note}] expected ${c.expected}: hand-written ${a[i]}, compute-engine ${b[i]}`,
    );
  }
}

// How many scalar gold answers each front end translates at all, and how fast (µs per translation).
function translationCoverage(
  loads: Record<string, Case[]>,
  fronts: Record<string, (latex: string) => Translation>,
): void {
  const texts = [...new Set(Object.values(loads).flat().map((c) => extractGold(c.gold)))]
    .filter((g): g is string => g !== null)
    .map((g) => normalizeAnswer(g).text)
    .filter((t) => splitTop(t, ["=", "<", ">", "\\le", "\\ge", "\\ne", "\\cup", "\\in"]).parts.length === 1)
    // Tuples, sets, matrices, bases, ± and ∅ are taken apart before any front end sees them.
    .filter((t) => !/,|^\\begin|^\\\{|^\d+_|\\pm|\\mp|\\emptyset/.test(t));
  console.log(`\nfront-end translation of ${texts.length} distinct scalar gold answers (math500 + corpus):`);
  console.log(row(["front end", "translated", "µs per translation (mean; median of 5 passes)"]));
  console.log(row(["---", "---:", "---:"]));
  for (const [name, fe] of Object.entries(fronts)) {
    let ok = 0;
    const passUs: number[] = [];
    for (let pass = 0; pass < 5; pass++) {
      ok = 0;
      const t0 = performance.now();
      for (const t of texts) {
        try {
          fe(t);
          ok++;
        } catch { /* counted as a failure */ }
      }
      passUs.push((1000 * (performance.now() - t0)) / texts.length);
    }
    console.log(row([name, `${ok}/${texts.length}`, median(passUs).toFixed(1)]));
  }
}

/**
 * One labelled pair: the grader should answer `label` (`labelStrict` in strict mode, where the modes differ on
 * purpose); `lineNo` is its 1-based line in the file, `family` the class of answer it belongs to (if given).
 */
type LabelledCase = ReturnType<typeof readLabelled>[number];

/** Read a labelled JSON-lines file; a malformed line throws "FILE:N: why" (a blank line is skipped). */
export function readLabelled(file: string) {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    throw new Error(`${file}: cannot read (${(e as Error).message})`);
  }
  return text.split("\n").flatMap((raw, i) => {
    if (raw.trim() === "") return [];
    const fail = (why: string): never => {
      throw new Error(`${file}:${i + 1}: ${why}`);
    };
    let r: Record<string, unknown> = {};
    try {
      r = JSON.parse(raw) ?? {};
    } catch (e) {
      fail(`invalid JSON (${(e as Error).message})`);
    }
    // The test corpora and the dev set call the label "expected" (and the strict one "expectedStrict").
    const label = r.label ?? r.expected;
    const labelStrict = r.labelStrict ?? r.expectedStrict ?? label;
    const fields: [string, unknown, "string" | "boolean", "optional"?][] = [
      ['"prediction"', r.prediction, "string"],
      ['"gold"', r.gold, "string"],
      ['"label" (or "expected")', label, "boolean"],
      ['"labelStrict" (or "expectedStrict")', labelStrict, "boolean"],
      ['"family"', r.family, "string", "optional"],
      ['"problem"', r.problem, "string", "optional"],
      ['"strict"', r.strict, "boolean", "optional"],
    ];
    for (const [name, value, type, optional] of fields) {
      if (typeof value !== type && !(optional && value === undefined)) {
        fail(`field ${name} must be a ${type}`);
      }
    }
    return [{
      prediction: r.prediction as string,
      gold: r.gold as string,
      label: label as boolean,
      labelStrict: labelStrict as boolean,
      lineNo: i + 1,
      source: typeof r.source === "string" ? r.source : undefined,
      family: r.family as string | undefined,
      // The question's text, when the file has it (the grader reads whether a list is asked for in order).
      problem: r.problem as string | undefined,
      // Scored in this mode only (the corpus's `strict` field: true = strict only, false = default only).
      only: r.strict === undefined ? undefined : modeName(r.strict as boolean),
    }];
  });
}

/** Agreement with the labels in one mode: FP = label false but graded correct, FN = label true but not. */
export function scoreLabelled(cases: LabelledCase[], strict: boolean) {
  const misses = cases.filter((c) => scoredIn(c, strict)).flatMap((c) => {
    const r = grade(c.prediction, c.gold, { strict, problem: c.problem });
    return r.correct === labelIn(c, strict) ? [] : [{ c, rule: r.rule }];
  });
  return { ...tally(cases, misses, strict), misses };
}

/** n, agreement, FP and FN of the cases scored in a mode, given those of them the grader got wrong. */
function tally(cases: LabelledCase[], misses: { c: LabelledCase }[], strict: boolean) {
  const n = cases.filter((c) => scoredIn(c, strict)).length;
  const fp = misses.filter((m) => !labelIn(m.c, strict)).length;
  return { n, agree: n - misses.length, fp, fn: misses.length - fp };
}

const modeName = (strict: boolean) => strict ? "strict" : "default";

/** Whether a labelled case is scored in a mode (a case with `only` is scored in that mode alone). */
const scoredIn = (c: LabelledCase, strict: boolean) => c.only === undefined || c.only === modeName(strict);

/** The verdict a labelled case should get in a mode. */
const labelIn = (c: LabelledCase, strict: boolean) => strict ? c.labelStrict : c.label;

// The labelled report: one table row per mode, then every disagreeing line.
function printLabelled(file: string, cases: LabelledCase[]): void {
  console.log(`\nlabelled pairs: ${file} (${cases.length} lines)`);
  console.log(row(["mode", "n", "agree", "accuracy", "FP", "FN"]));
  console.log(row(["---", "---:", "---:", "---:", "---:", "---:"]));
  const scores = ([false, true] as const).map((strict) => ({ strict, s: scoreLabelled(cases, strict) }));
  for (const { strict, s } of scores) {
    const pct = s.n ? (100 * s.agree / s.n).toFixed(1) : "-";
    console.log(row([modeName(strict), s.n, s.agree, `${pct}%`, s.fp, s.fn]));
  }
  const families = [...new Set(cases.map((c) => c.family).filter((f) => f !== undefined))].sort();
  if (families.length > 0) {
    console.log(`\nper family (${families.length}):`);
    console.log(row(["family", "n", "default accuracy", "FP", "FN", "strict accuracy", "FP", "FN"]));
    console.log(row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]));
    for (const f of families) {
      const of = cases.filter((c) => c.family === f);
      const cells = scores.flatMap(({ strict, s }) => {
        const t = tally(of, s.misses.filter((m) => m.c.family === f), strict);
        return [t.n ? `${(100 * t.agree / t.n).toFixed(1)}%` : "-", t.fp, t.fn];
      });
      console.log(row([f, of.length, ...cells]));
    }
  }
  for (const { strict, s } of scores) {
    for (const { c, rule } of s.misses) {
      const tags = `${c.source ? ` [${c.source}]` : ""}${c.family ? ` {${c.family}}` : ""}`;
      const want = labelIn(c, strict);
      console.log(
        `  ${file}:${c.lineNo} ${modeName(strict)}: label ${want}, graded ${!want} (${rule})${tags}`,
      );
    }
  }
}
