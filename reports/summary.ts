// summary.md: the inference scope first (how many base models, seeds and problems the intervals count), the paper
// table (methods × Pass@k, mean over runs with 95% intervals over bases × problems, seeds nested in bases), ACE
// minus baseline paired by base, seed and problem with one sentence each, the minimum detectable difference of
// the design and its variance components, incomplete data named and marked, per-subject/level breakdowns, and a
// reproducibility block.
import { sweepFile } from "../common/run_folder.ts";
import { describeDesign, describeProtocol, designOf, MIGRATE_HINT } from "../common/protocol.ts";
import {
  CEILING_MARK,
  CEILING_NOTE,
  chanceLine,
  crossedName,
  fewBasesWarning,
  mddCell,
  mddRangeNote,
} from "./caveats.ts";
import { comparisonSentence } from "./compare.ts";
import { type DataIssue, issueLines } from "./completeness.ts";
import { describeSampling } from "../bench/external/mod.ts";
import type { Folder, SweepData } from "./load.ts";
import { sliceOrder } from "./passk.ts";
import {
  BEFORE_RL,
  type CellModel,
  type ComparisonModel,
  type DesignModel,
  type DifferenceModel,
  type SummaryModel,
} from "./summary_model.ts";
import { e2, f3, signed, withInterval } from "./format.ts";

/** What summary.md is rendered from: the summary model and, for the texts around it, the folder. */
export interface SummaryInput {
  data: SweepData;
  /** Every number the summary prints (summary_model.ts). */
  model: SummaryModel;
  /** Extra Markdown lines of a dataset's section, after its tables (e.g. the ranking, controls). */
  sections?: (dataset: string) => string[];
}

/** Mark of a cell fed by a run with incomplete data; mark of a zero-width interval (nothing varies). */
const INCOMPLETE_MARK = "†";
const NO_SPREAD_MARK = "°";

function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
}

/** "0.412 [0.380, 0.444]", with ° when the interval has zero width because every value is equal. */
function cellText(c: { mean: number; lo: number; hi: number; identical: boolean }, fmt = f3): string {
  return withInterval(c, fmt) + (c.identical && Number.isFinite(c.lo) ? NO_SPREAD_MARK : "");
}

function passKTable(cells: readonly CellModel[], methods: readonly string[]): string[] {
  const ks = [...new Set(cells.map((c) => c.k))].sort((a, b) => a - b);
  const rows = methods.filter((m) => cells.some((c) => c.method === m)).map((m) => [
    m,
    ...ks.map((k) => {
      const c = cells.find((c) => c.method === m && c.k === k);
      if (!c) return "–";
      return cellText(c) + (c.incomplete ? INCOMPLETE_MARK : "") +
        (c.ungraded ? ` (${c.ungraded} ungraded)` : "") + (c.nearCeiling ? CEILING_MARK : "");
    }),
  ]);
  return table(["method", ...ks.map((k) => `Pass@${k}`)], rows);
}

/** The sentence above a dataset's table: what a cell averages and what its interval covers (eval: one model). */
function intervalNote(cells: readonly CellModel[], design: DesignModel, kind: SummaryModel["kind"]): string {
  const trained = cells.filter((c) => c.method !== BEFORE_RL);
  const steps = [...new Set(trained.map((c) => c.step))].sort((a, b) => a - b);
  const how = trained.every((c) => c.interval === "one seed")
    ? "one seed, so the 95% interval is over problems only: seed-to-seed variance is not measured; " +
      "for this base model only"
    : trained.some((c) => c.interval === "one seed")
    ? `${crossedName(design.bases > 1)}; over problems only where a method has one seed`
    : `${crossedName(design.bases > 1)}, clipped to [0, 1]`;
  const lines = [
    kind === "eval"
      ? `Mean over ${design.problems} problems, n = ${design.n} samples each, of one model (95% interval over ` +
        `problems: it holds for these problems' population and this model only).`
      : `Mean over ${
        unitsText(design)
      } × ${design.problems} problems, n = ${design.n} samples each, at step ${steps.join("/")} (${how}).`,
  ];
  if (cells.some((c) => c.method === BEFORE_RL && c.interval === "shared samples")) {
    lines.push(
      `The ${BEFORE_RL} row is one set of samples shared by every seed, so its interval is over problems only.`,
    );
  }
  if (cells.some((c) => c.identical)) {
    lines.push(
      `${NO_SPREAD_MARK} every seed and problem gives the same value, so that interval has zero width.`,
    );
  }
  return lines.join(" ");
}

