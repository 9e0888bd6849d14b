// The reasoning-boundary table (Yue et al. 2025, arXiv 2504.13837; Zhu et al. 2025, arXiv 2506.01347): at the
// largest k, how many problems the reference policy solves that the method does not, the reverse, both, neither.
// Each unit (a training run: base × seed) compares the method's final step with its own step-0 policy, or ACE
// with its baseline's run of the same seed; the table gives the mean over units with a 95% t interval over units.
import { passAtK, tQuantile } from "../evaluators/mod.ts";
import type { PassKRow } from "./passk.ts";

/** One row of the boundary table. */
export type BoundaryRow = NonNullable<ReturnType<typeof boundaryRow>>;

/** The four cells of one unit, in problems. */
export interface BoundaryCounts {
  /** Solved by the reference only (the base, or ACE's baseline). */
  refOnly: number;
  /** Solved by the method only. */
  methodOnly: number;
  both: number;
  neither: number;
}

const KEYS = ["refOnly", "methodOnly", "both", "neither"] as const;

/**
 * The four counts of one unit at k, from each problem's (n, c) on both sides: with p = pass@k(n, c) the chance
 * the policy solves the problem within k samples, refOnly = Σ p_ref(1 − p_m), methodOnly = Σ (1 − p_ref)p_m,
 * both = Σ p_ref·p_m, neither = Σ (1 − p_ref)(1 − p_m) — expected counts with the two draws independent, exact
 * 0/1 counts when k = n on both sides. Only problems both sides evaluated count; k > n throws (passAtK).
 */
export function boundaryCounts(
  ref: ReadonlyMap<string, { n: number; c: number }>,
  method: ReadonlyMap<string, { n: number; c: number }>,
  k: number,
): BoundaryCounts & { problems: number } {
  const out = { refOnly: 0, methodOnly: 0, both: 0, neither: 0, problems: 0 };
  for (const [id, r] of ref) {
    const m = method.get(id);
    if (!m) continue;
    const pr = passAtK(r.n, r.c, k), pm = passAtK(m.n, m.c, k);
    out.refOnly += pr * (1 - pm);
    out.methodOnly += (1 - pr) * pm;
    out.both += pr * pm;
    out.neither += (1 - pr) * (1 - pm);
    out.problems++;
  }
  return out;
}

/** Mean and 95% t interval over units of each count (NaN bounds with one unit). */
function overUnits(units: readonly BoundaryCounts[]) {
  const stat = (key: typeof KEYS[number]) => {
    const xs = units.map((u) => u[key]);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    if (xs.length < 2) return { mean, lo: NaN, hi: NaN };
    const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1));
    const half = tQuantile(0.975, xs.length - 1) * sd / Math.sqrt(xs.length);
    return { mean, lo: mean - half, hi: mean + half };
  };
  const stats = KEYS.map(stat);
  const pick = (f: "mean" | "lo" | "hi") =>
    Object.fromEntries(KEYS.map((key, i) => [key, stats[i][f]])) as unknown as BoundaryCounts;
  return { mean: pick("mean"), lo: pick("lo"), hi: pick("hi") };
}

/** The key of `method`'s run of a row's dataset and unit (base model and seed). */
const unitKey = (method: string, r: PassKRow) => [method, r.dataset, `${r.base}/${r.seed}`].join("\u0000");

/**
 * One table row: `method` against `reference` (BEFORE_RL or a baseline) over its paired units, the mean and 95% t
 * interval (NaN with one unit) of each count; null when no unit pairs up.
 */
function boundaryRow(dataset: string, method: string, reference: string, pairs: [PassKRow, PassKRow][]) {
  if (pairs.length === 0) return null;
  const k = Math.min(...pairs.flat().map((r) => r.n)); // the largest k both sides' samples allow
  const units = pairs.map(([r, m]) => boundaryCounts(r.counts, m.counts, k));
  return {
    dataset,
    method,
    reference,
    k,
    problems: Math.min(...units.map((u) => u.problems)),
    units: units.length,
    ...overUnits(units),
  };
}

/**
 * The boundary rows of a report: every trained method against its own step-0 policy (`baseLabel`), then each
 * comparison's B (ACE) against A (its baseline), units paired by base and seed. `rows` are every run's pass@k
 * rows (all steps); only slice "all" counts, and one row per run and step is enough (counts are per problem).
 */
