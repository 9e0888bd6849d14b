// ACE's dose-response: Pass@k against the penalty strength α, per confidence-shift variant (φ, aggregation, clip),
// from the same bases. The trend is the least-squares slope of Pass@k over α, estimated per run and problem as a
// linear contrast of the α points (Σ_α w_α·y_α with w_α = (α − ᾱ)/Σ(α − ᾱ)²), whose units × problems array then
// gets the nested interval (bases × problems, seeds nested in bases) and MDD like any paired difference. The slope
// of ΔPass@k = Pass@k(α) − Pass@k(baseline) is the same number, since the baseline does not move with α. α = 0 is
// the baseline's own runs when the sweep has no α = 0 point: ACE with α = 0 multiplies every advantage by
// 1 + 0·φ(c) = 1, so it is the baseline exactly.
import type { MethodRecord } from "../common/protocol.ts";
import { toCsv } from "../common/csv.ts";
import { mddInterval, nestedInterval } from "../evaluators/mod.ts";
import { baselineOf, type DiffCell, pairedDiff } from "./compare.ts";
import { crossedName, mddText } from "./caveats.ts";
import type { RunData } from "./load.ts";
import { finalRows, type PassKRow } from "./passk.ts";
import { csv6, withInterval } from "./format.ts";

/** Least-squares slope weights of points xs (Σw = 0, Σw·x = 1); needs two distinct xs. */
export function slopeWeights(xs: readonly number[]): number[] {
  const m = xs.reduce((a, x) => a + x, 0) / xs.length;
  const sxx = xs.reduce((a, x) => a + (x - m) ** 2, 0);
  if (!(sxx > 0)) throw new RangeError("slopeWeights: need two distinct α values");
  return xs.map((x) => (x - m) / sxx);
}

/**
 * The slope over `xs` of matrices `values[i]` (units × problems, row-major, the same units and problems in each; row
 * u of base `baseOf[u]`): each unit's and problem's least-squares slope, then the nested interval of their mean
 * and its MDD (80% power, 5% two-sided). Throws on a size mismatch.
 */
export function slopeInterval(
  values: readonly ArrayLike<number>[],
  xs: readonly number[],
  baseOf: readonly number[],
  problems: number,
) {
  if (values.length !== xs.length) {
    throw new RangeError(`slopeInterval: ${values.length} arrays, ${xs.length} xs`);
  }
  const w = slopeWeights(xs), n = baseOf.length * problems;
  const contrast = new Float64Array(n);
  values.forEach((v, i) => {
    if (v.length !== n) throw new RangeError(`slopeInterval: array ${i} has ${v.length} values, not ${n}`);
    for (let j = 0; j < n; j++) contrast[j] += w[i] * v[j];
  });
  const ci = nestedInterval(contrast, baseOf, problems);
  return {
    mean: ci.mean,
    lo: ci.lo,
    hi: ci.hi,
    mdd: mddInterval(ci).mdd,
    units: baseOf.length,
    bases: ci.nested.bases,
    problems,
    scope: ci.scope,
  };
}

/** One confidence-shift variant of one ACE preset: its methods by α, and the baseline standing in for α = 0. */
export interface DoseVariant {
  /** e.g. "ace-grpo (softplus, sum)". */
  label: string;
  baseline: string;
  /** Methods by α, ascending; α = 0 is the baseline when the sweep has no α = 0 method of this variant. */
  points: { alpha: number; method: string }[];
}

/**
 * The dose-response variants of a sweep: ACE methods (ace enabled) grouped by preset, φ, aggregation, clip and the
 * all-wrong ablation, each with its baseline; only variants with at least 3 α points (the baseline counted as
 * α = 0) are kept. `recorded`: the sweep record's methods (their `baseline` fields), when the folder has one.
 */
