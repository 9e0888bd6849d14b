// Paired differences of Pass@k between two methods (ACE vs its baseline, or one method across two sweeps): the
// difference of each seed's per-problem pass@k (same seed, same problem), with the crossed seeds × problems
// interval of its mean and the minimum detectable difference of the design.
import {
  type CrossedComponents,
  crossedInterval,
  type CrossedTerms,
  crossedVariance,
  minDetectable,
} from "../evaluators/mod.ts";
import { type IntervalKind, type PassKRow, seedProblemMatrix } from "./passk.ts";

/** B − A at one k, paired by seed and problem. */
export interface DiffCell {
  k: number;
  mean: number;
  /** 95% crossed interval, clipped to [−1, 1] (NaN when not defined). */
  lo: number;
  hi: number;
  se: number;
  terms: CrossedTerms;
  components: CrossedComponents;
  interval: IntervalKind;
  identical: boolean;
  /** Minimum detectable difference (80% power, 5% two-sided) of this design, from the variance components. */
  mdd: number;
  /** The seeds both sides ran (the pairs) and the problems every one of them evaluated. */
  seeds: number;
  problems: number;
  /** Samples per problem (the smallest count). */
  n: number;
  /** Per-sample accuracy c/n of every seed × problem value (row-major), each side: for power projections over n. */
  accuracy: { a: Float64Array; b: Float64Array };
}

/** One comparison (e.g. ace-grpo − grpo on one dataset), every k. */
export interface Comparison {
  dataset: string;
  /** Labels of the two sides as printed, e.g. "grpo" and "ace-grpo". */
  a: string;
  b: string;
  cells: DiffCell[];
  /** Seeds only one side has (left out of the pairs). */
  unpaired: number[];
}

/** Per-sample accuracy of each value of a seeds × problems matrix (row-major), from the rows' counts. */
function accuracyMatrix(rows: readonly PassKRow[], ids: readonly string[]): Float64Array {
  const out = new Float64Array(rows.length * ids.length);
  rows.forEach((r, s) =>
    ids.forEach((id, p) => {
      const { n, c } = r.counts.get(id)!;
      out[s * ids.length + p] = c / n;
    })
  );
  return out;
}

/**
 * B − A for every k both sides have (rows: final-step rows of one dataset and slice): each seed's per-problem
 * difference over the seeds and problems both evaluated, and its crossed interval. Seeds only one side ran are
 * left out (and returned in `unpaired`).
 */
export function pairedDiff(
  rowsA: readonly PassKRow[],
  rowsB: readonly PassKRow[],
): { cells: DiffCell[]; unpaired: number[] } {
  const seedsA = new Set(rowsA.map((r) => r.seed)), seedsB = new Set(rowsB.map((r) => r.seed));
  const seeds = [...seedsA].filter((s) => seedsB.has(s)).sort((x, y) => x - y);
  const unpaired = [...new Set([...seedsA, ...seedsB])].filter((s) => !seeds.includes(s)).sort((x, y) =>
    x - y
  );
  const ks = [...new Set(rowsA.map((r) => r.k))].filter((k) => rowsB.some((r) => r.k === k)).sort((x, y) =>
    x - y
  );
  const cells: DiffCell[] = [];
  for (const k of ks) {
    const pick = (rows: readonly PassKRow[]) =>
      seeds.map((seed) => rows.find((r) => r.k === k && r.seed === seed)).filter((r) => r !== undefined);
    const a = pick(rowsA), b = pick(rowsB);
    if (a.length !== seeds.length || b.length !== seeds.length || seeds.length === 0) continue;
    const ma = seedProblemMatrix([...a, ...b]); // problems every row of both sides has
    const ids = ma.problems;
    if (ids.length === 0) continue;
    const S = seeds.length, P = ids.length;
    const d = new Float64Array(S * P);
    for (let s = 0; s < S; s++) {
      for (let p = 0; p < P; p++) d[s * P + p] = b[s].perProblem.get(ids[p])! - a[s].perProblem.get(ids[p])!;
    }
    const ci = crossedInterval(d, S, P);
    const design = { seeds: S, problems: P };
    cells.push({
      k,
      mean: ci.mean,
      lo: Math.max(-1, ci.lo),
      hi: Math.min(1, ci.hi),
      se: ci.se,
      terms: ci.terms,
      components: ci.components,
      interval: S === 1
        ? "one seed"
        : ci.components.msSeed === 0 && ci.components.msResidual === 0
        ? "shared samples"
        : "crossed",
      identical: ci.identical,
      mdd: S * P > 1 ? minDetectable(crossedVariance(ci.components, design)) : NaN,
      seeds: S,
      problems: P,
      n: Math.min(...a.map((r) => r.n), ...b.map((r) => r.n)),
      accuracy: { a: accuracyMatrix(a, ids), b: accuracyMatrix(b, ids) },
    });
  }
  return { cells, unpaired };
}

