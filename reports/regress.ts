// `deno task regress`: each method's final Pass@k (mean over runs and problems) against a committed baseline. Each
// cell gets a one-sided t test of its drop; both sweeps evaluate the same problems, so the problem component
// cancels and what remains is the noise a re-run has: each sweep's base term (σ²_base + σ²_seed/S)/B and residual
// term. The cells of a sweep are one family (every method, dataset and k), so the verdicts are Holm-adjusted:
// two re-runs that differ only in seeds fail with probability ≤ 5% however many cells there are.
import { exists, readJson, writeJson } from "../common/fs.ts";
import { bool, flagLines, type FlagTable, num, parseTable, str, UsageError } from "../common/args.ts";
import { checkSameProtocol, type EvalProtocol } from "../common/protocol.ts";
import { holm, tCdf, tQuantile } from "../evaluators/mod.ts";
import { type DataIssue } from "./completeness.ts";
import { buildReport, type ReportOptions } from "./report.ts";
import { type AggregateCell, aggregateSeeds, finalRows, type PassKRow } from "./passk.ts";
import { folderName } from "./load.ts";
import { r6 } from "./format.ts";

/** One baseline cell: a method's final Pass@k on a dataset, mean over seeds, with its noise for a re-run. */
export interface BaselineCell {
  method: string;
  dataset: string;
  k: number;
  mean: number;
  /** 95% crossed interval (display). */
  lo: number;
  hi: number;
  /** Noise of the mean for a re-run on the same problems: variance terms with their degrees of freedom. */
  noise: { variance: number; df: number }[];
  seeds: number;
  problems: number;
}

/** The committed baseline file. */
export interface Baseline {
  version: 2;
  sweep: string | null;
  configHash: string | null;
  /** The evaluation protocol of the sweep the cells came from (absent in files written before the record). */
  protocol?: EvalProtocol | null;
  cells: BaselineCell[];
}

const r9 = (x: number) => Number(x.toPrecision(6));

/** Noise of a cell for a re-run on the same problems: its seed and residual terms (one seed: the problem term). */
function rerunNoise(c: AggregateCell): { variance: number; df: number }[] {
  const t = c.terms;
  const terms = t.seedDf > 0
    ? [{ variance: t.seedTerm, df: t.seedDf }, { variance: t.residualTerm, df: t.residualDf }]
    : [{ variance: t.problemTerm, df: t.problemDf }];
  return terms.filter((x) => x.variance > 0 && x.df > 0).map((x) => ({ variance: r9(x.variance), df: x.df }));
}

/** Baseline cells of Pass@k rows: every method × dataset × k at the final step, slice "all", sorted. */
export function baselineCells(rows: readonly PassKRow[]): BaselineCell[] {
  return aggregateSeeds(finalRows(rows).filter((r) => r.slice === "all"))
    .map((c) => ({
      method: c.method,
      dataset: c.dataset,
      k: c.k,
      mean: r6(c.mean),
      lo: r6(c.lo),
      hi: r6(c.hi),
      noise: rerunNoise(c),
      seeds: c.seeds,
      problems: c.problems,
    }))
    .sort((a, b) => a.dataset.localeCompare(b.dataset) || a.method.localeCompare(b.method) || a.k - b.k);
}

/** Baseline cells of a sweep folder (every method × dataset × k at the final step, slice "all") and its issues. */
export async function baselineOf(
  dir: string,
  options: ReportOptions = {},
): Promise<Baseline & { issues: DataIssue[] }> {
  const report = await buildReport(dir, options);
  const cells = baselineCells(report.rows);
  return {
    version: 2,
    sweep: report.data.folder ? folderName(report.data) : null,
    configHash: report.data.folder?.configHash ?? null,
    protocol: report.data.folder?.record?.protocol ?? null,
    cells,
    issues: report.issues,
  };
}