export function doseVariants(runs: readonly RunData[], recorded?: readonly MethodRecord[]): DoseVariant[] {
  const presets = new Map(runs.map((r) => [r.method, r.preset]));
  const groups = new Map<string, DoseVariant>();
  for (const r of runs) {
    const ace = r.ace;
    if (!ace?.enabled) continue;
    const baseline = baselineOf(r.method, presets, recorded);
    if (!baseline) continue;
    const extras = [ace.clip !== null ? `clip ${ace.clip}` : "", ace.allWrong ? "all-wrong" : ""]
      .filter((x) => x);
    const label = `${r.preset} (${[ace.phi, ace.aggregation, ...extras].join(", ")})`;
    const variant = groups.get(label) ?? { label, baseline, points: [] };
    if (!variant.points.some((p) => p.method === r.method)) {
      variant.points.push({ alpha: ace.alpha, method: r.method });
    }
    groups.set(label, variant);
  }
  const out: DoseVariant[] = [];
  for (const v of groups.values()) {
    const alphas = new Set(v.points.map((p) => p.alpha));
    if (alphas.size !== v.points.length) continue; // two methods at one α: not a dose series
    if (!alphas.has(0)) v.points.push({ alpha: 0, method: v.baseline });
    v.points.sort((a, b) => a.alpha - b.alpha);
    if (v.points.length >= 3) out.push(v);
  }
  return out;
}

/** One variant's dose-response at one k on one dataset. */
export interface DoseResult {
  variant: DoseVariant;
  dataset: string;
  k: number;
  /** Pass@k(α) − Pass@k(baseline) at each α > 0 point (paired by base, seed and problem). */
  deltas: { alpha: number; cell: DiffCell }[];
  slope: ReturnType<typeof slopeInterval>;
}

/** The matrix of one method's final rows at k over the given units and problems (row-major). */
function matrix(rows: readonly PassKRow[], units: readonly string[], ids: readonly string[]): Float64Array {
  const out = new Float64Array(units.length * ids.length);
  units.forEach((u, i) => {
    const r = rows.find((x) => `${x.base}/${x.seed}` === u)!;
    ids.forEach((id, p) => (out[i * ids.length + p] = r.perProblem.get(id)!));
  });
  return out;
}

/**
 * The dose-response of every variant at k = 1 and at the largest k all its points report, per dataset (rows: all
 * pass@k rows; the final step of each method is used). Units and problems are those every point shares.
 */
export function doseResults(rows: readonly PassKRow[], variants: readonly DoseVariant[]): DoseResult[] {
  const final = finalRows(rows.filter((r) => r.slice === "all"));
  const out: DoseResult[] = [];
  for (const variant of variants) {
    for (const dataset of [...new Set(final.map((r) => r.dataset))].sort()) {
      const of = (m: string) => final.filter((r) => r.method === m && r.dataset === dataset);
      if (variant.points.some((p) => of(p.method).length === 0)) continue;
      const ksOf = (m: string) => new Set(of(m).map((r) => r.k));
      const shared = [...ksOf(variant.baseline)].filter((k) =>
        variant.points.every((p) => ksOf(p.method).has(k))
      );
      if (shared.length === 0) continue;
      for (const k of [...new Set([1, Math.max(...shared)])].filter((k) => shared.includes(k))) {
        const at = (m: string) => of(m).filter((r) => r.k === k);
        const unitSets = variant.points.map((p) => new Set(at(p.method).map((r) => `${r.base}/${r.seed}`)));
        const units = [...unitSets[0]].filter((u) => unitSets.every((s) => s.has(u))).sort((a, b) => {
          const [ba, sa] = a.split("/").map(Number), [bb, sb] = b.split("/").map(Number);
          return ba - bb || sa - sb;
        });
        const all = variant.points.flatMap((p) => at(p.method));
        const ids = [...all[0].perProblem.keys()].filter((id) => all.every((r) => r.perProblem.has(id)))
          .sort();
        if (units.length === 0 || ids.length === 0 || units.length * ids.length < 2) continue;
        const slope = slopeInterval(
          variant.points.map((p) => matrix(at(p.method), units, ids)),
          variant.points.map((p) => p.alpha),
          units.map((u) => Number(u.split("/")[0])),
          ids.length,
        );
        const deltas = variant.points.filter((p) => p.method !== variant.baseline).flatMap((p) => {
          const cell = pairedDiff(at(variant.baseline), at(p.method)).cells.find((c) => c.k === k);
          return cell ? [{ alpha: p.alpha, cell }] : [];
        });
        out.push({ variant, dataset, k, deltas, slope });
      }
    }
  }
  return out;
}

