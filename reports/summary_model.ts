// The summary model: one plain object holding every number a report prints (each cell over runs, each paired
// difference with its MDD and variance components, the reasoning-boundary counts, incomplete data, the design
// and the evaluation protocol). summary.md, summary.json, cells.csv and differences.csv are all rendered from it,
// so the Markdown and the machine-readable files cannot disagree. Its JSON form is checked against
// reports/schemas/summary.schema.json (ajv).
import { loadSchema, validate } from "../common/config.ts";
import { toCsv } from "../common/csv.ts";
import type { NestedComponents } from "../evaluators/mod.ts";
import type { BoundaryRow } from "./boundary.ts";
import { nearCeiling } from "./caveats.ts";
import type { Comparison } from "./compare.ts";
import { type DataIssue, touches } from "./completeness.ts";
import { folderName, type SweepData } from "./load.ts";
import type { AggregateCell } from "./passk.ts";
import { csv6 } from "./format.ts";

/** The version of the summary model (summary.json `version`); a change of meaning bumps it. */
const SUMMARY_VERSION = 1;

/** Row label of the policy before RL (the step-0 evaluation engines write, e.g. the tfjs SFT base model). */
export const BEFORE_RL = "step 0 (before RL)";

/** Everything a report prints, as numbers; its fields are described in reports/schemas/summary.schema.json. */
export type SummaryModel = ReturnType<typeof summaryModel>;
export type DesignModel = SummaryModel["designs"][number];
export type CellModel = SummaryModel["cells"][number];
export type ComparisonModel = SummaryModel["comparisons"][number];
export type DifferenceModel = ComparisonModel["differences"][number];

/** What the model is built from (computed by `buildReport`). */
export interface ModelInput {
  data: SweepData;
  /** Methods in display order. */
  methods: string[];
  cells: AggregateCell[];
  comparisons: Comparison[];
  boundary: BoundaryRow[];
  issues: DataIssue[];
}

/** Variance components of one value (per value; method of moments; NaN, null in JSON: not estimable). */
function components(
  { base, seed, problem, baseProblem, residual, basesKnown, seedsKnown }: NestedComponents,
) {
  return { base, seed, problem, baseProblem, residual, basesKnown, seedsKnown };
}

function mode(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0][0];
}

/** The design most trained cells (else all cells) of one dataset's slice "all" share. */
function designOf(dataset: string, cells: readonly AggregateCell[]) {
  const trained = cells.filter((c) => c.method !== BEFORE_RL);
  const use = trained.length ? trained : cells;
  return {
    dataset,
    bases: mode(use.map((c) => c.bases)),
    runs: mode(use.map((c) => c.seeds)),
    problems: mode(use.map((c) => c.problems)),
    n: mode(use.map((c) => c.n)),
    trained: trained.length > 0,
  };
}

function cellModel(
  c: AggregateCell,
  issues: readonly DataIssue[],
  firstMethod: string,
  design: ReturnType<typeof designOf> | undefined,
) {
  // The issues touching the cell (the step-0 row belongs to the first method's step 0).
  const method = c.method === BEFORE_RL ? firstMethod : c.method;
  const mine = issues.filter((i) => touches(i, method, c.dataset, c.step));
  // Slices are marked only by their runs' issues: their own problem counts are smaller by construction.
  const odd = design !== undefined && c.slice === "all" && c.method !== BEFORE_RL &&
    (c.seeds !== design.runs || c.bases !== design.bases || c.problems !== design.problems ||
      c.n !== design.n);
  return {
    method: c.method,
    dataset: c.dataset,
    slice: c.slice,
    step: c.step,
    k: c.k,
    mean: c.mean,
    lo: c.lo,
    hi: c.hi,
    se: c.se,
    interval: c.interval,
    scope: c.scope,
    identical: c.identical,
    bases: c.bases,
    runs: c.seeds,
    seeds: c.seedList,
    problems: c.problems,
    n: c.n,
    components: components(c.nested),
    incomplete: mine.length > 0 || odd,
    ungraded: mine.reduce((t, i) => t + (i.ungraded?.count ?? 0), 0),
    nearCeiling: nearCeiling(c),
  };
}

function comparisonModel(
  c: Comparison,
  cells: readonly AggregateCell[],
  issues: readonly DataIssue[],
) {
  // An issue at a side's final step (the step its differences come from) marks the comparison.
  const final = (m: string) =>
    Math.max(...cells.filter((x) => x.method === m && x.dataset === c.dataset).map((x) => x.step));
  const hit = (m: string) => issues.some((i) => touches(i, m, c.dataset, final(m)));
  return {
    dataset: c.dataset,
    a: c.a,
    b: c.b,
    incomplete: hit(c.a) || hit(c.b),
    unpaired: c.unpaired,
    dropped: c.dropped ?? [],
    differences: c.cells.map((d) => ({
      k: d.k,
      mean: d.mean,
      lo: d.lo,
      hi: d.hi,
      se: d.se,
      interval: d.interval,
      scope: d.scope,
      identical: d.identical,
      mdd: d.mdd,
      mddRange: { ...d.mddRange },
      bases: d.bases,
      runs: d.seeds,
      problems: d.problems,
      n: d.n,
      components: components(d.nested),
    })),
  };
}

