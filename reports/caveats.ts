// Caveats summary.md prints beside its tables, each from a known-truth audit of the intervals: cells near the
// ceiling on few problems (the problems' skew makes a t interval under-cover), differences over few bases (the base
// term's few degrees of freedom), the MDD's own uncertainty (its base term is estimated with B − 1 df), and how many
// intervals exclude 0 against the number chance alone gives.
import type { ComparisonView } from "./compare.ts";

/** Mark of a Pass@k cell near the ceiling on few problems. */
export const CEILING_MARK = "‡";
/** A cell is near the ceiling at mean Pass@k ≥ this on at most `CEILING_PROBLEMS` problems. */
const CEILING_PASS = 0.93;
const CEILING_PROBLEMS = 60;
/** Differences over at most this many bases get a warning (the base term has ≤ 3 df). */
const FEW_BASES_DIFF = 4;

/** What an interval generalises over: base models (seeds nested in them), or one base model's seeds only. */
export function crossedName(overBases: boolean, interval = "interval"): string {
  return overBases
    ? `95% crossed bases × problems ${interval}, seeds nested in bases`
    : `95% crossed seeds × problems ${interval}, for this base model only`;
}

/** Whether a cell's interval is flagged as near the ceiling: mean ≥ 0.93 on ≤ 60 problems. */
export function nearCeiling(c: { mean: number; problems: number }): boolean {
  return c.mean >= CEILING_PASS && c.problems <= CEILING_PROBLEMS;
}

/** The note under a Pass@k table with flagged cells. */
export const CEILING_NOTE =
  `${CEILING_MARK} Pass@k ≥ ${CEILING_PASS} on ≤ ${CEILING_PROBLEMS} problems: near the ` +
  "ceiling the problems' skewed distribution makes such a 95% interval cover only about 86–89% (known-truth " +
  "simulation); more problems restore it (160: about 94%).";

/** A warning under the difference table when a comparison spans 2–4 bases (empty otherwise). */
export function fewBasesWarning(comparisons: readonly ComparisonView[]): string[] {
  const bases = [...new Set(comparisons.flatMap((c) => c.cells.map((d) => d.bases)))]
    .filter((b) => b > 1 && b <= FEW_BASES_DIFF).sort((x, y) => x - y);
  if (bases.length === 0) return [];
  return [
    `Warning: these differences span ${bases.join("/")} base models, so the base term has ${
      bases.map((b) => b - 1).join("/")
    } degree(s) of freedom; a difference's 95% interval then under-covers (about 91–93% at 4 bases in ` +
    `simulation). Use more than ${FEW_BASES_DIFF} bases for a verdict about a difference.`,
    "",
  ];
}

/** An MDD for print: 3 decimals, never "0.000" (2 significant digits below 0.0005; exactly 0: nothing varies). */
export function mddText(x: number): string {
  if (!Number.isFinite(x)) return "–";
  if (x === 0) return "0 (no variance measured)";
  return x >= 0.0005 ? x.toFixed(3) : x.toPrecision(2);
}

/**
 * "[0.020, 0.041]": the MDD with the base term at the ends of its chi-square interval (">1" above 1: no difference
 * of any size is detectable there); "" when undefined (one run).
 */
export function mddBounds(d: { mddRange: { lo: number; hi: number } }): string {
  const r = d.mddRange;
  if (!Number.isFinite(r.lo)) return "";
  // A Pass@k difference lies in [−1, 1]: an MDD beyond 1 means nothing of any size is detectable.
  return `[${mddText(r.lo)}, ${r.hi > 1 ? ">1" : mddText(r.hi)}]`;
}

/** The MDD table's cell: the MDD and its range with the base term at its chi-square bounds. */
export function mddCell(d: { mdd: number; mddRange: { lo: number; hi: number } }): string {
  if (!Number.isFinite(d.mdd)) return "–";
  const range = mddBounds(d);
  return range ? `${mddText(d.mdd)} ${range}` : mddText(d.mdd);
}

/** The sentence under the MDD table saying what the bracketed range is. */
export function mddRangeNote(comparisons: readonly ComparisonView[]): string {
  const df = [...new Set(comparisons.flatMap((c) => c.cells.map((d) => d.mddRange.df)))].filter((x) => x > 0);
  if (df.length === 0) return "";
  return "In brackets: the MDD with the base term (σ²_base + σ²_seed(base)/S; one base: the seed term) at the " +
    `ends of its 95% chi-square interval (${
      df.join("/")
    } df), the other terms at their estimates: the MDD is ` +
    "itself an estimate, and this is how far its largest uncertain part can move it.";
}

/**
 * How many difference intervals exclude 0, against the number expected by chance if no difference were real
 * (5% of them); the ks of one comparison are correlated, so the count is a guide, not a test.
 */
export function chanceLine(comparisons: readonly ComparisonView[], what = "difference intervals"): string {
  const cells = comparisons.flatMap((c) => c.cells).filter((d) => Number.isFinite(d.lo));
  if (cells.length === 0) return "";
  const excluding = cells.filter((d) => d.lo > 0 || d.hi < 0).length;
  const expected = 0.05 * cells.length;
  return `${excluding} of ${cells.length} ${what} exclude 0; with no real difference anywhere about ${
    expected.toFixed(1)
  } would by chance (5% each; the ks of one comparison are correlated, so this count is a guide, not a test).`;
}