/** The baseline an ACE method is compared with: the method named like its preset minus "ace-", else the first with that preset. */
export function baselineOf(method: string, presets: ReadonlyMap<string, string>): string | null {
  const preset = presets.get(method) ?? "";
  if (!preset.startsWith("ace-")) return null;
  const base = preset.slice(4);
  if (presets.get(base) === base) return base;
  return [...presets].find(([, p]) => p === base)?.[0] ?? null;
}

/** B − A for each (a, b) pair of method names and every dataset with rows of both, in pair order. */
function comparePairs(
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

/** ACE-vs-baseline comparisons for every ACE method and dataset (rows: final-step rows, slice "all"). */
export function aceComparisons(
  rows: readonly PassKRow[],
  presets: ReadonlyMap<string, string>,
): Comparison[] {
  const pairs = [...presets.keys()].flatMap((method) => {
    const base = baselineOf(method, presets);
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

/** How the interval of a comparison was computed, for the sentence. */
function intervalName(c: Comparison): string {
  return c.cells.every((d) => d.interval === "one seed")
    ? "95% interval over problems, one seed"
    : "95% crossed seeds × problems interval";
}

/**
 * One sentence: where B − A is distinguishable from noise (its 95% crossed interval excludes 0) and in which
 * direction, and the smallest difference this design could detect where it is not.
 */
export function comparisonSentence(c: Comparison): string {
  const defined = c.cells.filter((d) => Number.isFinite(d.lo));
  const better = defined.filter((d) => d.lo > 0).map((d) => d.k);
  const worse = defined.filter((d) => d.hi < 0).map((d) => d.k);
  const noise = defined.filter((d) => d.lo <= 0 && d.hi >= 0);
  const head = `**${c.b} vs ${c.a} (${c.dataset})**:`;
  const how = intervalName(c);
  const mdds = noise.map((d) => d.mdd).filter((x) => Number.isFinite(x));
  const [least, most] = [Math.min(...mdds).toFixed(3), Math.max(...mdds).toFixed(3)];
  const undetectable = mdds.length
    ? ` This design detects (80% power) only differences of ${
      least === most ? least : `${least}–${most}`
    } or more there.`
    : "";
  if (defined.length === 0) return `${head} no interval could be computed (one seed and one problem).`;
  if (better.length === 0 && worse.length === 0) {
    return `${head} no difference is distinguishable from noise at any k (every ${how} contains 0).${undetectable}`;
  }
  const parts: string[] = [];
  if (better.length) parts.push(`higher at ${kList(better)}`);
  if (worse.length) parts.push(`lower at ${kList(worse)}`);
  const rest = noise.length ? `; indistinguishable from noise at ${kList(noise.map((d) => d.k))}` : "";
  return `${head} ${c.b} is ${parts.join(" and ")} (${how} excludes 0)${rest}.${
    noise.length ? undetectable : ""
  }`;
}