/** Build the summary model of a report (pure: the same inputs give the same model). */
export function summaryModel(input: ModelInput) {
  const { data, cells, comparisons, boundary, issues } = input;
  const firstMethod = input.methods.find((m) => m !== BEFORE_RL)!; // its step-0 samples make the BEFORE_RL row
  const datasets = [...new Set(cells.map((c) => c.dataset))].sort();
  const designs = datasets.map((ds) =>
    designOf(ds, cells.filter((c) => c.dataset === ds && c.slice === "all"))
  );
  return {
    version: SUMMARY_VERSION,
    kind: data.folder?.kind ?? "sweep",
    name: folderName(data),
    protocol: data.folder?.record?.protocol ?? null,
    methods: input.methods.filter((m) => cells.some((c) => c.method === m)),
    designs,
    cells: cells.map((c) => cellModel(c, issues, firstMethod, designs.find((d) => d.dataset === c.dataset))),
    comparisons: comparisons.map((c) => comparisonModel(c, cells, issues)),
    boundary,
    issues,
  };
}

/** A report's JSON text (summary.json, `power --json`): every non-finite number (undefined interval, n/a) as null. */
export function reportJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v), 2);
}

/** summary.json's text: the model as reportJson writes it, with a final newline. */
export function summaryJson(model: SummaryModel): string {
  return reportJson(model) + "\n";
}

/** The JSON Schema of summary.json. */
export const SUMMARY_SCHEMA = new URL("./schemas/summary.schema.json", import.meta.url);

/** Parse and validate summary.json text against its schema; throws ValidationError naming `source` and the field. */
export function parseSummary(text: string, source: string): Record<string, unknown> {
  return validate<Record<string, unknown>>(loadSchema(SUMMARY_SCHEMA), JSON.parse(text), source);
}

const COMPONENT_COLUMNS = [
  "var_base",
  "var_seed",
  "var_problem",
  "var_base_problem",
  "var_residual",
] as const;

function componentRecord(x: ReturnType<typeof components>): Record<string, unknown> {
  const values = [x.base, x.seed, x.problem, x.baseProblem, x.residual];
  return Object.fromEntries(COMPONENT_COLUMNS.map((name, i) => [name, csv6(values[i])]));
}

/** cells.csv: every Pass@k cell over runs (slices included), with its interval and variance components. */
export function cellsCsv(model: SummaryModel): string {
  const rows = model.cells.map((c) => ({
    method: c.method,
    dataset: c.dataset,
    slice: c.slice,
    step: c.step,
    k: c.k,
    pass_at_k: csv6(c.mean),
    ci_lo: csv6(c.lo),
    ci_hi: csv6(c.hi),
    se: csv6(c.se),
    interval: c.interval,
    scope: c.scope,
    bases: c.bases,
    runs: c.runs,
    problems: c.problems,
    n: c.n,
    ...componentRecord(c.components),
    incomplete: c.incomplete,
    ungraded: c.ungraded,
    near_ceiling: c.nearCeiling,
  }));
  return toCsv(rows, Object.keys(rows[0] ?? {})); // a report has at least one cell
}

/** Columns of differences.csv, in order (one row per comparison and k). */
export const DIFFERENCE_COLUMNS = [
  "dataset",
  "a",
  "b",
  "k",
  "diff",
  "ci_lo",
  "ci_hi",
  "se",
  "mdd",
  "mdd_lo",
  "mdd_hi",
  "mdd_df",
  "interval",
  "scope",
  "bases",
  "runs",
  "problems",
  "n",
  ...COMPONENT_COLUMNS,
  "incomplete",
] as const;

/** differences.csv: every B − A difference with its interval, MDD (and its range) and variance components. */
export function differencesCsv(model: SummaryModel): string {
  return toCsv(
    model.comparisons.flatMap((c) =>
      c.differences.map((d) => ({
        dataset: c.dataset,
        a: c.a,
        b: c.b,
        k: d.k,
        diff: csv6(d.mean),
        ci_lo: csv6(d.lo),
        ci_hi: csv6(d.hi),
        se: csv6(d.se),
        mdd: csv6(d.mdd),
        mdd_lo: csv6(d.mddRange.lo),
        mdd_hi: csv6(d.mddRange.hi),
        mdd_df: d.mddRange.df,
        interval: d.interval,
        scope: d.scope,
        bases: d.bases,
        runs: d.runs,
        problems: d.problems,
        n: d.n,
        ...componentRecord(d.components),
        incomplete: c.incomplete,
      }))
    ),
    DIFFERENCE_COLUMNS,
  );
}
