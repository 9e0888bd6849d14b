// `deno task report DIR`: passk.csv, summary.md and plots/*.svg next to the sweep; `--compare A B` as Markdown.
import { join } from "node:path";
import { atomicWrite } from "../common/fs.ts";
import { toCsv } from "../common/csv.ts";
import { checkSameProtocol, protocolTable } from "../common/protocol.ts";
import { aceComparisons, comparePairs, comparisonSentence, requestedComparisons } from "./compare.ts";
import { boundaryRecord, boundaryRows, boundarySection } from "./boundary.ts";
import { dataIssues } from "./completeness.ts";
import { calibrationCsv, calibrationPoints, calibrationSection } from "./calibration.ts";
import { checkClaims, controlsCsv, controlsSection } from "./controls.ts";
import { doseCsv, doseResults, doseSection, doseVariants } from "./dose.ts";
import { loadSweep, usableRuns } from "./load.ts";
import {
  type AggregateCell,
  aggregateSeeds,
  csvRecord,
  finalRows,
  type PassKRow,
  passKRows,
} from "./passk.ts";
import {
  calibrationSpec,
  diffSpec,
  doseSpec,
  passKSpec,
  renderSvg,
  trainingCsv,
  trainingSpec,
} from "./plots.ts";
import { renderSummary } from "./summary.ts";
import type * as vl from "vega-lite";
import {
  BEFORE_RL,
  cellsCsv,
  differencesCsv,
  parseSummary,
  summaryJson,
  summaryModel,
} from "./summary_model.ts";
import { rankingSection } from "./ranking.ts";
import { referenceCurves, type ReferenceRow, referenceSection, runProtocol } from "./references.ts";
import { f3, signed } from "./format.ts";

/** A column a caller adds to passk.csv (after the shared ones): its name and its value for each row. */
export interface ExtraColumn {
  name: string;
  value(row: PassKRow): string | number;
}

/**
 * Options: bootstrap iterations (default 2000); extra passk.csv columns and extra Markdown sections appended to
 * summary.md (e.g. `deno task eval`'s truncation counts and run-health block).
 */
export interface ReportOptions {
  iters?: number;
  columns?: readonly ExtraColumn[];
  sections?: readonly string[];
  /** Published pass@k points to overlay and compare (`report --reference FILE`; references.ts). */
  references?: ReferenceRow[];
  /** `--compare`: compare even when the two evaluation protocols differ (a warning line instead of an error). */
  allowProtocolChange?: boolean;
}

/** Step-0 cells of the first method, relabelled, when runs evaluated step 0 and trained past it. */
function beforeRl(rows: readonly PassKRow[], final: readonly PassKRow[], method: string): AggregateCell[] {
  const initial = rows.filter((r) => r.step === 0 && r.method === method);
  if (initial.length === 0 || final.every((r) => r.step === 0)) return [];
  return aggregateSeeds(initial).map((c) => ({ ...c, method: BEFORE_RL }));
}

/**
 * Compute the report of a sweep folder without writing anything: its rows, comparisons, cells (each method's final
 * step, plus the step-0 row when there is one), issues (empty when complete), the summary model and Markdown, the
 * CSV texts, and the boundary, dose, calibration and controls results (each empty when the sweep has none).
 */
