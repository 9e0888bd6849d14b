// `deno task grade`: grade a JSON-lines file of {prediction, gold, ...} and report agreement with `expected`.
import { bool, flagLines, type FlagTable, int, num, parseTable, str, UsageError } from "../common/args.ts";
import { atomicWrite } from "../common/fs.ts";
import { gradeMany } from "./pool.ts";
import type { GradeExplanation, GradeResult } from "./grade.ts";

/** The flags of `deno task grade`, declared once for parsing, --help and validation. */
export const FLAGS = {
  input: str("FILE", "JSON-lines input (required)"),
  output: str("FILE", "write graded JSON lines here (atomically; not the --input file)"),
  strict: bool(
    'accept only explicit answer markers (\\boxed, "Answer:", "final answer is"), as for rewards (a ' +
      'line\'s own boolean "strict": true does the same for that line)',
  ),
  explain: bool(
    'add "explain" to each output line (extraction rule, normalised prediction and gold with their forms ' +
      "and the normalisation rules that fired, the comparison that decided) and print one explanation line per " +
      "input line (stderr)",
  ),
  "decimal-comma": bool('read a lone "1,5" as the decimal 1.5 (by default it is the list 1, 5)'),
  workers: int("grading workers (default: cores; 0 grades inline, without the hard timeout)", {
    min: 0,
    max: 256,
  }),
  "timeout-ms": num("hard per-answer timeout in the worker pool (default 2000)", {
    min: 1,
    max: 600_000,
    value: "MS",
  }),
} as const satisfies FlagTable;

/** Usage text for `deno task grade`. */
export const usage = `usage: deno task grade --input FILE.jsonl [--output FILE.jsonl] [flags]

Each input line is a JSON object with string fields "prediction" and "gold"; every other field is passed through.
Output lines add "correct", "status" (correct | wrong | no_answer | parse_error | timeout), "extracted" and "rule".
Without --output the graded lines go to stdout. If lines carry a boolean "expected", an agreement summary and the
disagreeing lines are printed at the end (stderr). Malformed lines are reported with their line number and skipped;
the exit code is then 1 (0 when every line was graded).

${flagLines(FLAGS)}

example: deno task grade --input preds.jsonl --output graded.jsonl`;

/** True when both paths name one existing file (after links and `..`), so writing one would destroy the other. */
function sameFile(a: string, b: string): boolean {
  try {
    return Deno.realPathSync(a) === Deno.realPathSync(b);
  } catch {
    return false; // one of them does not exist yet
  }
}

/** Parse the input text into records, collecting one-line errors ("FILE:N: why") for malformed lines. */
export function parseInput(text: string, file: string) {
  const lines: { lineNo: number; record: Record<string, unknown> }[] = [];
  const errors: string[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    const where = `${file}:${i + 1}`;
    let record: Record<string, unknown> | null;
    try {
      record = JSON.parse(raw);
    } catch (e) {
      errors.push(`${where}: invalid JSON (${(e as Error).message})`);
      return;
    }
    if (record === null || typeof record !== "object" || Array.isArray(record)) {
      errors.push(`${where}: expected a JSON object`);
      return;
    }
    const field = ["prediction", "gold"].find((f) => typeof record[f] !== "string");
    if (field) errors.push(`${where}: field "${field}" must be a string`);
    else lines.push({ lineNo: i + 1, record });
  });
  return { lines, errors };
}

/** Entry point for `deno task grade`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  if (!values.input) throw new UsageError("--input FILE.jsonl is required");
  if (values.output && sameFile(values.input, values.output)) {
    throw new UsageError(`--output ${values.output} is the --input file; write the graded lines elsewhere`);
  }
  let text: string;
  try {
    text = Deno.readTextFileSync(values.input);
  } catch (e) {
    throw new Error(`${values.input}: cannot read (${(e as Error).message})`);
  }
  const { lines, errors } = parseInput(text, values.input);
  for (const err of errors) console.error(err);
  const results = await gradeMany(
    lines.map(({ record }) => ({
      prediction: record.prediction as string,
      gold: record.gold as string,
      strict: values.strict || record.strict === true,
      decimalComma: values["decimal-comma"],
      explain: values.explain,
    })),
    { workers: values.workers, timeoutMs: values["timeout-ms"] },
  );
  const out = lines.map(({ record }, k) => JSON.stringify({ ...record, ...results[k] })).join("\n") +
    (lines.length ? "\n" : "");
  if (values.output) atomicWrite(values.output, out);
  else await Deno.stdout.write(new TextEncoder().encode(out));
  if (values.explain) {
    lines.forEach((l, k) => console.error(explainLine(values.input!, l.lineNo, results[k])));
  }
  printAgreement(lines, results.map((r) => r.correct), values.input);
  const counts = Object.entries(Object.groupBy(results, (r) => r.status)).map(([k, v]) =>
    `${k} ${v!.length}`
  );
  console.error(
    `graded ${lines.length} lines (${counts.join(", ") || "none"})` +
      (errors.length ? `; ${errors.length} malformed line(s) skipped` : ""),
  );
  return errors.length ? 1 : 0;
}

/** One line saying why a verdict came out: "FILE:N: status by extraction rule; pred … vs gold …; comparison". */
export function explainLine(file: string, lineNo: number, r: GradeResult): string {
  const e = r.explain;
  if (!e) return `${file}:${lineNo}: ${r.status} (${r.rule})`;
  const side = (x: GradeExplanation["prediction"]) =>
    x ? `${JSON.stringify(x.normalized)} [${x.form}${x.rules.length ? "; " + x.rules.join(", ") : ""}]` : "-";
  return `${file}:${lineNo}: ${r.status} | extraction ${e.extraction} | prediction ${side(e.prediction)} | ` +
    `gold ${side(e.gold)} | comparison ${e.comparison}`;
}

// Agreement with the lines' boolean "expected" labels, with every disagreeing line listed.
function printAgreement(lines: ReturnType<typeof parseInput>["lines"], correct: boolean[], file: string) {
  const labelled = lines.map((l, k) => ({ l, got: correct[k] })).filter(({ l }) =>
    typeof l.record.expected === "boolean"
  );
  if (labelled.length === 0) return;
  const disagree = labelled.filter(({ l, got }) => l.record.expected !== got);
  const pct = (100 * (labelled.length - disagree.length) / labelled.length).toFixed(2);
  console.error(
    `agreement with "expected": ${labelled.length - disagree.length}/${labelled.length} (${pct}%)`,
  );
  for (const { l, got } of disagree) {
    const note = typeof l.record.note === "string" ? ` [${l.record.note}]` : "";
    console.error(`  ${file}:${l.lineNo}${note}: expected ${l.record.expected}, graded ${got}`);
  }
}
