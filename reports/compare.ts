// Paired differences of Pass@k between two methods (ACE vs its baseline, or one method across two sweeps): the
// difference of each run's per-problem pass@k (same base, same seed, same problem), with the nested interval of
// its mean (bases × problems, seeds nested in bases; one base: seeds × problems, for that base only) and the
// minimum detectable difference of the design.
import type { MethodRecord } from "../common/protocol.ts";
import { mddInterval, nestedInterval } from "../evaluators/mod.ts";
import { type IntervalCell, intervalCell, type PassKRow, seedProblemMatrix } from "./passk.ts";

/** B − A at one k, paired by base, seed and problem (interval clipped to [−1, 1]). */
export interface DiffCell extends IntervalCell {
  /** Minimum detectable difference (80% power, 5% two-sided) of this design, from the variance components. */
  mdd: number;
  /**
   * The MDD with the base (unit) term at the ends of its 95% chi-square interval (`df` = B − 1; one base: the
   * seeds' S − 1), the other terms at their estimates (evaluators `mddInterval`); NaN with one run.
   */
  mddRange: { lo: number; hi: number; df: number };
  /** Per-sample accuracy c/n of every seed × problem value (row-major), each side: for power projections over n. */
  accuracy: { a: Float64Array; b: Float64Array };
  /** Samples behind each of those values (n per run and problem), each side. */
  samples: { a: Float64Array; b: Float64Array };
}

/** One comparison (e.g. ace-grpo − grpo on one dataset), every k. */
export interface Comparison {
  dataset: string;
  /** Labels of the two sides as printed, e.g. "grpo" and "ace-grpo". */
  a: string;
  b: string;
  cells: DiffCell[];
  /** Runs ("seed s", or "base b seed s" with several bases) only one side has (left out of the pairs). */
  unpaired: string[];
  /** k values some run of either side reports that the difference lacks (absent: none). */
  dropped?: ReturnType<typeof droppedKs>;
}

/** What a comparison's sentence and the summary's caveats read: a Comparison, or the summary model's view of one. */
export interface ComparisonView {
  dataset: string;
  a: string;
  b: string;
  cells: readonly Pick<DiffCell, "k" | "lo" | "hi" | "mdd" | "mddRange" | "bases" | "interval" | "scope">[];
  unpaired?: readonly string[];
}

/** Per-sample accuracy (or, `samples`, the sample count) of each value of a runs × problems matrix (row-major). */
function countMatrix(rows: readonly PassKRow[], ids: readonly string[], samples = false): Float64Array {
  const out = new Float64Array(rows.length * ids.length);
  rows.forEach((r, s) =>
    ids.forEach((id, p) => {
      const { n, c } = r.counts.get(id)!;
      out[s * ids.length + p] = samples ? n : c / n;
    })
  );
  return out;
}

/** A run's key for pairing: base and seed. */
const unitKey = (r: { base: number; seed: number }) => `${r.base}\u0000${r.seed}`;

/** "seed 3", or "base 1 seed 3" when the runs span several bases. */
function unitLabel(key: string, manyBases: boolean): string {
  const [base, seed] = key.split("\u0000");
  return manyBases ? `base ${base} seed ${seed}` : `seed ${seed}`;
}

/**
 * The ks some run reports but not every paired run has, and the runs that lack each (too few samples): "method
 * seed s (n = N)", with several bases "method base b seed s (n = N)".
 */
function droppedKs(
  rowsA: readonly PassKRow[],
  rowsB: readonly PassKRow[],
  kept: readonly number[],
  manyBases: boolean,
) {
  const all = [...rowsA, ...rowsB];
  const ks = [...new Set(all.map((r) => r.k))].filter((k) => !kept.includes(k)).sort((x, y) => x - y);
  const runs = new Map(all.map((r) => [`${r.method}\u0000${unitKey(r)}`, r]));
  return ks.map((k) => ({
    k,
    runs: [...runs].filter(([key]) => !all.some((r) => r.k === k && `${r.method}\u0000${unitKey(r)}` === key))
      .map(([, r]) => `${r.method} ${unitLabel(unitKey(r), manyBases)} (n = ${r.n})`),
  }));
}

/**
 * B − A for every k both sides have (rows: final-step rows of one dataset and slice): each run's per-problem
 * difference, paired by base, seed and problem, over the runs and problems both evaluated, with its nested
 * interval. Runs only one side has are left out (and named in `unpaired`); ks that some run lacks are named in
 * `dropped`.
 */
