// `deno task power SWEEP_DIR`: the variance components of each ACE-minus-baseline difference of a finished sweep
// (between bases, between seeds of a base, between problems, base × problem, the residual and its within-problem
// sampling part), the minimum detectable difference (MDD, 80% power, 5% two-sided) of the sweep's own design, and
// its projection to another design (--bases/--seeds-per-base/--problems/--n) or the design a target MDD needs.
import {
  bool,
  flagLines,
  type FlagTable,
  type FlagValues,
  int,
  list,
  num,
  parseTable,
  UsageError,
} from "../common/args.ts";
import { loadSchema, validate } from "../common/config.ts";
import {
  minDetectable,
  type NestedComponents,
  nestedTerms,
  passAtKVariance,
  passAtKVarianceUnbiased,
} from "../evaluators/mod.ts";
import type { Comparison, DiffCell } from "./compare.ts";
import { mddBounds, mddText } from "./caveats.ts";
import type { RunData } from "./load.ts";
import { buildReport } from "./report.ts";
import { reportJson } from "./summary_model.ts";
import { e2 } from "./format.ts";

/** A sweep design: base models, training seeds per base, held-out problems, samples per problem. */
export interface Design {
  bases: number;
  seedsPerBase: number;
  problems: number;
  n: number;
}

/**
 * Within-problem sampling variance of one pass@k value at n samples, estimated from c correct of n0: unbiased
 * (`passAtKVarianceUnbiased`) when n0 ≥ 2k; otherwise no unbiased estimate exists and the plug-in at p̂ = c/n0
 * (times n0/(n0 − 1)) is used, flagged `plugIn`.
 */
function valueWithin(n0: number, c: number, k: number, n: number): { v: number; plugIn: boolean } {
  if (n0 >= 2 * k) return { v: passAtKVarianceUnbiased(n0, c, k, n), plugIn: false };
  return { v: passAtKVariance(n, c / n0, k) * (n0 > 1 ? n0 / (n0 - 1) : 1), plugIn: true };
}

/**
 * Mean within-problem sampling variance of one paired difference value at n samples per problem (k ≤ n): the sum
 * of both sides' variances, each estimated from that run's own c of n0 samples without bias when n0 ≥ 2k
 * (`plugIn` false), else by the plug-in (`plugIn` true: biased, by ×0.4–×9 at realistic p).
 */
export function withinEstimate(cell: DiffCell, n: number): { variance: number; plugIn: boolean } {
  const cache = new Map<string, { v: number; plugIn: boolean }>();
  const at = (n0: number, acc: number) => {
    const c = Math.round(acc * n0), key = `${n0}/${c}`;
    let out = cache.get(key);
    if (out === undefined) cache.set(key, out = valueWithin(n0, c, cell.k, n));
    return out;
  };
  let sum = 0, plugIn = false;
  const { a, b } = cell.accuracy;
  for (let i = 0; i < a.length; i++) {
    for (const x of [at(cell.samples.a[i], a[i]), at(cell.samples.b[i], b[i])]) {
      sum += x.v;
      plugIn ||= x.plugIn;
    }
  }
  return { variance: sum / a.length, plugIn };
}

/**
 * Correlation of paired samples within a problem: for each pair of runs (same base and seed) of methods `a` and
 * `b` at their final steps on `dataset`, sample i of one run is paired with sample i of the other (common random
 * numbers draw both from one stream), and the pooled within-problem covariance of their 0/1 outcomes is divided
 * by the pooled within-problem standard deviations. NaN when no pair has within-problem variation on both sides.
 */
