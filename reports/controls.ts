// Controls from the literature: published differences between RLVR methods (or a method and its base model), each
// stated as the paper states it, with the table and the size it reports, checked on a sweep that holds the methods
// as the paired difference b − a (same base, seed and problem) at one k with its crossed interval. Every claim is
// tested twice, against 0 and against the published size, with Holm's correction over all tests of the table, so
// "reproduced" (direction and size), "contradicted", "published size excluded" and "not resolvable" (the data
// cover both 0 and the published size) are family-wise 5% statements. A contradiction is a finding about this
// world, not a failure of the code.
import { loadSchema, validate } from "../common/config.ts";
import claims from "./claims.json" with { type: "json" };
import { toCsv } from "../common/csv.ts";
import { holm, termsPValue } from "../evaluators/mod.ts";
import { crossedName } from "./caveats.ts";
import { type DiffCell, pairedDiff } from "./compare.ts";
import { finalRows, type PassKRow } from "./passk.ts";
import { csv6 } from "./format.ts";

/** The side of a claim that is the policy before RL: each run's own step-0 evaluation (its base model). */
export const BASE_SIDE = "base (step 0)";

/**
 * One published difference, stated as "b − a at Pass@k" (b is the side the paper reports higher or equal); its
 * fields are described in reports/schemas/claims.schema.json. `published` is null for this suite's own controls.
 */
export interface Claim {
  id: string;
  claim: string;
  source: string;
  /** RL-core presets of the two sides, or BASE_SIDE. */
  a: string;
  b: string;
  k: 1 | "max";
  published: { delta: number; where: string } | null;
  note?: string;
}

/**
 * The registry (reports/claims.json, checked against reports/schemas/claims.schema.json), each claim read from its
 * paper's table: Zhu et al. Table 1 (Qwen2.5-Math-7B, MATH, T = 0.6, n = 256) for NSR, PSR and W-REINFORCE; Chen et
 * al. Table 1, Qwen2.5-7B-Instruct on AIME 2025, via a secondary reading of the paper; Yue et al.'s claim that the
 * base catches up with RL at large k, sized by Zhu et al.'s GRPO row, the same model family as the rest.
 */
export const CLAIMS: readonly Claim[] = validate(
  loadSchema(new URL("./schemas/claims.schema.json", import.meta.url)),
  claims,
  "reports/claims.json",
);

/** The outcome of a claim after Holm's correction over the table's tests. */
export type Outcome =
  | "reproduced"
  | "contradicted"
  | "published size excluded"
  | "direction reproduced, published size excluded"
  | "as published (no difference detected)"
  | "not resolvable"
  | "no interval";

/** One claim checked on one dataset of a sweep. */
export interface ControlResult {
  claim: Claim;
  dataset: string;
  /** The sweep's method names of each side (BASE_SIDE for the step-0 policy). */
  a: string;
  b: string;
  /** The paired difference b − a at the claim's k (with its interval and MDD). */
  cell: DiffCell;
  /** Two-sided p-values against 0 and against the published size (NaN without one). */
  pZero: number;
  pPublished: number;
  outcome: Outcome;
}

/**
 * The outcome of one claim from its Holm decisions: `zero` (b − a ≠ 0 rejected) and `size` (b − a ≠ the published
 * size rejected; null without a published size), with the sign of the estimate.
 */
export function outcomeOf(
  mean: number,
  zero: boolean,
  size: boolean | null,
  published: number | null,
): Outcome {
  if (!Number.isFinite(mean)) return "no interval";
  if (published === 0) {
    return zero
      ? (mean < 0 ? "contradicted" : "published size excluded")
      : "as published (no difference detected)";
  }
  if (zero && mean < 0) return "contradicted";
  if (zero) return size ? "direction reproduced, published size excluded" : "reproduced";
  return size ? "published size excluded" : "not resolvable";
}

/** Whether a claim's published size is tested besides 0 (a published 0 is the test against 0 itself). */
const sized = (claim: Claim) => claim.published !== null && claim.published.delta !== 0;

