// Regression check: Pass@k cells of a sweep against a committed baseline; a cell regresses when it falls below
// the baseline by more than the two intervals allow together. Cells are per seed with bootstrap intervals over
// problems: a CI sweep has few seeds, and a t-interval over two seeds is too wide to catch anything.
import { readJson, writeJson } from "../common/fs.ts";
import type { ReportOptions } from "./report.ts";
import { buildReport } from "./report.ts";
import { finalRows } from "./passk.ts";

/** One baseline cell: a method's final Pass@k on a dataset for one seed, with its 95% bootstrap interval. */
export interface BaselineCell {
  method: string;
  dataset: string;
  seed: number;
  k: number;
  mean: number;
  lo: number;
  hi: number;
}

/** The committed baseline file. */
export interface Baseline {
  version: 1;
  sweep: string | null;
  configHash: string | null;
  cells: BaselineCell[];
}

/** A cell's verdict. */
export interface RegressionCell {
  method: string;
  dataset: string;
  seed: number;
  k: number;
  baseline: number;
  current: number | null;
  /** The largest drop the intervals allow: √(half-width_baseline² + half-width_current²) (lower half-widths). */
  allowed: number;
  regressed: boolean;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Baseline cells of a sweep folder: every method × dataset × seed × k at the final step (slice "all"). */
export async function baselineOf(dir: string, options: ReportOptions = {}): Promise<Baseline> {
  const report = await buildReport(dir, options);
  const cells = finalRows(report.rows).filter((r) => r.slice === "all")
    .map((r) => ({
      method: r.method,
      dataset: r.dataset,
      seed: r.seed,
      k: r.k,
      mean: r6(r.passAtK),
      lo: r6(r.lo),
      hi: r6(r.hi),
    }))
    .sort((a, b) =>
      a.dataset.localeCompare(b.dataset) || a.method.localeCompare(b.method) || a.seed - b.seed || a.k - b.k
    );
  const sweep = report.data.sweep;
  return {
    version: 1,
    sweep: (sweep?.name as string | undefined) ?? null,
    configHash: (sweep?.configHash as string | undefined) ?? null,
    cells,
  };
}

/** Read and check a baseline file; the error names the file and the bad field. */
export function readBaseline(path: string): Baseline {
  const b = readJson<Baseline>(path);
  if (b.version !== 1 || !Array.isArray(b.cells)) {
    throw new Error(`${path}: not a version-1 baseline (version, cells)`);
  }
  b.cells.forEach((c, i) => {
    for (const f of ["mean", "lo", "hi", "k", "seed"] as const) {
      if (typeof c[f] !== "number") throw new Error(`${path}: cells[${i}].${f}: expected a number`);
    }
  });
  return b;
}

/** Write a baseline atomically (the explicit `--update` path). */
export function writeBaseline(path: string, baseline: Baseline): void {
  writeJson(path, baseline);
}

/** Compare every baseline cell with the current one; a missing current cell counts as a regression. */
export function compareToBaseline(baseline: Baseline, current: Baseline): RegressionCell[] {
  return baseline.cells.map((b) => {
    const c = current.cells.find((c) =>
      c.method === b.method && c.dataset === b.dataset && c.seed === b.seed && c.k === b.k
    );
    const where = { method: b.method, dataset: b.dataset, seed: b.seed, k: b.k };
    if (!c) return { ...where, baseline: b.mean, current: null, allowed: 0, regressed: true };
    const allowed = Math.hypot(b.mean - b.lo, c.mean - c.lo);
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

/** One line per regressed cell, e.g. "ace-grpo seed 1 synthetic Pass@4: 0.512 → 0.430 (drop 0.082 > allowed 0.031)". */
export function describeRegressions(cells: readonly RegressionCell[]): string[] {
  return cells.filter((c) => c.regressed).map((c) =>
    c.current === null
      ? `${c.method} seed ${c.seed} ${c.dataset} Pass@${c.k}: missing from the current sweep (baseline ${
        c.baseline.toFixed(3)
      })`
      : `${c.method} seed ${c.seed} ${c.dataset} Pass@${c.k}: ${c.baseline.toFixed(3)} → ${
        c.current.toFixed(3)
      } (drop ${(c.baseline - c.current).toFixed(3)} > allowed ${c.allowed.toFixed(3)})`
  );
}