/** "16 base models × 1 seed" or, with one base, "12 seed(s) of one base model". */
function unitsText(d: { bases: number; runs: number }): string {
  if (d.bases <= 1) return `${d.runs} seed(s) of one base model`;
  const per = d.runs / d.bases;
  return `${d.bases} base models × ${Number.isInteger(per) ? per : per.toFixed(1)} seed(s)`;
}

/**
 * The summary's first sentence: what the intervals generalise over (base models, seeds, problems), with a
 * warning for one base (the verdicts hold for that base only) and for fewer than 4 bases.
 */
function scopeText(designs: readonly DesignModel[]): string {
  const byDataset = designs.filter((d) => d.trained);
  if (byDataset.length === 0) return "";
  const d = byDataset[0];
  const problems = [...new Set(byDataset.map((x) => x.problems))].join("/");
  if (d.runs === 1) {
    return `Inference scope: one run (one model) on ${problems} problems: the intervals are over problems only ` +
      "and hold for this model only.";
  }
  if (d.bases <= 1) {
    return `Inference scope: ${d.runs} seed(s) of ONE base model and ${problems} problems, so every interval ` +
      "and verdict below holds for this base model only; another base model can move the results by more " +
      "than these intervals (give the sweep several `bases` for a statement about the method).";
  }
  const per = d.runs / d.bases;
  const scope = `Inference scope: over ${d.bases} independently trained base models, ${
    Number.isInteger(per) ? per : per.toFixed(1)
  } seed(s) each, ${problems} problems; every interval counts base, seed and problem variation.`;
  return d.bases < 4
    ? `${scope} Warning: with fewer than 4 base models the base term has ${d.bases - 1} degree(s) of ` +
      "freedom and such intervals under-cover; use at least 4."
    : scope;
}

/** A comparisons × k table, column `${what}@k`, each cell `text` of that difference ("–" where it has none). */
function kTable(
  comparisons: readonly ComparisonModel[],
  what: string,
  text: (d: DifferenceModel, c: ComparisonModel) => string,
): string[] {
  const ks = [...new Set(comparisons.flatMap((c) => c.differences.map((d) => d.k)))].sort((a, b) => a - b);
  const rows = comparisons.map((c) => [
    `${c.b} − ${c.a}`,
    ...ks.map((k) => {
      const d = c.differences.find((d) => d.k === k);
      return d ? text(d, c) : "–";
    }),
  ]);
  return table(["comparison", ...ks.map((k) => `${what}@${k}`)], rows);
}

function designText(c: ComparisonModel): string {
  const d = c.differences[0];
  if (!d) return "";
  const unpaired = c.unpaired.length ? `; ${c.unpaired.join(", ")} have no pair and are left out` : "";
  const units = d.bases > 1
    ? `${d.runs} run pair(s) over ${d.bases} base models`
    : `${d.runs} seed pair(s) of one base model`;
  return `${c.b} − ${c.a}: ${units} × ${d.problems} problems, n = ${d.n}${unpaired}`;
}

/** The ks that dropped out of the difference table, each with the runs lacking it. */
function droppedText(comparisons: readonly ComparisonModel[]): string[] {
  return comparisons.flatMap((c) =>
    c.dropped.map((d) =>
      `- ΔPass@${d.k} of ${c.b} − ${c.a} is not shown: ${d.runs.join(", ")} ${
        d.runs.length === 1 ? "has" : "have"
      } fewer than ${d.k} samples per problem.`
    )
  );
}

/** Variance components of each difference: base, seed within base, problem, base × problem, residual. */
function componentsTable(comparisons: readonly ComparisonModel[]): string[] {
  const rows = comparisons.flatMap((c) =>
    c.differences.map((d) => {
      const x = d.components;
      return [
        `${c.b} − ${c.a}`,
        String(d.k),
        ...[x.base, x.seed, x.problem, x.baseProblem, x.residual].map(e2),
      ];
    })
  );
  return table([
    "comparison",
    "k",
    "σ²_base",
    "σ²_seed(base)",
    "σ²_problem",
    "σ²_base×problem",
    "σ²_residual",
  ], rows);
}