export function pairedSampleCorrelation(runs: readonly RunData[], a: string, b: string, dataset: string) {
  const last = (r: RunData) => Math.max(...r.samples.filter((s) => s.dataset === dataset).map((s) => s.step));
  const outcomes = (r: RunData) => {
    const step = last(r), out = new Map<string, Map<number, number>>();
    for (const s of r.samples) {
      if (s.dataset !== dataset || s.step !== step) continue;
      if (!out.has(s.problemId)) out.set(s.problemId, new Map());
      out.get(s.problemId)!.set(s.sample, s.correct ? 1 : 0);
    }
    return out;
  };
  let sxy = 0, sxx = 0, syy = 0;
  for (const ra of runs.filter((r) => r.method === a)) {
    const rb = runs.find((r) => r.method === b && r.base === ra.base && r.seed === ra.seed);
    if (!rb) continue;
    const oa = outcomes(ra), ob = outcomes(rb);
    for (const [problem, xa] of oa) {
      const xb = ob.get(problem);
      if (!xb) continue;
      const ids = [...xa.keys()].filter((i) => xb.has(i));
      if (ids.length < 2) continue;
      const ma = ids.reduce((acc, i) => acc + xa.get(i)!, 0) / ids.length;
      const mb = ids.reduce((acc, i) => acc + xb.get(i)!, 0) / ids.length;
      for (const i of ids) {
        const da = xa.get(i)! - ma, db = xb.get(i)! - mb;
        sxy += da * db;
        sxx += da * da;
        syy += db * db;
      }
    }
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : NaN;
}

/** The sweep's own design of a difference cell. */
export function ownDesign(cell: DiffCell): Design {
  return {
    bases: cell.bases,
    seedsPerBase: cell.nested.seedsPerBase,
    problems: cell.problems,
    n: cell.n,
  };
}

/**
 * The components a design at `n` samples would have: the within-problem part W of the residual is rescaled from
 * the measured n to `n` (residual − W(n₀) + W(n)). With one seed per base the seed × problem part cannot be told
 * from base × problem and is kept there (conservative for more seeds per base); with one run the whole
 * per-problem variance is the problem component. At the measured n (and seeds per base) nothing changes.
 */
export function projectedComponents(cell: DiffCell, design: Design): NestedComponents {
  const c = cell.nested;
  const same = design.n === cell.n && design.seedsPerBase === c.seedsPerBase;
  if (same) return c;
  const w0 = withinEstimate(cell, cell.n).variance, w1 = withinEstimate(cell, design.n).variance;
  if (c.units === 1) return { ...c, problem: c.problem - w0 + w1 };
  if (c.seedsKnown) return { ...c, residual: c.residual - w0 + w1 };
  return { ...c, seed: 0, baseProblem: c.baseProblem - w0, residual: w1, seedsKnown: true };
}

/**
 * Whether a projected term came out negative before its truncation at 0 (the base-mean sum σ²_base +
 * σ²_seed/S, the residual sum σ²_base×problem + σ²_residual/S, or σ²_problem), so that MDD is a lower bound.
 */
function projectionTruncated(cell: DiffCell, design: Design): boolean {
  if (cell.k > design.n) return false;
  const x = projectedComponents(cell, design);
  const known = (v: number) => (Number.isNaN(v) ? 0 : v);
  const per = x.basesKnown ? design.seedsPerBase : 1;
  const G = x.basesKnown ? known(x.base) : 0, GP = x.basesKnown ? known(x.baseProblem) : 0;
  return [G + known(x.seed) / per, GP + known(x.residual) / per, known(x.problem)].some((v) => v < -1e-12);
}

/**
 * MDD of a difference for another design (`nestedTerms` of the projected components). At the measured design this
 * is exactly the summary's figure. NaN when k > design.n.
 */
export function projectMdd(cell: DiffCell, design: Design): number {
  if (cell.k > design.n) return NaN;
  return minDetectable(nestedTerms(projectedComponents(cell, design), design));
}

/** The fewest problems (≤ 10⁷) reaching `target` with the design's bases, seeds and n, or null when none does. */
export function problemsNeeded(cell: DiffCell, target: number, design: Omit<Design, "problems">) {
  const mdd = (problems: number) => projectMdd(cell, { ...design, problems });
  let hi = 2;
  while (hi <= 1e7 && !(mdd(hi) <= target)) hi *= 2;
  if (hi > 1e7) return null;
  let lo = Math.max(2, hi / 2);
  if (mdd(lo) <= target) return lo;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mdd(mid) <= target) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** A component as `e2` prints it, a negative one (counted as 0) with a mark. */
const componentText = (x: number) => e2(x) + (x <= -1e-12 ? " (→ 0)" : "");

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "–");

