// Positive controls from the literature: published qualitative orderings between RLVR methods (or a method and its
// base model) that a faithful miniature of RLVR should reproduce. Each claim is checked on a sweep that holds the
// methods it needs, as the paired difference b − a (same base, seed and problem) at one k with its crossed interval
// and MDD: reproduced when the interval excludes 0 in the claimed direction, contradicted when it excludes 0 in the
// opposite one, not resolvable otherwise. A contradiction is a finding about this world, not a failure of the code.
import { type DiffCell, pairedDiff } from "./compare.ts";
import { mddText } from "./caveats.ts";
import { finalRows, type PassKRow } from "./passk.ts";

/** The side of a claim that is the policy before RL: each run's own step-0 evaluation (its base model). */
export const BASE_SIDE = "base (step 0)";

/** One published ordering, stated as "b ≥ a at Pass@k" (b is the side claimed higher). */
export interface Claim {
  id: string;
  /** The claim as a reader would state it. */
  claim: string;
  /** Paper, year and arXiv id. */
  source: string;
  /** RL-core preset of the lower side, or BASE_SIDE. */
  a: string;
  /** RL-core preset of the side claimed higher, or BASE_SIDE. */
  b: string;
  /** 1, or "max": the largest k both sides report. */
  k: 1 | "max";
  /** What the paper measured, and where this suite's method differs from the paper's (empty: the same). */
  note?: string;
}

const ZHU = "Zhu et al. 2025, arXiv 2506.01347";
const CHEN = "Chen et al. 2025, arXiv 2508.10751";
const YUE = "Yue et al. 2025, arXiv 2504.13837";

/**
 * The registry. Sources (abstracts checked): Zhu et al., "The Surprising Effectiveness of Negative Reinforcement in
 * LLM Reasoning" (PSR alone improves Pass@1 but degrades higher k; NSR alone improves over the base across the
 * whole Pass@k spectrum; W-REINFORCE, λ = 0.1, improves Pass@k overall); Chen et al., "Pass@k Training for
 * Adaptively Balancing Exploration and Exploitation of Large Reasoning Models" (Pass@k as the reward improves
 * exploration, i.e. large-k Pass@k, without hurting Pass@1); Yue et al., "Does Reinforcement Learning Really
 * Incentivize Reasoning Capacity in LLMs Beyond the Base Model?" (RL beats the base at small k, the base
 * overtakes it at large k).
 */
export const CLAIMS: readonly Claim[] = [
  { id: "zhu-psr-pass1", claim: "PSR ≥ NSR at Pass@1", source: ZHU, a: "nsr", b: "psr", k: 1 },
  { id: "zhu-nsr-largek", claim: "NSR ≥ PSR at large k", source: ZHU, a: "psr", b: "nsr", k: "max" },
  {
    id: "zhu-nsr-base",
    claim: "NSR ≥ the base model at large k (NSR keeps the boundary)",
    source: ZHU,
    a: BASE_SIDE,
    b: "nsr",
    k: "max",
  },
  {
    id: "zhu-wr-pass1",
    claim: "W-REINFORCE ≥ GRPO at Pass@1 (≈ best over the spectrum)",
    source: ZHU,
    a: "grpo",
    b: "w-reinforce",
    k: 1,
    note: "the paper reports W-REINFORCE comparable to GRPO at Pass@1: a tie reads as not resolvable",
  },
  {
    id: "zhu-wr-largek",
    claim: "W-REINFORCE ≥ GRPO at large k (≈ best over the spectrum)",
    source: ZHU,
    a: "grpo",
    b: "w-reinforce",
    k: "max",
  },
  {
    id: "zhu-wr-psr-largek",
    claim: "W-REINFORCE ≥ PSR at large k (≈ best over the spectrum)",
    source: ZHU,
    a: "psr",
    b: "w-reinforce",
    k: "max",
  },
  {
    id: "chen-passk-largek",
    claim: "Pass@k training ≥ GRPO at large k",
    source: CHEN,
    a: "grpo",
    b: "passk",
    k: "max",
    note:
      "`passk` is VERL's grpo_passk estimator (best rollout of a group only), a relative of Chen et al.'s " +
      "analytical Pass@k advantage, not their exact method",
  },
  {
    id: "yue-rl-pass1",
    claim: "GRPO ≥ the base model at Pass@1",
    source: YUE,
    a: BASE_SIDE,
    b: "grpo",
    k: 1,
  },
  {
    id: "yue-base-largek",
    claim: "the base model ≥ GRPO at large k (it overtakes RL)",
    source: YUE,
    a: "grpo",
    b: BASE_SIDE,
    k: "max",
  },
];

/** reproduced: the interval excludes 0 in the claimed direction; contradicted: in the opposite one. */
export type Outcome = "reproduced" | "contradicted" | "not resolvable" | "no interval";

/** One claim checked on one dataset of a sweep. */
export interface ControlResult {
  claim: Claim;
  dataset: string;
  /** The sweep's method names of each side (BASE_SIDE for the step-0 policy). */
  a: string;
  b: string;
  /** The paired difference b − a at the claim's k (with its interval and MDD). */
  cell: DiffCell;
  outcome: Outcome;
}