/** The Holm-corrected outcomes of a table's results (every claim's test against 0 and against its size). */
function decide(results: Omit<ControlResult, "outcome">[]): ControlResult[] {
  const tests = results.flatMap((r, i) => [
    { i, kind: "zero", p: r.pZero },
    ...(sized(r.claim) ? [{ i, kind: "size", p: r.pPublished }] : []),
  ]);
  const verdicts = holm(tests.map((t) => (Number.isFinite(t.p) ? t.p : 1)));
  const rejected = (i: number, kind: string) =>
    tests.some((t, j) => t.i === i && t.kind === kind && verdicts[j].rejected);
  return results.map((r, i) => ({
    ...r,
    outcome: Number.isFinite(r.pZero)
      ? outcomeOf(
        r.cell.mean,
        rejected(i, "zero"),
        sized(r.claim) ? rejected(i, "size") : null,
        r.claim.published?.delta ?? null,
      )
      : "no interval",
  }));
}

/** The method of a sweep trained with `preset`: the one named like it, else the first with that preset. */
function methodFor(preset: string, presets: ReadonlyMap<string, string>): string | null {
  if (presets.get(preset) === preset) return preset;
  return [...presets].find(([, p]) => p === preset)?.[0] ?? null;
}

/**
 * Check every claim whose methods the sweep holds (rows: all pass@k rows, every step; presets: method → preset).
 * The base side of a claim is the other side's runs at step 0, so the pairs are each run against its own start.
 * Outcomes are Holm-corrected over the claims checked on each dataset. Returns the results, dataset by dataset in
 * registry order, and the claims that could not be checked, with why.
 */
export function checkClaims(
  rows: readonly PassKRow[],
  presets: ReadonlyMap<string, string>,
  claims: readonly Claim[] = CLAIMS,
): { results: ControlResult[]; skipped: { claim: Claim; why: string }[] } {
  const all = rows.filter((r) => r.slice === "all");
  const final = finalRows(all.filter((r) => r.step > 0));
  const pending: Omit<ControlResult, "outcome">[] = [], skipped: { claim: Claim; why: string }[] = [];
  const datasets = [...new Set(all.map((r) => r.dataset))].sort();
  for (const claim of claims) {
    const trained = [claim.a, claim.b].filter((x) => x !== BASE_SIDE);
    const names = trained.map((p) => methodFor(p, presets));
    const missing = trained.filter((_, i) => names[i] === null);
    const skip = (why: string) => skipped.push({ claim, why });
    if (missing.length) {
      skip(`no ${missing.join(" or ")} method in this sweep`);
      continue;
    }
    const name = (side: string) => (side === BASE_SIDE ? BASE_SIDE : names[trained.indexOf(side)]!);
    const anchor = names[0]!; // the trained method whose own step 0 is the base side
    for (const dataset of datasets) {
      const side = (s: string) =>
        s === BASE_SIDE
          ? all.filter((r) => r.method === anchor && r.dataset === dataset && r.step === 0)
          : final.filter((r) => r.method === name(s) && r.dataset === dataset);
      const rowsA = side(claim.a), rowsB = side(claim.b);
      if (rowsA.length === 0 || rowsB.length === 0) {
        skip(`${dataset}: ${rowsA.length ? name(claim.b) : name(claim.a)} has no rows`);
        continue;
      }
      const { cells } = pairedDiff(rowsA, rowsB);
      if (cells.length === 0) {
        skip(`${dataset}: no paired runs and problems`);
        continue;
      }
      const cell = claim.k === 1 ? cells.find((c) => c.k === 1) : cells[cells.length - 1];
      if (!cell) {
        skip(`${dataset}: no Pass@1 on both sides`);
        continue;
      }
      const p = (d: number) => (Number.isFinite(cell.lo) ? termsPValue(cell.terms, cell.mean - d) : NaN);
      pending.push({
        claim,
        dataset,
        a: name(claim.a),
        b: name(claim.b),
        cell,
        pZero: p(0),
        pPublished: claim.published ? p(claim.published.delta) : NaN,
      });
    }
  }
  const results = datasets.flatMap((d) => decide(pending.filter((r) => r.dataset === d)));
  return { results, skipped };
}