/** Read and check a baseline file; the error names the file and the bad field. */
export function readBaseline(path: string): Baseline {
  const b = readJson<Baseline>(path);
  if (b.version !== 2 || !Array.isArray(b.cells)) {
    throw new Error(
      `${path}: not a version-2 baseline (version, cells); regenerate it with deno task regress --update`,
    );
  }
  b.cells.forEach((c, i) => {
    for (const f of ["mean", "lo", "hi", "k", "seeds", "problems"] as const) {
      if (typeof c[f] !== "number") throw new Error(`${path}: cells[${i}].${f}: expected a number`);
    }
    if (!Array.isArray(c.noise) || c.noise.some((x) => !(x.variance >= 0) || !(x.df > 0))) {
      throw new Error(`${path}: cells[${i}].noise: expected [{ variance ≥ 0, df > 0 }, …]`);
    }
  });
  return b;
}

/** Write a baseline atomically (the explicit `--update` path). */
function writeBaseline(path: string, baseline: Baseline): void {
  const { version, sweep, configHash, protocol, cells } = baseline; // not the caller's extra fields (issues)
  writeJson(path, { version, sweep, configHash, protocol: protocol ?? null, cells });
}

/** One-sided test of a drop with independent noise terms: se = √Σ variance, ν by Satterthwaite, p = P(T ≥ drop/se). */
function dropTest(terms: readonly { variance: number; df: number }[], drop: number) {
  const v = terms.reduce((acc, x) => acc + x.variance, 0);
  const df = v > 0 ? v ** 2 / terms.reduce((acc, x) => acc + x.variance ** 2 / x.df, 0) : 1;
  const se = Math.sqrt(v);
  // 1e-9 absorbs float noise in otherwise identical numbers.
  if (!(se > 0)) return { se, df, p: drop > 1e-9 ? 0 : 1 };
  return { se, df, p: 1 - tCdf(drop / se, df) };
}

/**
 * Compare every baseline cell with the current one: a one-sided t test of each drop, Holm-adjusted over all
 * cells at family-wise level `alpha` (default 0.05). A missing current cell counts as a regression (p NaN).
 * `allowed`: the largest drop the noise allows at the cell's Holm `level`, t(1 − level, ν)·se (ν: Satterthwaite).
 */
export function compareToBaseline(baseline: Baseline, current: Baseline, alpha = 0.05) {
  const pairs = baseline.cells.map((b) => ({
    b,
    c: current.cells.find((c) => c.method === b.method && c.dataset === b.dataset && c.k === b.k),
  }));
  const tests = pairs.map(({ b, c }) => c ? dropTest([...b.noise, ...c.noise], b.mean - c.mean) : null);
  const verdicts = holm(tests.map((t) => t?.p ?? NaN), alpha);
  return pairs.map(({ b, c }, i) => {
    const where = {
      method: b.method,
      dataset: b.dataset,
      k: b.k,
      baseline: b.mean,
      level: verdicts[i].level,
    };
    const t = tests[i];
    if (!c || !t) return { ...where, current: null, allowed: 0, p: NaN, regressed: true };
    const allowed = t.se > 0 ? t.se * tQuantile(1 - verdicts[i].level, t.df) : 0;
    return { ...where, current: c.mean, allowed, p: t.p, regressed: verdicts[i].rejected };
  });
}

/** One line per regressed cell, e.g. "ace-grpo synthetic Pass@4: 0.512 → 0.430 (drop 0.082 > allowed 0.031)". */
export function describeRegressions(cells: ReturnType<typeof compareToBaseline>): string[] {
  return cells.filter((c) => c.regressed).map((c) =>
    c.current === null
      ? `${c.method} ${c.dataset} Pass@${c.k}: missing from the current sweep (baseline ${
        c.baseline.toFixed(3)
      })`
      : `${c.method} ${c.dataset} Pass@${c.k}: ${c.baseline.toFixed(3)} → ${c.current.toFixed(3)} (drop ${
        (c.baseline - c.current).toFixed(3)
      } > allowed ${c.allowed.toFixed(3)}; one-sided p = ${c.p.toPrecision(2)} ≤ Holm level ${
        c.level.toPrecision(2)
      })`
  );
}