function designText(d: Design, x?: NestedComponents): string {
  const per = Number.isInteger(d.seedsPerBase) ? d.seedsPerBase : d.seedsPerBase.toFixed(1);
  const base = x && !x.basesKnown ? `1 base × ${x.units} seeds` : `${d.bases} bases × ${per} seeds`;
  return `${base} × ${d.problems} problems × n ${d.n}`;
}

/** Notes under a comparison's components table: what is unknown, confounded, negative or plug-in. */
function notes(e: PowerComparison, negative: boolean, plugIn: number[]): string[] {
  const out: string[] = [], rho = e.pairedSampleCorrelation;
  if (!e.basesKnown) {
    out.push(
      "One base model: σ²_base and σ²_base×problem are not measured, so every figure holds for this base model " +
        `only${e.design.bases > 1 ? " and projections to more bases are lower bounds" : ""}.`,
    );
  } else if (!e.seedsKnown) {
    out.push(
      "One seed per base: σ²_base includes the seed variance and σ²_base×problem the seed × problem part of the " +
        "residual; projections keep them at the base level (conservative for more seeds per base).",
    );
  }
  if (e.basesKnown && e.ownDesign.bases <= 4) {
    out.push(
      `Warning: ${e.ownDesign.bases} bases leave ${
        e.ownDesign.bases - 1
      } degree(s) of freedom for the base term; a difference's ` +
        "interval under-covers there (91–93% at 4 bases in simulation); use more than 4.",
    );
  }
  if (negative) {
    out.push(
      "A negative component estimate is shown as estimated; every MDD sums the base-mean term σ²_base + " +
        "σ²_seed(base)/S and the residual term σ²_base×problem + σ²_residual/S from the raw estimates and counts a " +
        "negative sum as 0, as the interval does.",
    );
  }
  out.push(
    "The within-problem part sums both sides' sampling variances as if their samples were independent. Paired " +
      "runs share their random numbers, so their samples are correlated " +
      (Number.isFinite(rho)
        ? `(measured here: ρ = ${rho.toFixed(2)} between paired samples of one problem, pooled)`
        : "(not measurable here: no paired samples vary on both sides)") +
      ", and the paired difference's own within-problem variance is smaller by about 2ρ√(W_a·W_b): the column " +
      "overstates it, and a projection to another n moves the residual by the independent-sides amount.",
  );
  if (plugIn.length) {
    out.push(
      `At k = ${plugIn.join(", ")} some run has n < 2k samples, where no unbiased within-problem variance ` +
        "exists: the plug-in at p̂ = c/n is used there (biased).",
    );
  }
  return out.length ? [...out.map((l) => `- ${l}`), ""] : [];
}

/** The JSON Schema of `power --json`. */
export const POWER_SCHEMA = new URL("./schemas/power.schema.json", import.meta.url);

/** `power --json`'s text, checked against its schema (non-finite numbers as null). */
function powerJson(model: PowerModel): string {
  const text = reportJson(model);
  validate(loadSchema(POWER_SCHEMA), JSON.parse(text), "power --json");
  return text;
}

/** The flags of `deno task power`, declared once for parsing, --help and validation. */
export const FLAGS = {
  bases: int("base models of the design to project", { value: "B", min: 1, max: 1e6 }),
  "seeds-per-base": int("seeds per base of it", { value: "S", min: 1, max: 1e6 }),
  problems: int("problems of it", { value: "P", min: 2, max: 1e9 }),
  n: int("samples per problem of it", { min: 1, max: 1e6 }),
  target: num("instead: for each base count, the problems needed to reach MDD at every k ≤ n", {
    value: "MDD",
    min: 1e-6,
    max: 2,
  }),
  "try-bases": list("base counts tried with --target", { default: [2, 4, 8, 12, 16, 24, 32] }),
  json: bool("print the same figures as JSON (schema: reports/schemas/power.schema.json)"),
} as const satisfies FlagTable;

