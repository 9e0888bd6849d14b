// The owner of an eval suite's report, suite.md and suite.csv: one column per dataset of the suite (and the
// unweighted mean of the sets, as RLVR papers print an "Avg." column), one row per Pass@k, each cell the mean of
// the per-problem unbiased estimate over the scored problems ± its standard error over problems.
import { join } from "node:path";
import { atomicWrite } from "../common/fs.ts";
import { toCsv } from "../common/csv.ts";
import { passAtK } from "../evaluators/mod.ts";

/** One dataset's result in a suite: its graded samples, or why it has none. */
export interface SuiteSet {
  dataset: string;
  /** Problems asked for, and those with graded samples (the rest failed; see the set's own report). */
  problems: number;
  scored: number;
  /** Samples cut off at max_tokens among the graded ones. */
  truncated: number;
  rows: readonly { problemId: string; correct: boolean }[];
  /** Why the set has no result (it failed before any sample was graded). */
  error?: string;
}

/** A suite run: its name, model, n and ks, one line of protocol, and the sets in column order. */
export interface SuiteInput {
  suite: string;
  model: string;
  n: number;
  ks: readonly number[];
  protocol: string;
  sets: readonly SuiteSet[];
}

/** Mean and standard error over problems of Pass@k, or null when no problem has k graded samples. */
export function suiteCell(rows: SuiteSet["rows"], k: number): { mean: number; se: number | null } | null {
  const values = [...Map.groupBy(rows, (r) => r.problemId).values()].filter((p) => p.length >= k)
    .map((p) => passAtK(p.length, p.filter((r) => r.correct).length, k));
  if (values.length === 0) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (values.length < 2) return { mean, se: null };
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1);
  return { mean, se: Math.sqrt(variance / values.length) };
}

/** The suite's table as rows of cells: header, a Pass@k row per k, then scored problems and truncations. */
function table(input: SuiteInput) {
  const head = ["metric", ...input.sets.map((s) => s.dataset), "mean of sets"];
  const cellsAt = input.ks.map((k) => input.sets.map((s) => (s.error ? null : suiteCell(s.rows, k))));
  const rows = input.ks.map((k, i) => {
    const cells = cellsAt[i];
    const complete = cells.every((c) => c !== null);
    const mean = complete ? cells.reduce((a, c) => a + c!.mean, 0) / cells.length : null;
    return {
      label: `Pass@${k}`,
      md: [
        ...cells.map((c) =>
          c === null ? "-" : `${c.mean.toFixed(3)}${c.se === null ? "" : ` ± ${c.se.toFixed(3)}`}`
        ),
        mean === null ? "-" : mean.toFixed(3),
      ],
      csv: [...cells.map((c) => c === null ? "" : c.mean.toFixed(6)), mean === null ? "" : mean.toFixed(6)],
    };
  });
  const se = input.ks.map((k, i) => ({
    label: `Pass@${k} se`,
    md: [],
    csv: [...cellsAt[i].map((c) => c?.se?.toFixed(6) ?? ""), ""],
  }));
  const count = (label: string, value: (s: SuiteSet) => string) => {
    const cells = input.sets.map(value);
    return { label, md: [...cells, ""], csv: [...cells, ""] };
  };
  return {
    head,
    rows: [
      ...rows,
      ...se,
      count("problems scored", (s) => `${s.scored}/${s.problems}`),
      count("samples truncated", (s) => String(s.truncated)),
    ],
  };
}

/** suite.md: title, protocol, the table, and a line per set that has no result. */
function renderSuiteMarkdown(input: SuiteInput): string {
  const { head, rows } = table(input);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const failed = input.sets.filter((s) => s.error);
  return [
    `# ${input.suite} suite: ${input.model}`,
    "",
    `${input.protocol}`,
    "",
    `Each cell is Pass@k (unbiased, from n = ${input.n} samples per problem) averaged over the set's scored ` +
    'problems, ± its standard error over problems; "mean of sets" is the unweighted mean of the columns. Each ' +
    "set's own report (per-slice rows, intervals, run health) is `<set>/summary.md`.",
    "",
    line(head),
    line(head.map((_, i) => (i === 0 ? "---" : "---:"))),
    ...rows.filter((r) => r.md.length > 0).map((r) => line([r.label, ...r.md])),
    ...(failed.length ? ["", ...failed.map((s) => `- **${s.dataset}: no result**: ${s.error}`)] : []),
    "",
  ].join("\n");
}

/** suite.csv: the same table, machine-readable (a row per Pass@k, its standard errors, counts; empty = none). */
function renderSuiteCsv(input: SuiteInput): string {
  const { head, rows } = table(input);
  return toCsv(
    rows.map((r) => Object.fromEntries(head.map((h, i) => [h, i === 0 ? r.label : r.csv[i - 1]]))),
    head,
  );
}

/** Write `dir`/suite.md and `dir`/suite.csv atomically; returns their paths. */
export function writeSuiteReport(dir: string, input: SuiteInput): string[] {
  const md = join(dir, "suite.md");
  const csv = join(dir, "suite.csv");
  atomicWrite(md, renderSuiteMarkdown(input));
  atomicWrite(csv, renderSuiteCsv(input));
  return [md, csv];
}