/** What the components table's n/a and negative entries mean for this design. */
function componentsNote(comparisons: readonly ComparisonModel[]): string {
  const x = comparisons.flatMap((c) => c.differences.map((d) => d.components));
  const parts = ["Variance components of the paired difference (per value; method of moments)."];
  if (x.some((n) => !n.basesKnown)) {
    parts.push("One base model: σ²_base and σ²_base×problem are not estimable (n/a).");
  } else if (x.some((n) => !n.seedsKnown)) {
    parts.push(
      "One seed per base: σ²_base includes the seed variance and σ²_base×problem the residual (n/a columns).",
    );
  }
  if (x.some((n) => [n.base, n.seed, n.problem, n.baseProblem, n.residual].some((v) => v < 0))) {
    parts.push(
      "A negative estimate is shown as estimated; the intervals and the MDD both use the base-mean term " +
        "σ²_base + σ²_seed(base)/S and the residual term σ²_base×problem + σ²_residual/S, each truncated at 0 " +
        "as a whole.",
    );
  }
  return parts.join(" ");
}

function sliceTable(cells: readonly CellModel[], methods: readonly string[]): string[] {
  const slices = [...new Set(cells.map((c) => c.slice))].filter((s) => s !== "all").sort(sliceOrder);
  const kMax = Math.max(...cells.map((c) => c.k));
  const shown = methods.filter((m) => cells.some((c) => c.method === m));
  const rows = slices.map((slice) => [
    slice.replace("=", " "),
    ...shown.map((m) => {
      const at = (k: number) => cells.find((c) => c.method === m && c.slice === slice && c.k === k);
      const p1 = at(1), pm = at(kMax);
      return p1 && pm ? `${f3(p1.mean)} / ${f3(pm.mean)}` : "–";
    }),
  ]);
  return table(["slice", ...shown.map((m) => `${m} (Pass@1 / Pass@${kMax})`)], rows);
}

/** The evaluation protocol the folder recorded (grader mode first), or why it is unknown. */
function protocolLines(model: SummaryModel): string[] {
  if (model.protocol) return describeProtocol(model.protocol);
  return [
    "Not recorded: this folder was " + MIGRATE_HINT.replace(/; re-run/, ". Re-run") + ". (Folders of that " +
    "time graded sweeps in strict mode and `deno task eval` in default mode.)",
  ];
}

function reproducibility(data: SweepData): string[] {
  const f = data.folder;
  if (!f) return ["No sweep.json or eval.json in this folder: these runs come from another tool."];
  const kv = (o: Record<string, unknown>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(", ");
  const provenance = [`- versions: ${kv(f.versions)}`, `- machine: ${kv(f.machine)}`];
  if (f.kind === "eval") {
    const c = f.config;
    return [
      `- evaluation of \`${c.model}\` on \`${c.dataset}\` at ${c.endpoint}, config hash \`${f.configHash}\``,
      `- template \`${c.template.name}\``,
      ...provenance,
      `- reproduce: \`${c.command ?? "deno task eval …"}\``,
    ];
  }
  const c = f.config;
  const methods = (f.record?.methods ?? c.methods).map((m) => `${m.name} (${m.preset})`).join(", ");
  return [
    `- sweep: \`${c.name}\`, engine \`${c.engine}\`, config hash \`${f.configHash}\``,
    `- methods: ${methods}`,
    `- ${describeDesign(f.record?.design ?? designOf(c))}; RL steps: ${c.rl.steps}; eval n = ${c.eval.n}`,
    `- grid: ${c.grid ? `\`${JSON.stringify(c.grid)}\`` : "none"}`,
    `- backend: ${c.settings.backend ?? "n/a"}${
      data.resolvedBackend ? ` (resolved: ${data.resolvedBackend})` : ""
    }`,
    ...provenance,
    `- reproduce: \`deno task sweep --config ${sweepFile(data.dir)} --out NEW_DIR\` (the recorded fields are`,
    `  ignored; the config hash must match), then \`deno task report NEW_DIR\`.`,
  ];
}

/** Under an evaluation's title: the model and dataset, then its sampling by kind ([] without a record). */
function evalHeader({ config, record }: Folder & { kind: "eval" }): string[] {
  if (!record) return [];
  const lines = describeSampling(record.protocol.sampling.sent, record.protocol.n).map((line) => `- ${line}`);
  return [`Sampled from \`${config.model}\` (${config.mode}) on \`${config.dataset}\`:`, "", ...lines];
}