/** Usage text for `deno task power`. */
export const usage =
  `usage: deno task power SWEEP_DIR [--bases B --seeds-per-base S --problems P --n N] [--target MDD [--try-bases LIST]]

Estimates, for every ACE-minus-baseline comparison and k of a finished sweep, the variance components of the
paired difference (between base models, between seeds of a base, between problems, base × problem, and the
residual with its within-problem sampling part) and prints the minimum detectable difference (MDD: 80% power,
5% two-sided) of the sweep's own design (the figure in summary.md) and of another design: each of --bases,
--seeds-per-base, --problems and --n defaults to the sweep's own; with one base in the sweep, runs are counted
as seeds of that base (a lower bound).

${flagLines(FLAGS)}

example: deno task power runs/default --bases 16 --problems 512
         deno task power runs/default --target 0.02`;

/** Entry point for `deno task power`. */
export async function main(args: string[]): Promise<number> {
  if (args.some((a) => a === "--seeds" || a.startsWith("--seeds="))) {
    throw new UsageError("--seeds: give --bases B and --seeds-per-base S (runs are nested in base models)");
  }
  const { values, positionals } = parseTable(args, FLAGS, true);
  if (positionals.length !== 1) throw new UsageError("expected one sweep folder SWEEP_DIR");
  const dir = positionals[0];
  if (values.target !== undefined && (values.bases || values.problems)) {
    throw new UsageError("give --target or a design (--bases/--problems), not both");
  }
  const report = await buildReport(dir);
  if (report.comparisons.length === 0) {
    console.error(
      `power: ${dir} has no ACE-vs-baseline comparison (no method with preset ace-X and one with X)`,
    );
    return 1;
  }
  if (report.issues.length) {
    console.error(
      `power: warning: ${dir} has incomplete data (${report.issues.length} issue(s); see summary.md)`,
    );
  }
  const shown = report.comparisons.filter((c) => c.cells.length > 0);
  const entries = shown.map((c) => powerEntry(c, report.runs, values));
  const model: PowerModel = {
    version: 1,
    sweep: dir,
    incomplete: report.issues.length > 0,
    comparisons: entries,
  };
  const text = [
    `# Power of ${dir}`,
    "",
    ...entries.flatMap((e, i) => powerText(e, shown[i].cells[0].nested)),
  ];
  console.log(values.json ? powerJson(model) : text.join("\n"));
  return 0;
}

/**
 * One comparison's `power --json` entry (fields: reports/schemas/power.schema.json): per k the measured components
 * and MDD, and the projection to the requested design or, with --target, the problems each base count needs.
 */
function powerEntry(c: Comparison, runs: readonly RunData[], values: FlagValues<typeof FLAGS>) {
  const own = ownDesign(c.cells[0]);
  const { basesKnown, seedsKnown } = c.cells[0].nested;
  const design: Design = {
    bases: values.bases ?? own.bases,
    seedsPerBase: values["seeds-per-base"] ?? own.seedsPerBase,
    problems: values.problems ?? own.problems,
    n: values.n ?? own.n,
  };
  const units = basesKnown ? design.bases : design.bases * design.seedsPerBase;
  if (units < 2) {
    throw new UsageError(
      basesKnown
        ? "--bases: a projection needs ≥ 2 bases"
        : "--bases × --seeds-per-base: a projection needs ≥ 2 runs",
    );
  }
  const target = values.target ?? null;
  const ks = c.cells.filter((d) => d.k <= design.n);
  return {
    dataset: c.dataset,
    a: c.a,
    b: c.b,
    ownDesign: own,
    design,
    basesKnown,
    seedsKnown,
    pairedSampleCorrelation: pairedSampleCorrelation(runs, c.a, c.b, c.dataset),
    cells: c.cells.map((d) => {
      const { base, seed, problem, baseProblem, residual } = d.nested;
      return {
        k: d.k,
        mean: d.mean,
        components: { base, seed, problem, baseProblem, residual },
        within: withinEstimate(d, d.n),
        mdd: d.mdd,
        mddRange: { ...d.mddRange },
        projected: target === null
          ? { mdd: projectMdd(d, design), truncated: projectionTruncated(d, design) }
          : null,
      };
    }),
    target: target === null ? null : {
      mdd: target,
      ks: ks.map((d) => d.k),
      rows: values["try-bases"].filter((b) => b * (units / design.bases) >= 2).map((bases) => {
        const need = ks.map((d) => problemsNeeded(d, target, { ...design, bases }));
        return {
          bases,
          problems: need,
          all: need.some((p) => p === null) ? null : Math.max(...need.map((p) => p!)),
        };
      }),
    },
  };
}

