// Pass@k per run, dataset, slice (all, subject, level) and step, with bootstrap intervals over problems; then
// aggregated over training seeds. The statistics themselves come from evaluators/.
import { hash32 } from "../common/prng.ts";
import { bootstrapCI, passAtK, seedAggregate } from "../evaluators/mod.ts";
import type { EvalSample, RunData } from "./load.ts";

/** One long-format row of passk.csv, plus the per-problem values behind it (for paired comparisons). */
export interface PassKRow {
  method: string;
  seed: number;
  dataset: string;
  /** "all", or "subject=<name>" / "level=<n>" when the samples carry that meta field. */
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
}

/** Pass@k of one method at one k, aggregated over its seeds. */
export interface AggregateCell {
  method: string;
  dataset: string;
  slice: string;
  step: number;
  k: number;
  mean: number;
  lo: number;
  hi: number;
  seeds: number;
  /** "seeds": Student-t over seeds; "problems": one seed, so the bootstrap over problems is shown instead. */
  interval: "seeds" | "problems";
  n: number;
  problems: number;
}

/** Columns of passk.csv, in order. */
export const PASSK_COLUMNS = [
  "method",
  "seed",
  "dataset",
  "slice",
  "step",
  "k",
  "pass_at_k",
  "ci_lo",
  "ci_hi",
  "n",
  "problems",
] as const;

/** The k values reported for n samples: 1, 2, 4, … up to n, plus any configured k ≤ n. */
export function reportedKs(n: number, configured: readonly number[] = []): number[] {
  const ks = new Set<number>(configured.filter((k) => k <= n));
  for (let k = 1; k <= n; k *= 2) ks.add(k);
  return [...ks].sort((a, b) => a - b);
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** The slices a sample belongs to: always "all", plus its subject and level when present. */
function slicesOf(s: EvalSample): string[] {
  const out = ["all"];
  if (typeof s.meta?.subject === "string") out.push(`subject=${s.meta.subject}`);
  if (s.meta?.level !== undefined && s.meta.level !== null) out.push(`level=${s.meta.level}`);
  return out;
}

/** Pass@k rows of one run: every dataset × slice × evaluated step × k, each with a bootstrap CI over problems. */
export function runPassK(run: RunData, iters = 2000): PassKRow[] {
  const rows: PassKRow[] = [];
  const bySlice = new Map<string, EvalSample[]>();
  for (const s of run.samples) {
    for (const slice of slicesOf(s)) {
      const key = `${s.dataset}\u0000${slice}\u0000${s.step}`;
      const list = bySlice.get(key);
      if (list) list.push(s);
      else bySlice.set(key, [s]);
    }
  }
  for (const [key, samples] of bySlice) {
    const [dataset, slice, stepText] = key.split("\u0000");
    const counts = [...groupBy(samples, (s) => s.problemId)].map(([id, list]) => ({
      id,
      n: list.length,
      c: list.filter((s) => s.correct).length,
    })).sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const n = Math.min(...counts.map((p) => p.n));
    for (const k of reportedKs(n, run.ks)) {
      const values = counts.map((p) => passAtK(p.n, p.c, k));
      const seed = hash32(`${run.runId}|${key}|${k}`);
      const ci = bootstrapCI(values, { seed, iters });
      rows.push({
        method: run.method,
        seed: run.seed,
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
      });
    }
  }
  return rows.sort((a, b) =>
    a.dataset.localeCompare(b.dataset) || sliceOrder(a.slice, b.slice) || a.step - b.step || a.k - b.k
  );
}

/** "all" first, then subjects, then levels in numeric order. */
export function sliceOrder(a: string, b: string): number {
  const rank = (s: string) => s === "all" ? 0 : s.startsWith("subject=") ? 1 : 2;
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
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    method: row.method,
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

/** Each method's last evaluated step per dataset (the step its final numbers come from). */
function finalSteps(rows: readonly PassKRow[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.method}\u0000${r.dataset}`;
    out.set(key, Math.max(out.get(key) ?? -Infinity, r.step));
  }
  return out;
}

/** The rows at each method's final step for a dataset. */
export function finalRows(rows: readonly PassKRow[]): PassKRow[] {
  const last = finalSteps(rows);
  return rows.filter((r) => r.step === last.get(`${r.method}\u0000${r.dataset}`));
}

/** Aggregate rows over seeds: mean with a Student-t 95% interval clipped to [0, 1] (one seed: its bootstrap interval). */
export function aggregateSeeds(rows: readonly PassKRow[]): AggregateCell[] {
  const groups = groupBy(rows, (r) => [r.method, r.dataset, r.slice, r.step, r.k].join("\u0000"));
  return [...groups.values()].map((list) => {
    const first = list[0];
    const one = list.length === 1;
    const agg = one
      ? { mean: first.passAtK, lo: first.lo, hi: first.hi }
      : seedAggregate(list.map((r) => r.passAtK));
    return {
      method: first.method,
      dataset: first.dataset,
      slice: first.slice,
      step: first.step,
      k: first.k,
      mean: agg.mean,
      lo: Math.max(0, agg.lo),
      hi: Math.min(1, agg.hi),
      seeds: list.length,
      interval: one ? "problems" : "seeds",
      n: Math.min(...list.map((r) => r.n)),
      problems: first.problems,
    };
  });
}

/** Per-problem pass@k averaged over a method's seeds (for paired comparisons); problems missing in a seed are dropped. */
export function seedMeanPerProblem(rows: readonly PassKRow[]): Map<string, number> {
  if (rows.length === 0) return new Map();
  const ids = [...rows[0].perProblem.keys()].filter((id) => rows.every((r) => r.perProblem.has(id)));
  return new Map(ids.map((id) => [id, rows.reduce((s, r) => s + r.perProblem.get(id)!, 0) / rows.length]));
}