/** The flags of `deno task regress`, declared once for parsing, --help and validation. */
export const FLAGS = {
  baseline: str("FILE", "the committed baseline (required)"),
  current: str("DIR", "the sweep folder to check (required)"),
  update: bool(
    "write DIR's cells as the new baseline FILE instead of checking (an explicit, reviewed change)",
  ),
  iters: num("bootstrap resamples of the per-run intervals", { default: 2000, min: 100, max: 1e6 }),
  "allow-config-change": bool(
    "compare even though DIR's config hash differs from the baseline's (otherwise exit 2)",
  ),
  "allow-protocol-change": bool(
    "compare even though DIR's evaluation protocol (grader mode and version, datasets, template, " +
      "sampling, n, ks) differs from the baseline's (otherwise exit 2, naming the field); a baseline written " +
      "before protocols were recorded gets a note, not a refusal",
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task regress`. */
export const usage = `usage: deno task regress --baseline FILE --current DIR [flags]

Compares the final Pass@k (mean over runs and problems) of every method/dataset/k in sweep folder DIR with a
committed baseline and exits 1 when a cell's drop is significant: a one-sided t test per cell over the noise a
re-run on the same problems has (both sweeps' base and residual terms; Satterthwaite degrees of freedom),
Holm-adjusted over all cells so that two re-runs differing only in seeds fail at most 5% of the time. Each
regressed cell is named. Incomplete current data also fail.

${flagLines(FLAGS)}

example: deno task regress --baseline reports/baselines/ci-tabular.json --current runs/ci-tabular`;

/** Entry point for `deno task regress`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  if (!values.baseline || !values.current) {
    throw new UsageError("--baseline FILE and --current DIR are required");
  }
  const current = await baselineOf(values.current, { iters: values.iters });
  if (current.issues.length) {
    console.error(`regress: ${values.current} has incomplete data:`);
    for (const i of current.issues) console.error(`  ${i.runId}: ${i.message}`);
    return 1;
  }
  if (values.update) {
    writeBaseline(values.baseline, current);
    console.log(`regress: wrote ${current.cells.length} cells from ${values.current} to ${values.baseline}`);
    return 0;
  }
  if (!exists(values.baseline)) {
    throw new UsageError(`--baseline: ${values.baseline} does not exist (create it with --update)`);
  }
  const baseline = readBaseline(values.baseline);
  const notes = checkSameProtocol(
    { label: values.baseline, protocol: baseline.protocol ?? null },
    { label: values.current, protocol: current.protocol ?? null },
    values["allow-protocol-change"],
  );
  for (const note of notes) console.error(`regress: ${note}`);
  if (baseline.configHash && current.configHash && baseline.configHash !== current.configHash) {
    const what =
      `config hash ${current.configHash} of ${values.current} differs from ${baseline.configHash} of ` +
      `${values.baseline}`;
    if (!values["allow-config-change"]) {
      throw new UsageError(
        `${what}: the sweeps are not comparable; pass --allow-config-change to compare anyway, or --update`,
      );
    }
    console.error(`regress: warning: ${what} (--allow-config-change)`);
  }
  const verdicts = compareToBaseline(baseline, current);
  const regressed = describeRegressions(verdicts);
  if (regressed.length === 0) {
    console.log(
      `regress: ok: no significant drop in ${verdicts.length} Pass@k cells (Holm, 5% family-wise) against ${values.baseline}`,
    );
    return 0;
  }
  console.error(
    `regress: ${regressed.length} of ${verdicts.length} Pass@k cells regressed against ${values.baseline}:`,
  );
  for (const line of regressed) console.error(`  ${line}`);
  return 1;
}