export function pairedDiff(rowsA: readonly PassKRow[], rowsB: readonly PassKRow[]) {
  const order = (x: string, y: string) => {
    const [bx, sx] = x.split("\u0000").map(Number), [by, sy] = y.split("\u0000").map(Number);
    return bx - by || sx - sy;
  };
  const unitsA = new Set(rowsA.map(unitKey)), unitsB = new Set(rowsB.map(unitKey));
  const units = [...unitsA].filter((u) => unitsB.has(u)).sort(order);
  const manyBases = new Set([...rowsA, ...rowsB].map((r) => r.base)).size > 1;
  const unpaired = [...new Set([...unitsA, ...unitsB])].filter((u) => !units.includes(u)).sort(order)
    .map((u) => unitLabel(u, manyBases));
  const ks = [...new Set(rowsA.map((r) => r.k))].filter((k) => rowsB.some((r) => r.k === k))
    .sort((x, y) => x - y);
  const cells: DiffCell[] = [];
  for (const k of ks) {
    const pick = (rows: readonly PassKRow[]) =>
      units.map((u) => rows.find((r) => r.k === k && unitKey(r) === u)).filter((r) => r !== undefined);
    const a = pick(rowsA), b = pick(rowsB);
    if (a.length !== units.length || b.length !== units.length || units.length === 0) continue;
    const ma = seedProblemMatrix([...a, ...b]); // problems every row of both sides has
    const ids = ma.problems;
    if (ids.length === 0) continue;
    const S = units.length, P = ids.length;
    const d = new Float64Array(S * P);
    for (let s = 0; s < S; s++) {
      for (let p = 0; p < P; p++) d[s * P + p] = b[s].perProblem.get(ids[p])! - a[s].perProblem.get(ids[p])!;
    }
    const ci = nestedInterval(d, a.map((r) => r.base), P);
    const mdd = mddInterval(ci);
    const shared = ci.components.msSeed === 0 && ci.components.msResidual === 0;
    cells.push({
      ...intervalCell(k, ci, S === 1 ? "one seed" : shared ? "shared samples" : "crossed", -1, [...a, ...b]),
      mdd: mdd.mdd,
      mddRange: { lo: mdd.lo, hi: mdd.hi, df: mdd.df },
      accuracy: { a: countMatrix(a, ids), b: countMatrix(b, ids) },
      samples: { a: countMatrix(a, ids, true), b: countMatrix(b, ids, true) },
    });
  }
  return { cells, unpaired, dropped: droppedKs(rowsA, rowsB, cells.map((c) => c.k), manyBases) };
}

/**
 * The baseline an ACE method is compared with: the recorded one (sweep.json `record.methods`, resolved from the
 * algorithm, never from names) when given; for a folder written before the record, the method named like its
 * preset minus "ace-", else the first with that preset.
 */
export function baselineOf(
  method: string,
  presets: ReadonlyMap<string, string>,
  recorded?: readonly MethodRecord[],
): string | null {
  if (recorded) return recorded.find((m) => m.name === method)?.baseline ?? null;
  const preset = presets.get(method) ?? "";
  if (!preset.startsWith("ace-")) return null;
  const base = preset.slice(4);
  if (presets.get(base) === base) return base;
  return [...presets].find(([, p]) => p === base)?.[0] ?? null;
}

/** B − A for each (a, b) pair of method names and every dataset with rows of both, in pair order. */
export function comparePairs(
  rows: readonly PassKRow[],
  pairs: readonly (readonly [string, string])[],
): Comparison[] {
  const out: Comparison[] = [];
  const datasets = [...new Set(rows.map((r) => r.dataset))];
  for (const [base, method] of pairs) {
    for (const dataset of datasets) {
      const a = rows.filter((r) => r.method === base && r.dataset === dataset);
      const b = rows.filter((r) => r.method === method && r.dataset === dataset);
      if (a.length === 0 || b.length === 0) continue;
      out.push({ dataset, a: base, b: method, ...pairedDiff(a, b) });
    }
  }
  return out;
}

/**
 * ACE-vs-baseline comparisons for every ACE method and dataset (rows: final-step rows, slice "all"); `recorded`:
 * the sweep record's methods, whose `baseline` fields decide the pairs.
 */