export function boundaryRows(
  rows: readonly PassKRow[],
  comparisons: readonly { dataset: string; a: string; b: string }[],
  baseLabel: string,
): BoundaryRow[] {
  // One row per run and step is enough: the counts are per problem, the same at every k.
  const perRun = Map.groupBy(
    rows.filter((r) => r.slice === "all"),
    (r) => `${unitKey(r.method, r)}\u0000${r.step}`,
  );
  const all = [...perRun.values()].map((list) => list[0]);
  const final = new Map<string, PassKRow>(); // method × dataset × unit → its last step's row
  for (const r of all) {
    if ((final.get(unitKey(r.method, r))?.step ?? -1) < r.step) final.set(unitKey(r.method, r), r);
  }
  const datasets = [...new Set(all.map((r) => r.dataset))].sort();
  const methods = [...new Set(all.map((r) => r.method))];
  const againstBase = datasets.flatMap((dataset) =>
    methods.map((method) => {
      const starts = all.filter((r) => r.method === method && r.dataset === dataset && r.step === 0);
      const pairs = starts.map((r): [PassKRow, PassKRow] => [r, final.get(unitKey(method, r))!]);
      return boundaryRow(dataset, method, baseLabel, pairs.filter(([, last]) => last.step > 0));
    })
  );
  const againstBaseline = comparisons.map((c) => {
    const sideA = [...final.values()].filter((r) => r.method === c.a && r.dataset === c.dataset);
    const pairs = sideA.flatMap((a): [PassKRow, PassKRow][] => {
      const b = final.get(unitKey(c.b, a));
      return b ? [[a, b]] : [];
    });
    return boundaryRow(c.dataset, c.b, c.a, pairs);
  });
  return [...againstBase, ...againstBaseline].filter((row) => row !== null);
}

/** boundary.csv's name of each count (its columns: the count, then its 95% t interval over units `_lo`, `_hi`). */
const CSV_NAMES = { refOnly: "reference_only", methodOnly: "method_only", both: "both", neither: "neither" };

/** A boundary.csv record of a row (counts in problems, rounded to 4 decimals; empty bounds with one unit). */
export function boundaryRecord(row: BoundaryRow): Record<string, unknown> {
  const r4 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : "");
  const { dataset, method, reference, k, problems, units } = row;
  const counts = KEYS.flatMap((key) => {
    const name = CSV_NAMES[key];
    return [[name, r4(row.mean[key])], [`${name}_lo`, r4(row.lo[key])], [`${name}_hi`, r4(row.hi[key])]];
  });
  return { dataset, method, reference, k, problems, units, ...Object.fromEntries(counts) };
}

/**
 * The summary section of one dataset: a Markdown table per kind (against the base, ACE against its baseline),
 * each cell "mean [lo, hi]" in problems. `oneBase` says the units share one base model, so the interval holds for
 * that base only. Empty when the dataset has no row.
 */
export function boundarySection(
  rows: readonly BoundaryRow[],
  dataset: string,
  baseLabel: string,
  oneBase: boolean,
): string[] {
  const mine = rows.filter((r) => r.dataset === dataset);
  if (mine.length === 0) return [];
  const f1 = (x: number) => x.toFixed(1);
  const cell = (row: BoundaryRow, key: typeof KEYS[number]) =>
    Number.isFinite(row.lo[key])
      ? `${f1(row.mean[key])} [${f1(Math.max(0, row.lo[key]))}, ${f1(row.hi[key])}]`
      : f1(row.mean[key]);
  const table = (title: string, refName: string, list: BoundaryRow[]) =>
    list.length === 0 ? [] : [
      title,
      "",
      `| method | vs | k | ${refName} only | method only | both | neither |`,
      "|---|---|---:|---:|---:|---:|---:|",
      ...list.map((r) =>
        `| ${r.method} | ${r.reference} | ${r.k} | ${KEYS.map((key) => cell(r, key)).join(" | ")} |`
      ),
      "",
    ];
  const units = Math.max(...mine.map((r) => r.units));
  const scope = oneBase ? "; one base model, so the interval holds for that base only" : "";
  return [
    `### ${dataset}: reasoning boundary at the largest k`,
    "",
    `Problems (of ${
      Math.max(...mine.map((r) => r.problems))
    }) solved within k samples by one policy, the other, ` +
    "both or neither, summed over problems from each side's pass@k p (reference only: p_ref·(1 − p_method), " +
    "and so on; exact 0/1 counts when k = n), per unit " +
    `(base × seed, ${units} unit(s)), mean over units with a 95% t interval over units${scope}; the problem set ` +
    "is fixed, so problem-to-problem variation is not in the interval. `boundary.csv` has the same numbers.",
    "",
    ...table(
      "Each method against its own policy before RL:",
      "base",
      mine.filter((r) => r.reference === baseLabel),
    ),
    ...table(
      "ACE against its baseline (same base and seed):",
      "baseline",
      mine.filter((r) => r.reference !== baseLabel),
    ),
  ];
}