const pct = (x: number) => (x >= 0 ? "+" : "−") + (100 * Math.abs(x)).toFixed(1);

/**
 * summary.md's "What this world reproduces" section for one dataset: each claim with the published b − a (its table),
 * the measured b − a at its k, the 95% crossed interval, the MDD and the Holm-corrected outcome, then the tally and
 * the claims not checked. Empty when no claim could be checked on any dataset.
 */
export function controlsSection(
  checked: { results: readonly ControlResult[]; skipped: readonly { claim: Claim; why: string }[] },
  dataset: string,
): string[] {
  const mine = checked.results.filter((r) => r.dataset === dataset);
  if (mine.length === 0) return [];
  const tally = [...new Set(mine.map((r) => r.outcome))].map((o) =>
    `${mine.filter((r) => r.outcome === o).length} ${o}`
  ).join(", ");
  const notChecked = checked.skipped.filter((s) => !s.why.includes(":") || s.why.startsWith(`${dataset}:`));
  const tests = mine.length + mine.filter((r) => sized(r.claim)).length;
  const scope = mine.every((r) => r.cell.interval === "one seed")
    ? "95% interval over problems only (one run), for this base model only"
    : crossedName(mine.every((r) => r.cell.scope === "bases"));
  return [
    `### ${dataset}: what this world reproduces`,
    "",
    "Published differences between RLVR methods, each as its paper states it with the size its table reports, and " +
    `the paired difference measured here (same base, seed and problem; ${scope}) at the claimed k. Each claim is ` +
    `tested against 0 and against its published size, with **Holm's correction over the ${tests} tests of this ` +
    "table** (family-wise 5%): **reproduced** (differs from 0 in the published direction, published size not " +
    "excluded), **contradicted** (differs from 0 the other way), **published size excluded** (the size is not the " +
    "paper's, whatever the direction), **not resolvable** (the data cover both 0 and the published size; the MDD " +
    "says how large a difference the design could see). The base side is each run's own step-0 policy. Published " +
    "sizes are in points (Pass@k × 100) at the paper's own k and protocol; a contradiction is a finding about this " +
    "world, not a failure.",
    "",
    "| claim | source | published b − a | k | difference | Δ (points) | 95% interval | MDD (points) | outcome (Holm) |",
    "|---|---|---|---:|---|---:|---|---:|---|",
    ...mine.map((r) =>
      `| ${r.claim.claim}${r.claim.note ? ` (${r.claim.note})` : ""} | ${r.claim.source} | ${
        r.claim.published ? `${pct(r.claim.published.delta)} (${r.claim.published.where})` : "–"
      } | ${r.cell.k} | ${r.b} − ${r.a} | ${pct(r.cell.mean)} | ${
        Number.isFinite(r.cell.lo) ? `[${pct(r.cell.lo)}, ${pct(r.cell.hi)}]` : "–"
      } | ${pct(r.cell.mdd).replace("+", "")} | ${r.outcome} |`
    ),
    "",
    `${tally} of ${mine.length} claims checked.` +
    (notChecked.length
      ? ` Not checked: ${
        notChecked.map((s) => `${s.claim.claim} (${s.why.replace(`${dataset}: `, "")})`).join("; ")
      }.`
      : ""),
    "",
  ];
}

/** controls.csv: one row per claim checked per dataset (differences in Pass@k units), Holm-corrected outcome. */
export function controlsCsv(results: readonly ControlResult[]): string {
  const rows = results.map((r) => ({
    dataset: r.dataset,
    id: r.claim.id,
    claim: r.claim.claim,
    source: r.claim.source,
    published: r.claim.published?.delta ?? "",
    published_where: r.claim.published?.where ?? "",
    k: r.cell.k,
    a: r.a,
    b: r.b,
    diff: csv6(r.cell.mean),
    lo: csv6(r.cell.lo),
    hi: csv6(r.cell.hi),
    mdd: csv6(r.cell.mdd),
    p_zero: csv6(r.pZero),
    p_published: csv6(r.pPublished),
    outcome: r.outcome,
  }));
  return toCsv(rows, Object.keys(rows[0] ?? {})); // written only when a claim was checked
}
