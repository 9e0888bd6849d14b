// `deno task power SWEEP_DIR`: the variance components of each ACE-minus-baseline difference of a finished sweep
// (between seeds, between problems, seed × problem residual, and the within-problem sampling part of the
// residual), the minimum detectable difference (MDD, 80% power, 5% two-sided) of the sweep's own design, and its
// projection to another design (--seeds/--problems/--n) or the design a target MDD needs (--target).
import { parseFlags, parseIntList, parseNumber, UsageError } from "../common/args.ts";
import { crossedVariance, minDetectable, passAtKVariance } from "../evaluators/mod.ts";
import type { Comparison, DiffCell } from "./compare.ts";
import { buildReport } from "./report.ts";

/** A sweep design: training seeds (pairs), held-out problems, samples per problem. */
export interface Design {
  seeds: number;
  problems: number;
  n: number;
}

/**
 * Mean within-problem sampling variance of one paired difference value at n samples per problem:
 * Var(pass@k estimate) of each side, from each value's measured accuracy c/n₀ (the factor n₀/(n₀ − 1) makes it
 * unbiased at k = 1; larger k are plug-in estimates). Requires k ≤ n.
 */
export function withinVariance(cell: DiffCell, n: number): number {
  const n0 = cell.n, k = cell.k;
  const cache = new Map<number, number>();
  const v = (p: number) => {
    let out = cache.get(p);
    if (out === undefined) cache.set(p, out = passAtKVariance(n, p, k));
    return out;
  };
  let sum = 0;
  const { a, b } = cell.accuracy;
  for (let i = 0; i < a.length; i++) sum += v(a[i]) + v(b[i]);
  return (sum / a.length) * (n0 > 1 ? n0 / (n0 - 1) : 1);
}

/**
 * MDD of a difference for another design: the residual's within-problem part is rescaled from the measured n to
 * `design.n` (residual − W(n₀) + W(n), at least 0), the other components are kept. At the measured design this is
 * exactly the summary's figure. NaN when k > design.n.
 */
export function projectMdd(cell: DiffCell, design: Design): number {
  if (cell.k > design.n) return NaN;
  const c = cell.components;
  const residual = design.n === cell.n
    ? c.residual
    : Math.max(0, c.residual - withinVariance(cell, cell.n) + withinVariance(cell, design.n));
  const problem = c.seedKnown
    ? c.problem
    : c.problem - (withinVariance(cell, cell.n) - withinVariance(cell, design.n));
  return minDetectable(crossedVariance({ ...c, residual, problem: Math.max(0, problem) }, design));
}

/** The fewest problems (≤ 10⁷) reaching `target` with `seeds` seeds and n samples, or null when none does. */
export function problemsNeeded(cell: DiffCell, target: number, seeds: number, n: number): number | null {
  const mdd = (problems: number) => projectMdd(cell, { seeds, problems, n });
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

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "–");
const f5 = (x: number) => x.toExponential(2);

function componentsTable(c: Comparison): string[] {
  const lines = [
    "| k | mean Δ | σ²_seed | σ²_problem | σ²_residual | of which within-problem | design | MDD (this design) |",
    "|---:|---:|---:|---:|---:|---:|---|---:|",
  ];
  for (const d of c.cells) {
    const x = d.components;
    lines.push(
      `| ${d.k} | ${f3(d.mean)} | ${x.seedKnown ? f5(x.seed) : "unknown (1 seed)"} | ${f5(x.problem)} | ${
        f5(x.residual)
      } | ${f5(withinVariance(d, d.n))} | ${d.seeds} × ${d.problems} × n ${d.n} | ${f3(d.mdd)} |`,
    );
  }
  return lines;
}

/** Usage text for `deno task power`. */
export const usage =
  `usage: deno task power SWEEP_DIR [--seeds S --problems P --n N] [--target MDD [--try-seeds LIST]]

Estimates, for every ACE-minus-baseline comparison and k of a finished sweep, the variance components of the
paired difference (between seeds, between problems, seed × problem residual and its within-problem sampling
part) and prints the minimum detectable difference (MDD: 80% power, 5% two-sided) of the sweep's own design
(the figure in summary.md) and of another design.
--seeds S, --problems P, --n N   the design to project (each defaults to the sweep's own)
--target MDD                     instead: for each seed count, the problems needed to reach MDD at every k ≤ n
--try-seeds LIST                 seed counts tried with --target (default 2,3,4,6,8,12,16)

example: deno task power runs/default --seeds 8 --problems 512
         deno task power runs/default --target 0.02`;

/** Entry point for `deno task power`. */
export async function main(args: string[]): Promise<number> {
  const parsed = parseFlags(args, {
    seeds: { type: "string" },
    problems: { type: "string" },
    n: { type: "string" },
    target: { type: "string" },
    "try-seeds": { type: "string" },
  });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (parsed.positionals.length !== 1) throw new UsageError("expected one sweep folder SWEEP_DIR");
  const dir = parsed.positionals[0];
  const target = values.target === undefined
    ? null
    : parseNumber(values.target as string, "target", 0, 1e-6, 2);
  if (target !== null && (values.seeds || values.problems)) {
    throw new UsageError("give --target or a design (--seeds/--problems), not both");
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
  const lines = [`# Power of ${dir}`, ""];
  for (const c of report.comparisons) {
    const own = c.cells[0];
    const design: Design = {
      seeds: parseNumber(values.seeds as string | undefined, "seeds", own.seeds, 2, 1e6),
      problems: parseNumber(values.problems as string | undefined, "problems", own.problems, 2, 1e9),
      n: parseNumber(values.n as string | undefined, "n", own.n, 1, 1e6),
    };
    for (const [flag, v] of Object.entries(design)) {
      if (!Number.isInteger(v)) throw new UsageError(`--${flag}: expected an integer, got ${v}`);
    }
    lines.push(`## ${c.b} − ${c.a} (${c.dataset})`, "", ...componentsTable(c), "");
    if (!own.components.seedKnown) {
      lines.push(
        "One seed: the seed-to-seed variance is not measured, so projections leave it out (a lower bound).",
      );
      lines.push("");
    }
    if (target === null) {
      lines.push(
        `Projected MDD for ${design.seeds} seeds × ${design.problems} problems × n ${design.n}:`,
        "",
        `| ${c.cells.map((d) => `MDD@${d.k}`).join(" | ")} |`,
        `|${c.cells.map(() => "---:").join("|")}|`,
        `| ${c.cells.map((d) => f3(projectMdd(d, design))).join(" | ")} |`,
        "",
      );
      continue;
    }
    const trySeeds = values["try-seeds"]
      ? parseIntList(values["try-seeds"] as string, "try-seeds")
      : [2, 3, 4, 6, 8, 12, 16];
    const ks = c.cells.filter((d) => d.k <= design.n);
    lines.push(
      `Problems needed for MDD ≤ ${target} (n ${design.n}; "–": not reachable with that many seeds):`,
      "",
      `| seeds | ${ks.map((d) => `k=${d.k}`).join(" | ")} | all k |`,
      `|---:|${ks.map(() => "---:").join("|")}|---:|`,
    );
    for (const seeds of trySeeds.filter((s) => s >= 2)) {
      const need = ks.map((d) => problemsNeeded(d, target, seeds, design.n));
      const all = need.some((p) => p === null) ? null : Math.max(...need.map((p) => p!));
      lines.push(`| ${seeds} | ${need.map((p) => p ?? "–").join(" | ")} | ${all ?? "–"} |`);
    }
    lines.push("");
  }
  console.log(lines.join("\n"));
  return 0;
}
