// Pass@k per run, dataset, slice (all, subject, level) and step, with bootstrap intervals over problems; then
// aggregated over runs (seeds nested in base models, crossed with problems) with the nested interval. The
// statistics come from evaluators/.
import { hash32 } from "../common/prng.ts";
import {
  bootstrapCI,
  type CrossedTerms,
  type NestedComponents,
  type NestedInterval,
  nestedInterval,
  passAtK,
} from "../evaluators/mod.ts";
import type { EvalSample, RunData } from "./load.ts";
import { r6 } from "./format.ts";

/** One long-format row of passk.csv, plus the per-problem values behind it (for paired comparisons). */
export interface PassKRow {
  method: string;
  seed: number;
  /** The base model of the run (0 when the sweep has one). */
  base: number;
  dataset: string;
  /** "all", or "family=<name>" (evals only) / "subject=<name>" / "level=<n>" when the samples carry that field. */
  slice: string;
  step: number;
  k: number;
  passAtK: number;
  lo: number;
  hi: number;
  /** Samples per problem (the smallest count when problems differ). */
  n: number;
  problems: number;
  /** pass@k of each problem, keyed by problemId. */
  perProblem: Map<string, number>;
  /** Samples and correct samples of each problem (shared by the rows of every k of one run, slice and step). */
  counts: Map<string, { n: number; c: number }>;
}

/** How a cell's interval was computed. */
export type IntervalKind =
  /** Runs and problems crossed (bases × problems, seeds nested in bases; one base: seeds × problems). */
  | "crossed"
  /** One run: problems only (seed-to-seed variance not measurable). */
  | "one seed"
  /** Every seed has the same samples (e.g. the shared step-0 evaluation): problems only. */
  | "shared samples";

/** A mean over runs and problems with its nested 95% interval: a cell over runs, or a paired difference. */
export interface IntervalCell {
  k: number;
  mean: number;
  /** 95% crossed interval, clipped to the value's range (NaN when not defined: one seed and one problem). */
  lo: number;
  hi: number;
  se: number;
  terms: CrossedTerms;
  /** Base, seed-within-base, problem, base × problem and residual components (raw, NaN: not estimable). */
  nested: NestedComponents;
  /** "one base": the interval holds for that base model only; "bases": over base models. */
  scope: "bases" | "one base";
  interval: IntervalKind;
  /** Every per-problem value of every run is equal, so the interval has zero width. */
  identical: boolean;
  /** Runs (units: base × seed pairs; a difference: run pairs) behind it, and their distinct base models. */
  seeds: number;
  bases: number;
  /** Problems every run evaluated (the crossed design; the others are left out), samples per problem (fewest). */
  problems: number;
  n: number;
}

/** An IntervalCell of `nestedInterval`'s result over `rows`, the interval clipped to [min, 1]. */
export function intervalCell(
  k: number,
  ci: NestedInterval,
  interval: IntervalKind,
  min: number,
  rows: readonly PassKRow[],
): IntervalCell {
  const { mean, se, terms, nested, scope, identical } = ci;
  const [lo, hi] = [Math.max(min, ci.lo), Math.min(1, ci.hi)];
  const { units: seeds, bases, problems } = nested;
  const n = Math.min(...rows.map((r) => r.n));
  return { k, mean, lo, hi, se, terms, nested, scope, interval, identical, seeds, bases, problems, n };
}

/** Pass@k of one method at one k, aggregated over its seeds (interval clipped to [0, 1]). */
export interface AggregateCell extends IntervalCell {
  method: string;
  dataset: string;
  slice: string;
  step: number;
  /** The seeds behind the cell. */
  seedList: number[];
}

/** The seeds × problems matrix of per-problem values of some rows (one per seed), over the problems all share. */
export function seedProblemMatrix(
  rows: readonly PassKRow[],
): { values: Float64Array; seeds: number; problems: string[] } {
  const ids = rows.length === 0
    ? []
    : [...rows[0].perProblem.keys()].filter((id) => rows.every((r) => r.perProblem.has(id))).sort();
  const values = new Float64Array(rows.length * ids.length);
  rows.forEach((r, s) => ids.forEach((id, p) => values[s * ids.length + p] = r.perProblem.get(id)!));
  return { values, seeds: rows.length, problems: ids };
}

/** True when every row has the same per-problem values (the seeds share their samples). */
function sameSamples(rows: readonly PassKRow[]): boolean {
  return rows.length > 1 &&
    rows.every((r) => [...r.perProblem].every(([id, v]) => rows[0].perProblem.get(id) === v));
}

/** The engine name of a `deno task eval` run (a served model sampled over the API). */
const EXTERNAL_ENGINE = "external";

/**
 * The k values reported for n samples: 1, 2, 4, … up to n, plus any configured k ≤ n; with `only`, the configured
 * ks ≤ n alone (an eval reports the ks it was asked for).
 */
export function reportedKs(n: number, configured: readonly number[] = [], only = false): number[] {
  const ks = new Set<number>(configured.filter((k) => k <= n));
  if (only && ks.size > 0) return [...ks].sort((a, b) => a - b);
  for (let k = 1; k <= n; k *= 2) ks.add(k);
  return [...ks].sort((a, b) => a - b);
}

/**
 * The slices a sample belongs to: always "all", plus its subject and level when present, and for an eval its
 * task family (a sweep's tfjs samples carry one too, but its report stays per dataset).
 */