function issueList(issues: readonly DataIssue[]): string[] {
  return issueLines(issues, (i) => {
    const where = [i.dataset, i.step !== undefined ? `step ${i.step}` : undefined].filter((x) => x).join(
      ", ",
    );
    return `\`${i.runId}\`${where ? ` (${where})` : ""}: ${i.message}`;
  }).map((line) => `- ${line}`);
}

/**
 * The full summary.md text, rendered from the summary model (every number) and the folder (provenance texts).
 * Deterministic for the same inputs (no timestamps), so it can be golden-tested.
 */
export function renderSummary(input: SummaryInput): string {
  const { data, model } = input;
  const { methods, cells, issues } = model;
  const lines = [`# Pass@k summary: ${model.name}`, ""];
  const header = data.folder?.kind === "eval" ? evalHeader(data.folder) : [];
  if (header.length) lines.push(...header, "");
  const scope = scopeText(model.designs);
  if (scope) lines.push(scope, "");
  lines.push("## Evaluation protocol", "", ...protocolLines(model), "");
  if (issues.length) {
    lines.push(
      "## Incomplete data",
      "",
      `These runs are incomplete; the cells they feed are marked ${INCOMPLETE_MARK}.` +
        (issues.some((i) => i.ungraded)
          ? ` Ungraded answers (the grader timed out after a retry, or failed internally) are unknown, not ` +
            `wrong: Pass@k counts them as not correct, so a marked cell is a lower bound.`
          : ""),
      "",
      ...issueList(issues),
      "",
    );
  }
  for (const design of model.designs) {
    const dataset = design.dataset;
    const all = cells.filter((c) => c.dataset === dataset && c.slice === "all");
    lines.push(
      `## ${dataset}`,
      "",
      intervalNote(all, design, model.kind),
      "",
      ...passKTable(all, methods),
      "",
    );
    if (all.some((c) => c.incomplete)) {
      lines.push(
        `${INCOMPLETE_MARK} fed by an incomplete run, or fewer seeds, problems or samples than the design above` +
          (all.some((c) => c.ungraded > 0)
            ? `; "(N ungraded)": N answers the grader could not grade (timeout after a retry, internal error), ` +
              "counted as not correct, so the cell is a lower bound."
            : "."),
        "",
      );
    }
    if (all.some((c) => c.nearCeiling)) lines.push(CEILING_NOTE, "");
    const diffs = model.comparisons.filter((c) => c.dataset === dataset);
    if (diffs.length) {
      const dropped = droppedText(diffs);
      const shaped = diffs.map((c) => ({ ...c, cells: c.differences })); // the shape compare.ts' sentence reads
      lines.push(
        "ACE minus its baseline (each run's per-problem difference, paired by base, seed and problem; " +
          `${crossedName((diffs[0].differences[0] ?? design).bases > 1)}):`,
        "",
        ...kTable(diffs, "ΔPass", (d, c) => cellText(d, signed) + (c.incomplete ? INCOMPLETE_MARK : "")),
        "",
        ...(dropped.length ? [...dropped, ""] : []),
        ...shaped.map((c) => `- ${comparisonSentence(c)}`),
        "",
        chanceLine(shaped),
        "",
        ...fewBasesWarning(shaped),
        "Minimum detectable difference of this design (80% power, 5% two-sided; " +
          `${design.bases > 1 ? "over base models" : "for this base model only"}; \`deno task power\` ` +
          `projects it for other designs): ${diffs.map(designText).join("; ")}.`,
        "",
        ...kTable(diffs, "MDD", mddCell),
        "",
        ...(mddRangeNote(shaped) ? [mddRangeNote(shaped), ""] : []),
        componentsNote(diffs),
        "",
        ...componentsTable(diffs),
        "",
      );
    }
    lines.push(...(input.sections?.(dataset) ?? []));
    const sliced = cells.filter((c) => c.dataset === dataset && c.slice !== "all");
    if (sliced.length) {
      const kinds = ["family", "subject", "level"].filter((kind) =>
        sliced.some((c) => c.slice.startsWith(`${kind}=`))
      );
      const by = kinds.map((kind) => kind === "family" ? "task family" : kind).join(" and ");
      lines.push(`### ${dataset} by ${by}`, "", ...sliceTable(sliced, methods), "");
    }
  }
  lines.push("## Reproducibility", "", ...reproducibility(data), "");
  return lines.join("\n");
}