/** The outcome of a claimed-positive difference from its 95% interval. */
export function outcomeOf(cell: { lo: number; hi: number }): Outcome {
  if (!Number.isFinite(cell.lo) || !Number.isFinite(cell.hi)) return "no interval";
  if (cell.lo > 0) return "reproduced";
  if (cell.hi < 0) return "contradicted";
  return "not resolvable";
}

/** The method of a sweep trained with `preset`: the one named like it, else the first with that preset. */
function methodFor(preset: string, presets: ReadonlyMap<string, string>): string | null {
  if (presets.get(preset) === preset) return preset;
  return [...presets].find(([, p]) => p === preset)?.[0] ?? null;
}

/**
 * Check every claim whose methods the sweep holds (rows: all pass@k rows, every step; presets: method → preset).
 * The base side of a claim is the other side's runs at step 0, so the pairs are each run against its own start.
 * Returns the results, dataset by dataset in registry order, and the claims that could not be checked, with why.
 */
export function checkClaims(
  rows: readonly PassKRow[],
  presets: ReadonlyMap<string, string>,
  claims: readonly Claim[] = CLAIMS,
): { results: ControlResult[]; skipped: { claim: Claim; why: string }[] } {
  const all = rows.filter((r) => r.slice === "all");
  const final = finalRows(all.filter((r) => r.step > 0));
  const results: ControlResult[] = [], skipped: { claim: Claim; why: string }[] = [];
  const datasets = [...new Set(all.map((r) => r.dataset))].sort();
  for (const claim of claims) {
    const trained = [claim.a, claim.b].filter((x) => x !== BASE_SIDE);
    const names = trained.map((p) => methodFor(p, presets));
    const missing = trained.filter((_, i) => names[i] === null);
    if (missing.length) {
      skipped.push({ claim, why: `no ${missing.join(" or ")} method in this sweep` });
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
        skipped.push({
          claim,
          why: `${dataset}: ${rowsA.length ? name(claim.b) : name(claim.a)} has no rows`,
        });
        continue;
      }
      const { cells } = pairedDiff(rowsA, rowsB);
      if (cells.length === 0) {
        skipped.push({ claim, why: `${dataset}: no paired runs and problems` });
        continue;
      }
      const cell = claim.k === 1 ? cells.find((c) => c.k === 1) : cells[cells.length - 1];
      if (!cell) {
        skipped.push({ claim, why: `${dataset}: no Pass@1 on both sides` });
        continue;
      }
      results.push({ claim, dataset, a: name(claim.a), b: name(claim.b), cell, outcome: outcomeOf(cell) });
    }
  }
  return { results, skipped };
}

const signed = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(3);

/**
 * summary.md's "What this world reproduces" section for one dataset: each claim with the measured b − a at its k,
 * the 95% crossed interval, the MDD and the outcome, then the tally and the claims not checked. Empty when no claim
 * could be checked on any dataset.
 */
export function controlsSection(
  checked: { results: readonly ControlResult[]; skipped: readonly { claim: Claim; why: string }[] },
  dataset: string,
): string[] {
  const mine = checked.results.filter((r) => r.dataset === dataset);
  if (mine.length === 0) return [];
  const count = (o: Outcome) => mine.filter((r) => r.outcome === o).length;
  const notChecked = checked.skipped.filter((s) => !s.why.includes(":") || s.why.startsWith(`${dataset}:`));
  const scope = mine.every((r) => r.cell.interval === "one seed")
    ? "95% interval over problems only (one run), for this base model only"
    : mine.every((r) => r.cell.scope === "bases")
    ? "95% crossed bases × problems interval, seeds nested in bases"
    : "95% crossed seeds × problems interval, for this base model only";
  return [
    `### ${dataset}: what this world reproduces`,
    "",
    "Published orderings between RLVR methods, each checked as the paired difference (higher side − lower side, " +
    `same base, seed and problem; ${scope}) at the claimed k: **reproduced** when the interval excludes 0 in the ` +
    "claimed direction, **contradicted** when it excludes 0 in the opposite one, **not resolvable** when it " +
    "contains 0 (then the MDD says how large a difference this design could have seen). The base side is each " +
    "run's own step-0 policy. A contradiction is a finding about this world, not a failure.",
    "",
    "| claim | source | k | difference | Δ | 95% interval | MDD | outcome |",
    "|---|---|---:|---|---:|---|---:|---|",
    ...mine.map((r) =>
      `| ${r.claim.claim}${r.claim.note ? ` (${r.claim.note})` : ""} | ${r.claim.source} | ${r.cell.k} | ` +
      `${r.b} − ${r.a} | ${signed(r.cell.mean)} | ${
        Number.isFinite(r.cell.lo) ? `[${signed(r.cell.lo)}, ${signed(r.cell.hi)}]` : "–"
      } | ${mddText(r.cell.mdd)} | ${r.outcome} |`
    ),
    "",
    `${count("reproduced")} reproduced, ${count("contradicted")} contradicted, ${
      count("not resolvable")
    } not resolvable${
      count("no interval") ? `, ${count("no interval")} without an interval` : ""
    } of ${mine.length} claims checked.` +
    (notChecked.length
      ? ` Not checked: ${
        notChecked.map((s) => `${s.claim.claim} (${s.why.replace(`${dataset}: `, "")})`).join("; ")
      }.`
      : ""),
    "",
  ];
}