// deno-lint-ignore require-await -- async API (callers await it; loading used to ingest engine outputs)
export async function buildReport(dir: string, options: ReportOptions = {}) {
  const data = loadSweep(dir);
  const runs = usableRuns(data);
  if (runs.length === 0) throw new Error(`${dir}: no finished run with evaluation samples to report`);
  const rows = passKRows(runs, options.iters);
  const final = finalRows(rows);
  const presets = new Map(runs.map((r) => [r.method, r.preset]));
  const all = final.filter((r) => r.slice === "all");
  const aceVsBaseline = aceComparisons(all, presets, data.folder?.record?.methods);
  const requested = data.folder?.kind === "sweep" ? data.folder.config.compare ?? [] : [];
  const comparisons = [...aceVsBaseline, ...requestedComparisons(all, requested, aceVsBaseline)];
  const methods = [...new Set(runs.map((r) => r.method))]; // in run order: the sweep's expansion order
  const cells = [...beforeRl(rows, final, methods[0]), ...aggregateSeeds(final)];
  const issues = dataIssues(data);
  const boundary = boundaryRows(rows, comparisons, BEFORE_RL);
  const oneBase = new Set(runs.map((r) => r.base)).size === 1;
  const calibration = calibrationPoints(runs, rows);
  // A calibration runs each preset at several step sizes: a claim's sides would pair methods of different steps.
  const controls = calibration.length ? { results: [], skipped: [] } : checkClaims(rows, presets);
  const dose = doseResults(rows, doseVariants(runs, data.folder?.record?.methods));
  const model = summaryModel({
    data,
    methods: [BEFORE_RL, ...methods],
    cells,
    comparisons,
    boundary,
    issues,
  });
  const summary = renderSummary({
    data,
    model,
    sections: (dataset) => [
      ...rankingSection(cells, dataset, BEFORE_RL),
      ...boundarySection(boundary, dataset, BEFORE_RL, oneBase),
      ...controlsSection(controls, dataset),
      ...doseSection(dose, dataset),
      ...calibrationSection(calibration, dataset),
      ...referenceSection(options.references ?? [], cells, dataset, runProtocol(data.folder)),
    ],
  }) + (options.sections ?? []).map((section) => "\n" + section.trimEnd() + "\n").join("");
  const extra = options.columns ?? [];
  const records = rows.map((r) => ({
    ...csvRecord(r),
    ...Object.fromEntries(extra.map((c) => [c.name, c.value(r)])),
  }));
  const csv = toCsv(records, Object.keys(records[0])); // a report has rows (buildReport refuses a sweep without)
  const boundaryRecords = boundary.map(boundaryRecord);
  const boundaryCsv = toCsv(boundaryRecords, Object.keys(boundaryRecords[0] ?? {})); // written when non-empty
  return {
    data,
    runs,
    methods,
    rows,
    comparisons,
    cells,
    issues,
    model,
    summary,
    csv,
    boundary,
    boundaryCsv,
    dose,
    calibration,
    controls,
  };
}

/**
 * Write passk.csv, summary.md, summary.json (checked against its schema), cells.csv, differences.csv and plots/
 * into the sweep folder; returns the written paths, the data issues (incomplete data are written, marked; the
 * caller decides whether they are an error: `report` without --partial) and how many answers the report counts.
 */
export async function writeReport(dir: string, options: ReportOptions = {}) {
  const report = await buildReport(dir, options);
  const written: string[] = [];
  const put = (name: string, text: string) => {
    atomicWrite(join(dir, name), text);
    written.push(join(dir, name));
  };
  put("passk.csv", report.csv);
  if (report.boundary.length) put("boundary.csv", report.boundaryCsv);
  put("summary.md", report.summary);
  const json = summaryJson(report.model);
  parseSummary(json, join(dir, "summary.json")); // a model the schema refuses is a bug: never write it
  put("summary.json", json);
  put("cells.csv", cellsCsv(report.model));
  if (report.calibration.length) put("calibration.csv", calibrationCsv(report.calibration));
  if (report.dose.length) put("dose.csv", doseCsv(report.dose));
  if (report.controls.results.length) put("controls.csv", controlsCsv(report.controls.results));
  if (report.runs.some((r) => r.metrics.length > 0)) put("training.csv", trainingCsv(report.runs));
  put("differences.csv", differencesCsv(report.model));
  const cells = report.cells;
  const plots: [string, string[], (dataset: string) => vl.TopLevelSpec][] = [
    [
      "passk",
      cells.map((c) => c.dataset),
      (d) => passKSpec(cells, d, BEFORE_RL, referenceCurves(options.references ?? [], d)),
    ],
    ["diff", report.comparisons.map((c) => c.dataset), (d) => diffSpec(report.comparisons, d)],
    ["dose", report.dose.map((r) => r.dataset), (d) => doseSpec(report.dose, d)],
    ["calibration", report.calibration.map((p) => p.dataset), (d) => calibrationSpec(report.calibration, d)],
  ];
  for (const [kind, datasets, spec] of plots) {
    for (const dataset of [...new Set(datasets)].sort()) {
      put(`plots/${kind}_${dataset.replace(/[^A-Za-z0-9._-]/g, "_")}.svg`, await renderSvg(spec(dataset)));
    }
  }
  const training = trainingSpec(report.runs);
  if (training) put("plots/training.svg", await renderSvg(training));
  return {
    written,
    issues: report.issues,
    datasets: [...new Set(cells.map((c) => c.dataset))].sort(),
    // Graded answers the report counts (the denominator of the ungraded share).
    answers: report.runs.reduce((t, r) => t + r.samples.length, 0),
  };
}

/**
 * Markdown comparing two sweeps: their protocols side by side, then each shared method's Pass@k in A and B and
 * the paired B − A difference. Different protocols are refused (ValidationError naming the field) unless
 * `options.allowProtocolChange`.
 */