/** The verdict on a slope: distinguishable from 0 (which sign), or not, with the MDD. */
function slopeVerdict(s: DoseResult["slope"]): string {
  if (!Number.isFinite(s.lo)) return "no interval";
  if (s.lo > 0) return "rises with α (interval excludes 0)";
  if (s.hi < 0) return "falls with α (interval excludes 0)";
  return `no trend distinguishable from noise (MDD ${mddText(s.mdd)} per unit α)`;
}

/**
 * summary.md's dose-response section for one dataset: per variant and k, ΔPass@k against the baseline at each α
 * and the slope per unit α with its interval, MDD and verdict. Empty without a dose series.
 */
export function doseSection(results: readonly DoseResult[], dataset: string): string[] {
  const mine = results.filter((r) => r.dataset === dataset);
  if (mine.length === 0) return [];
  const alphas = [...new Set(mine.flatMap((r) => r.deltas.map((d) => d.alpha)))].sort((a, b) => a - b);
  const scope = crossedName(mine.every((r) => r.slope.scope === "bases"), "intervals");
  const usesBaseline = mine.some((r) =>
    r.variant.points.some((p) => p.alpha === 0 && p.method === r.variant.baseline)
  );
  return [
    `### ${dataset}: ACE dose-response (Pass@k against α)`,
    "",
    "ΔPass@k = Pass@k(α) − Pass@k(baseline), paired by base, seed and problem, and the least-squares slope of " +
    "Pass@k over α (per unit α), estimated per run and problem and then over bases and problems like any " +
    `paired difference (${scope}).` +
    (usesBaseline
      ? " α = 0 is the baseline's own runs: ACE with α = 0 multiplies every advantage by 1 + 0·φ(c) = 1."
      : "") +
    " A slope whose interval contains 0 says the design cannot tell a trend from noise; its MDD says how steep a " +
    "trend it would have detected. `plots/dose_<dataset>.svg` draws the same numbers.",
    "",
    `| variant | k | ${alphas.map((a) => `Δ at α = ${a}`).join(" | ")} | slope per unit α | MDD | verdict |`,
    `|---|---:|${alphas.map(() => "---:").join("|")}|---|---:|---|`,
    ...mine.map((r) =>
      `| ${r.variant.label} vs ${r.variant.baseline} | ${r.k} | ${
        alphas.map((a) => {
          const d = r.deltas.find((x) => x.alpha === a);
          return d ? withInterval(d.cell) : "–";
        }).join(" | ")
      } | ${withInterval(r.slope)} | ${mddText(r.slope.mdd)} | ${slopeVerdict(r.slope)} |`
    ),
    "",
  ];
}

/** dose.csv: per variant, dataset and k, ΔPass@k against the baseline at each α and the slope (Pass@k units). */
export function doseCsv(results: readonly DoseResult[]): string {
  const rows = results.flatMap((r) => {
    const row = (
      alpha: number | "",
      kind: string,
      c: { mean: number; lo: number; hi: number; mdd: number },
    ) => ({
      variant: r.variant.label,
      baseline: r.variant.baseline,
      dataset: r.dataset,
      k: r.k,
      alpha,
      kind,
      value: csv6(c.mean),
      lo: csv6(c.lo),
      hi: csv6(c.hi),
      mdd: csv6(c.mdd),
    });
    return [...r.deltas.map((d) => row(d.alpha, "delta", d.cell)), row("", "slope", r.slope)];
  });
  return toCsv(rows, Object.keys(rows[0] ?? {})); // written only with a dose series
}
