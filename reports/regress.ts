// Regression check: each method's final Pass@k (mean over seeds and problems) against a committed baseline. A
// cell regresses when it falls below the baseline by more than the one-sided 95% crossed interval of the
// difference allows. Both sweeps evaluate the same problems, so the problem component cancels; what remains is
// the seed-to-seed noise of each sweep (its seed means' variance, which carries the seed × problem residual).
import { readJson, writeJson } from "../common/fs.ts";
import { tQuantile } from "../evaluators/mod.ts";
import { type DataIssue } from "./completeness.ts";
import type { ReportOptions } from "./report.ts";
import { buildReport } from "./report.ts";
import { type AggregateCell, aggregateSeeds, finalRows } from "./passk.ts";

/** One baseline cell: a method's final Pass@k on a dataset, mean over seeds, with its noise for a re-run. */
export interface BaselineCell {
  method: string;
  dataset: string;
  k: number;
  mean: number;
  /** 95% crossed interval (display). */
  lo: number;
  hi: number;
  /** Standard error of the mean for a re-run on the same problems (seed term only), and its degrees of freedom. */
  se: number;
  df: number;
  seeds: number;
  problems: number;
}

/** The committed baseline file. */
export interface Baseline {
  version: 2;
  sweep: string | null;
  configHash: string | null;
  cells: BaselineCell[];
}

/** A cell's verdict. */
export interface RegressionCell {
  method: string;
  dataset: string;
  k: number;
  baseline: number;
  current: number | null;
  /** The largest drop the noise allows: √(t²(.95, ν_b)·se_b² + t²(.95, ν_c)·se_c²). */
  allowed: number;
  regressed: boolean;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Noise of a cell for a re-run on the same problems: the seed term (one seed: the problem term, conservative). */
function rerunNoise(c: AggregateCell): { se: number; df: number } {
  const t = c.terms;
  return t.seedDf > 0
    ? { se: Math.sqrt(t.seedTerm), df: t.seedDf }
    : { se: Math.sqrt(t.problemTerm), df: Math.max(t.problemDf, 0) };
}

/** Baseline cells of a sweep folder (every method × dataset × k at the final step, slice "all") and its issues. */
export async function baselineOf(
  dir: string,
  options: ReportOptions = {},
): Promise<Baseline & { issues: DataIssue[] }> {
  const report = await buildReport(dir, options);
  const cells = aggregateSeeds(finalRows(report.rows).filter((r) => r.slice === "all"))
    .map((c) => {
      const noise = rerunNoise(c);
      return {
        method: c.method,
        dataset: c.dataset,
        k: c.k,
        mean: r6(c.mean),
        lo: r6(c.lo),
        hi: r6(c.hi),
        se: r6(noise.se),
        df: r6(noise.df),
        seeds: c.seeds,
        problems: c.problems,
      };
    })
    .sort((a, b) => a.dataset.localeCompare(b.dataset) || a.method.localeCompare(b.method) || a.k - b.k);
  const sweep = report.data.sweep;
  return {
    version: 2,
    sweep: (sweep?.name as string | undefined) ?? null,
    configHash: (sweep?.configHash as string | undefined) ?? null,
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
    for (const f of ["mean", "lo", "hi", "k", "se", "df", "seeds", "problems"] as const) {
      if (typeof c[f] !== "number") throw new Error(`${path}: cells[${i}].${f}: expected a number`);
    }
  });
  return b;
}

/** Write a baseline atomically (the explicit `--update` path). */
export function writeBaseline(path: string, baseline: Baseline): void {
  writeJson(path, {
    version: baseline.version,
    sweep: baseline.sweep,
    configHash: baseline.configHash,
    cells: baseline.cells,
  });
}

/** One-sided 95% multiplier of a noise term (0 df or 0 se contributes nothing). */
function oneSided(se: number, df: number): number {
  return se > 0 && df > 0 ? tQuantile(0.95, df) * se : 0;
}

/** Compare every baseline cell with the current one; a missing current cell counts as a regression. */
export function compareToBaseline(baseline: Baseline, current: Baseline): RegressionCell[] {
  return baseline.cells.map((b) => {
    const c = current.cells.find((c) => c.method === b.method && c.dataset === b.dataset && c.k === b.k);
    const where = { method: b.method, dataset: b.dataset, k: b.k };
    if (!c) return { ...where, baseline: b.mean, current: null, allowed: 0, regressed: true };
    const allowed = Math.hypot(oneSided(b.se, b.df), oneSided(c.se, c.df));
    return {
      ...where,
      baseline: b.mean,
      current: c.mean,
      allowed,
      // 1e-9 absorbs float noise in otherwise identical numbers.
      regressed: c.mean < b.mean - allowed - 1e-9,
    };
  });
}

/** One line per regressed cell, e.g. "ace-grpo synthetic Pass@4: 0.512 → 0.430 (drop 0.082 > allowed 0.031)". */
export function describeRegressions(cells: readonly RegressionCell[]): string[] {
  return cells.filter((c) => c.regressed).map((c) =>
    c.current === null
      ? `${c.method} ${c.dataset} Pass@${c.k}: missing from the current sweep (baseline ${
        c.baseline.toFixed(3)
      })`
      : `${c.method} ${c.dataset} Pass@${c.k}: ${c.baseline.toFixed(3)} → ${c.current.toFixed(3)} (drop ${
        (c.baseline - c.current).toFixed(3)
      } > allowed ${c.allowed.toFixed(3)})`
  );
}