export function aceComparisons(
  rows: readonly PassKRow[],
  presets: ReadonlyMap<string, string>,
  recorded?: readonly MethodRecord[],
): Comparison[] {
  const pairs = [...presets.keys()].flatMap((method) => {
    const base = baselineOf(method, presets, recorded);
    return base ? [[base, method] as const] : [];
  });
  return comparePairs(rows, pairs);
}

/**
 * The comparisons a sweep asks for besides ACE vs baseline (`compare` in sweep.json: `method` against each of
 * `against`), for every dataset; pairs already in `existing` are skipped.
 */
export function requestedComparisons(
  rows: readonly PassKRow[],
  requested: readonly { method: string; against: readonly string[] }[],
  existing: readonly Comparison[],
): Comparison[] {
  const seen = new Set(existing.map((c) => `${c.a}\u0000${c.b}`));
  const pairs = requested.flatMap(({ method, against }) => against.map((base) => [base, method] as const))
    .filter(([base, method]) => !seen.has(`${base}\u0000${method}`));
  return comparePairs(rows, [...new Map(pairs.map((p) => [p.join("\u0000"), p])).values()]);
}

function kList(ks: readonly number[]): string {
  return ks.map((k) => `Pass@${k}`).join(", ");
}

/** How the interval of a comparison was computed, for the sentence (two evals: over problems only). */
function intervalName(c: ComparisonView, evals: boolean): string {
  if (evals) return "95% interval over problems";
  if (c.cells.every((d) => d.interval === "one seed")) return "95% interval over problems, one seed";
  return c.cells.every((d) => d.scope === "bases")
    ? "95% crossed bases × problems interval"
    : "95% crossed seeds × problems interval";
}

/**
 * " This holds for this base model only." when the comparison's runs share one base model; for two evals, what
 * it generalises over.
 */
function scopeNote(c: ComparisonView, evals: boolean): string {
  if (evals) return " It holds for problems like these, for these two models and settings only.";
  return c.cells.some((d) => d.scope === "one base") ? " This holds for this base model only." : "";
}

/**
 * One sentence: where B − A is distinguishable from noise (its 95% crossed interval excludes 0) and in which
 * direction, and the smallest difference this design could detect where it is not (where A and B are equal on
 * every problem, that instead). `evals`: B and A are two evaluations (`report --compare`), no seeds or bases.
 */
export function comparisonSentence(c: ComparisonView, evals = false): string {
  const defined = c.cells.filter((d) => Number.isFinite(d.lo));
  const better = defined.filter((d) => d.lo > 0).map((d) => d.k);
  const worse = defined.filter((d) => d.hi < 0).map((d) => d.k);
  const noise = defined.filter((d) => d.lo <= 0 && d.hi >= 0);
  const head = `**${c.b} vs ${c.a} (${c.dataset})**:`;
  const how = intervalName(c, evals);
  // An MDD of 0 inside the noise band: every per-problem difference is 0 (no spread to detect anything against).
  const equal = noise.filter((d) => d.mdd === 0).map((d) => d.k);
  const mdds = noise.map((d) => d.mdd).filter((x) => Number.isFinite(x) && x > 0);
  const [least, most] = [Math.min(...mdds).toFixed(3), Math.max(...mdds).toFixed(3)];
  const undetectable =
    (mdds.length
      ? ` This ${evals ? "comparison" : "design"} detects (80% power) only differences of ${
        least === most ? least : `${least}–${most}`
      } or more there.`
      : "") + (equal.length ? ` ${c.b} equals ${c.a} on every problem at ${kList(equal)}.` : "");
  if (defined.length === 0) return `${head} no interval could be computed (one seed and one problem).`;
  if (better.length === 0 && worse.length === 0) {
    return `${head} no difference is distinguishable from noise at any k (every ${how} contains 0).${undetectable}${
      scopeNote(c, evals)
    }`;
  }
  const parts: string[] = [];
  if (better.length) parts.push(`higher at ${kList(better)}`);
  if (worse.length) parts.push(`lower at ${kList(worse)}`);
  const rest = noise.length ? `; indistinguishable from noise at ${kList(noise.map((d) => d.k))}` : "";
  return `${head} ${c.b} is ${parts.join(" and ")} (${how} excludes 0)${rest}.${
    noise.length ? undetectable : ""
  }${scopeNote(c, evals)}`;
}