export function slicesOf(s: EvalSample, external: boolean): string[] {
  const out = ["all"];
  if (external && typeof s.meta?.family === "string") out.push(`family=${s.meta.family}`);
  if (typeof s.meta?.subject === "string") out.push(`subject=${s.meta.subject}`);
  if (s.meta?.level !== undefined && s.meta.level !== null) out.push(`level=${s.meta.level}`);
  return out;
}

/** Pass@k rows of one run: every dataset × slice × evaluated step × k, each with a bootstrap CI over problems. */
function runPassK(run: RunData, iters = 2000): PassKRow[] {
  const rows: PassKRow[] = [];
  const external = run.engine === EXTERNAL_ENGINE;
  const inSlices = run.samples.flatMap((s) => slicesOf(s, external).map((slice) => ({ s, slice })));
  const bySlice = Map.groupBy(inSlices, ({ s, slice }) => `${s.dataset}\u0000${slice}\u0000${s.step}`);
  for (const [key, list] of bySlice) {
    const samples = list.map((x) => x.s);
    const [dataset, slice, stepText] = key.split("\u0000");
    const counts = [...Map.groupBy(samples, (s) => s.problemId)].map(([id, list]) => ({
      id,
      n: list.length,
      c: list.filter((s) => s.correct).length,
    })).sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const n = Math.min(...counts.map((p) => p.n));
    const countMap = new Map(counts.map((p) => [p.id, { n: p.n, c: p.c }]));
    for (const k of reportedKs(n, run.ks, external)) {
      const values = counts.map((p) => passAtK(p.n, p.c, k));
      // Seeded by the run's design unit (base, seed), not its id: names are labels, and renaming a method must
      // not move its intervals.
      const seed = hash32(`${run.base}|${run.seed}|${key}|${k}`);
      const ci = bootstrapCI(values, { seed, iters });
      rows.push({
        method: run.method,
        seed: run.seed,
        base: run.base,
        dataset,
        slice,
        step: Number(stepText),
        k,
        passAtK: ci.mean,
        lo: ci.lo,
        hi: ci.hi,
        n,
        problems: counts.length,
        perProblem: new Map(counts.map((p, i) => [p.id, values[i]])),
        counts: countMap,
      });
    }
  }
  return rows.sort((a, b) =>
    a.dataset.localeCompare(b.dataset) || sliceOrder(a.slice, b.slice) || a.step - b.step || a.k - b.k
  );
}

/** "all" first, then task families, subjects, then levels in numeric order. */
export function sliceOrder(a: string, b: string): number {
  const rank = (s: string) =>
    s === "all" ? 0 : s.startsWith("family=") ? 1 : s.startsWith("subject=") ? 2 : 3;
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  const la = Number(a.split("=")[1]), lb = Number(b.split("=")[1]);
  return Number.isFinite(la) && Number.isFinite(lb) ? la - lb : a.localeCompare(b);
}

/** Pass@k rows of every run, in run order. */
export function passKRows(runs: readonly RunData[], iters = 2000): PassKRow[] {
  return runs.flatMap((r) => runPassK(r, iters));
}

/** A CSV record of a row (numbers rounded to 6 decimals so the file is stable across platforms). */
export function csvRecord(row: PassKRow): Record<string, unknown> {
  return {
    method: row.method,
    base: row.base,
    seed: row.seed,
    dataset: row.dataset,
    slice: row.slice,
    step: row.step,
    k: row.k,
    pass_at_k: r6(row.passAtK),
    ci_lo: r6(row.lo),
    ci_hi: r6(row.hi),
    n: row.n,
    problems: row.problems,
  };
}

/** The rows at each method's final step for a dataset (the step its final numbers come from). */
export function finalRows(rows: readonly PassKRow[]): PassKRow[] {
  const last = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.method}\u0000${r.dataset}`;
    last.set(key, Math.max(last.get(key) ?? -Infinity, r.step));
  }
  return rows.filter((r) => r.step === last.get(`${r.method}\u0000${r.dataset}`));
}

/**
 * Aggregate rows over runs: the mean over shared problems of the base means (each base's mean over its seeds)
 * with the nested 95% interval (evaluators/stats.ts `nestedInterval`: the crossed interval of the bases ×
 * problems matrix; one base: of the seeds × problems matrix, for that base only), clipped to [0, 1]. Rows of
 * one method × dataset × slice × step × k.
 */
export function aggregateSeeds(rows: readonly PassKRow[]): AggregateCell[] {
  const groups = Map.groupBy(rows, (r) => [r.method, r.dataset, r.slice, r.step, r.k].join("\u0000"));
  return [...groups.values()].map((unsorted) => {
    const list = [...unsorted].sort((a, b) => a.base - b.base || a.seed - b.seed);
    const first = list[0];
    const m = seedProblemMatrix(list);
    const ci = nestedInterval(m.values, list.map((r) => r.base), m.problems.length);
    const interval = list.length === 1 ? "one seed" : sameSamples(list) ? "shared samples" : "crossed";
    return {
      method: first.method,
      dataset: first.dataset,
      slice: first.slice,
      step: first.step,
      ...intervalCell(first.k, ci, interval, 0, list),
      seedList: list.map((r) => r.seed),
    };
  });
}