export async function compareSweeps(dirA: string, dirB: string, options: ReportOptions = {}) {
  const [a, b] = await Promise.all([buildReport(dirA, options), buildReport(dirB, options)]);
  // Two evals: one run each (its model, its --seed), paired with each other problem by problem whatever their
  // model names and seeds.
  const evals = a.data.folder?.kind === "eval" && b.data.folder?.kind === "eval";
  const [ma, mb] = [a.methods[0], b.methods[0]];
  const model = !evals ? "" : ma === mb ? ma : `${ma} → ${mb}`; // the row label: the model, or A's → B's
  const asPair = (rows: PassKRow[]) =>
    evals ? rows.map((r) => ({ ...r, method: model, base: 0, seed: 0 })) : rows;
  const [finalA, finalB] = [a, b].map((x) => asPair(finalRows(x.rows).filter((r) => r.slice === "all")));
  const [methodsA, methodsB] = evals ? [[model], [model]] : [a.methods, b.methods];
  const sides = [
    { label: dirA, protocol: a.data.folder?.record?.protocol ?? null },
    { label: dirB, protocol: b.data.folder?.record?.protocol ?? null },
  ] as const;
  const notes = checkSameProtocol(sides[0], sides[1], options.allowProtocolChange ?? false);
  const lines = [`# Compare: A = ${dirA}, B = ${dirB}`, ""];
  const hashes = `A ${a.data.folder?.configHash ?? "n/a"}, B ${b.data.folder?.configHash ?? "n/a"}.`;
  const what =
    "what changes the samples: model, dataset, template, sampling and seed; the grader mode is not part " +
    "of it, as it re-grades the same samples: see grader.mode below";
  lines.push(evals ? `Config hashes (${what}): ${hashes}` : `Config hashes: ${hashes}`, "");
  lines.push("Evaluation protocols (grader mode first):", "", ...protocolTable(sides[0], sides[1]), "");
  if (notes.length) lines.push(...notes.map((n) => `- ${n}`), "");
  // Each side's rows labelled "<method> [A]" / "[B]", in dataset order (code units), as comparePairs takes them.
  const label = (rows: PassKRow[], side: string) =>
    rows.map((r) => ({ ...r, method: `${r.method} [${side}]` }))
      .sort((x, y) => (x.dataset < y.dataset ? -1 : x.dataset > y.dataset ? 1 : 0));
  const comparisons = comparePairs(
    [...label(finalA, "A"), ...label(finalB, "B")],
    methodsA.filter((m) => methodsB.includes(m)).map((m) => [`${m} [A]`, `${m} [B]`] as const),
  );
  if (comparisons.length === 0) {
    const shared = evals ? "evals share no dataset" : "sweeps share no method and dataset";
    return [...lines, `The two ${shared}.`, ""].join("\n");
  }
  const ks = [...new Set(comparisons.flatMap((c) => c.cells.map((d) => d.k)))].sort((x, y) => x - y);
  const aggA = aggregateSeeds(finalA), aggB = aggregateSeeds(finalB);
  lines.push(
    evals
      ? "B − A is paired by problem: each problem's Pass@k in B minus in A (sample i of a problem was requested " +
        "with the same seed in both when their --seed agree), with the 95% interval over problems: it generalises " +
        "over problems like these, for these two models and settings only; and the minimum detectable " +
        "difference (80% power, 5% two-sided)."
      : "B − A is paired by base and seed (the same base and seed numbers in both sweeps) and problem, with the " +
        "95% crossed interval (bases × problems; with one base, seeds × problems for that base only) and the " +
        "minimum detectable difference (80% power, 5% two-sided).",
    "",
  );
  lines.push(`| method | dataset | ${ks.map((k) => `Pass@${k} A → B (Δ [95%], MDD)`).join(" | ")} |`);
  lines.push(`|---|---|${ks.map(() => "---:").join("|")}|`);
  for (const c of comparisons) {
    const method = c.a.replace(/ \[A\]$/, "");
    const cellsText = ks.map((k) => {
      const d = c.cells.find((d) => d.k === k);
      const ca = aggA.find((x) => x.method === method && x.dataset === c.dataset && x.k === k);
      const cb = aggB.find((x) => x.method === method && x.dataset === c.dataset && x.k === k);
      return d && ca && cb
        ? `${f3(ca.mean)} → ${f3(cb.mean)} (${signed(d.mean)} [${signed(d.lo)}, ${signed(d.hi)}], MDD ${
          f3(d.mdd)
        })`
        : "–";
    });
    lines.push(`| ${method} | ${c.dataset} | ${cellsText.join(" | ")} |`);
  }
  lines.push("", ...comparisons.map((c) => `- ${comparisonSentence(c, evals)}`), "");
  return lines.join("\n");
}
