// Paired differences of Pass@k between two methods (ACE vs its baseline, or one method across two sweeps):
// per-problem pass@k averaged over seeds, then a paired bootstrap over the shared problems.
import { hash32 } from "../common/prng.ts";
import { pairedBootstrap } from "../evaluators/mod.ts";
import { type PassKRow, seedMeanPerProblem } from "./passk.ts";

/** B − A at one k over the problems both evaluated. */
export interface DiffCell {
  k: number;
  mean: number;
  lo: number;
  hi: number;
  problems: number;
}

/** One comparison (e.g. ace-grpo − grpo on one dataset), every k. */
export interface Comparison {
  dataset: string;
  /** Labels of the two sides as printed, e.g. "grpo" and "ace-grpo". */
  a: string;
  b: string;
  cells: DiffCell[];
}

/** Paired bootstrap of B − A for every k both sides have (rows: final-step rows of one dataset and slice). */
export function pairedDiff(
  rowsA: readonly PassKRow[],
  rowsB: readonly PassKRow[],
  dataset: string,
  iters = 2000,
) {
  const ks = [...new Set(rowsA.map((r) => r.k))].filter((k) => rowsB.some((r) => r.k === k)).sort((x, y) =>
    x - y
  );
  const cells: DiffCell[] = [];
  for (const k of ks) {
    const a = seedMeanPerProblem(rowsA.filter((r) => r.k === k));
    const b = seedMeanPerProblem(rowsB.filter((r) => r.k === k));
    const ids = [...a.keys()].filter((id) => b.has(id));
    if (ids.length === 0) continue;
    const seed = hash32(`${rowsA[0].method}|${rowsB[0].method}|${dataset}|${k}`);
    const ci = pairedBootstrap(ids.map((id) => a.get(id)!), ids.map((id) => b.get(id)!), { seed, iters });
    cells.push({ k, mean: ci.mean, lo: ci.lo, hi: ci.hi, problems: ids.length });
  }
  return cells;
}

/** The baseline an ACE method is compared with: the method named like its preset minus "ace-", else the first with that preset. */
export function baselineOf(method: string, presets: ReadonlyMap<string, string>): string | null {
  const preset = presets.get(method) ?? "";
  if (!preset.startsWith("ace-")) return null;
  const base = preset.slice(4);
  if (presets.get(base) === base) return base;
  return [...presets].find(([, p]) => p === base)?.[0] ?? null;
}

/** ACE-vs-baseline comparisons for every ACE method and dataset (rows: final-step rows, slice "all"). */
export function aceComparisons(
  rows: readonly PassKRow[],
  presets: ReadonlyMap<string, string>,
  iters = 2000,
): Comparison[] {
  const out: Comparison[] = [];
  const datasets = [...new Set(rows.map((r) => r.dataset))];
  for (const method of presets.keys()) {
    const base = baselineOf(method, presets);
    if (!base) continue;
    for (const dataset of datasets) {
      const a = rows.filter((r) => r.method === base && r.dataset === dataset);
      const b = rows.filter((r) => r.method === method && r.dataset === dataset);
      if (a.length === 0 || b.length === 0) continue;
      out.push({ dataset, a: base, b: method, cells: pairedDiff(a, b, dataset, iters) });
    }
  }
  return out;
}

function kList(ks: number[]): string {
  return ks.map((k) => `Pass@${k}`).join(", ");
}

/** One sentence: where B − A is distinguishable from noise (95% interval excludes 0) and in which direction. */
export function comparisonSentence(c: Comparison): string {
  const better = c.cells.filter((d) => d.lo > 0).map((d) => d.k);
  const worse = c.cells.filter((d) => d.hi < 0).map((d) => d.k);
  const noise = c.cells.filter((d) => d.lo <= 0 && d.hi >= 0).map((d) => d.k);
  const head = `**${c.b} vs ${c.a} (${c.dataset})**:`;
  if (better.length === 0 && worse.length === 0) {
    return `${head} no difference is distinguishable from noise at any k (every 95% paired-bootstrap interval contains 0).`;
  }
  const parts: string[] = [];
  if (better.length) parts.push(`higher at ${kList(better)}`);
  if (worse.length) parts.push(`lower at ${kList(worse)}`);
  const rest = noise.length ? `; indistinguishable from noise at ${kList(noise)}` : "";
  return `${head} ${c.b} is ${parts.join(" and ")} (95% paired-bootstrap interval excludes 0)${rest}.`;
}