/** One comparison in `power --json`. */
type PowerComparison = ReturnType<typeof powerEntry>;

/** `power --json`'s output (schema: reports/schemas/power.schema.json; non-finite numbers are null). */
export interface PowerModel {
  version: 1;
  sweep: string;
  incomplete: boolean;
  comparisons: PowerComparison[];
}

/** The Markdown of one entry: its components table and notes, then the projection or the --target table. */
function powerText(e: PowerComparison, x: NestedComponents): string[] {
  const negative = e.cells.some((d) => Object.values(d.components).some((v) => v < -1e-12));
  const plugIn = e.cells.filter((d) => d.within.plugIn).map((d) => d.k);
  const text = [
    `## ${e.b} − ${e.a} (${e.dataset})`,
    "",
    "Variance components of the paired difference (per value; method of moments):",
    "",
    "| k | mean Δ | σ²_base | σ²_seed(base) | σ²_problem | σ²_base×problem | σ²_residual | of which within-problem | design | MDD (this design) | MDD with the base term at its 95% χ² bounds |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ...e.cells.map((d) =>
      `| ${d.k} | ${f3(d.mean)} | ${Object.values(d.components).map(componentText).join(" | ")} | ${
        componentText(d.within.variance)
      }${d.within.plugIn ? " (plug-in)" : ""} | ${designText(e.ownDesign, x)} | ${mddText(d.mdd)} | ${
        mddBounds(d) ? `${mddBounds(d)} (${d.mddRange.df} df)` : "–"
      } |`
    ),
    "",
    ...notes(e, negative, plugIn),
  ];
  if (e.target === null) {
    const cut = e.cells.map((d) => d.projected!.truncated);
    text.push(
      `Projected MDD for ${designText(e.design)}:`,
      "",
      `| ${e.cells.map((d) => `MDD@${d.k}`).join(" | ")} |`,
      `|${e.cells.map(() => "---:").join("|")}|`,
      `| ${e.cells.map((d, i) => mddText(d.projected!.mdd) + (cut[i] ? "*" : "")).join(" | ")} |`,
      "",
    );
    if (cut.some((x) => x)) {
      text.push(
        "\\* a projected component came out negative (e.g. the measured residual is smaller than its own " +
          "within-problem part) and is counted as 0: that MDD is a lower bound.",
        "",
      );
    }
    return text;
  }
  const { mdd, ks, rows } = e.target;
  return [
    ...text,
    `Problems needed for MDD ≤ ${mdd} (${e.design.seedsPerBase} seed(s) per base, n ${e.design.n}; "–": not ` +
    "reachable with that many bases):",
    "",
    `| bases | ${ks.map((k) => `k=${k}`).join(" | ")} | all k |`,
    `|---:|${ks.map(() => "---:").join("|")}|---:|`,
    ...rows.map((r) => `| ${r.bases} | ${r.problems.map((p) => p ?? "–").join(" | ")} | ${r.all ?? "–"} |`),
    "",
  ];
}
