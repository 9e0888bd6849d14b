// ACE: asymmetric confidence penalties on incorrect rollouts (arXiv 2602.21420). Pure functions, shared with
// the VERL export.
import { groupMembers } from "./advantages.ts";
import { assertFinite, assertLength, assertShape, type Num } from "./check.ts";

/**
 * How the penalty grows with the confidence shift: softplus (default, smooth) or relu; "uniform" (φ ≡ log 2,
 * softplus at c = 0) is a control that scales every error's penalty alike, ignoring confidence; "batch-mean"
 * gives every penalised error the batch's mean softplus(c), so the penalty has ACE's mean multiplier at every
 * step but no selectivity (is ACE's effect confidence-selective, or only a stronger penalty?).
 */
export type AcePhi = "softplus" | "relu" | "uniform" | "batch-mean";
/** How per-token log-ratios become c_i: `sum` over response tokens (the paper) or per-token `mean`. */
export type AceAggregation = "sum" | "mean";

/** ACE options; every run records them. `clip` bounds |c_i| (null: no clip). */
export interface AceConfig {
  enabled: boolean;
  alpha: number;
  phi: AcePhi;
  aggregation: AceAggregation;
  clip: number | null;
  /** The `ace-allwrong` ablation: also penalise the rollouts of all-wrong groups by confidence (aceAllWrong). */
  allWrong?: boolean;
}

/** Numerically stable softplus log(1 + e^x) (exact for large |x|, never Infinity for finite x). */
export function softplus(x: number): number {
  return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
}

/** φ(c): softplus(c), max(c, 0), or the constant log 2 (the "uniform" control). */
export function acePhi(c: number, phi: AcePhi): number {
  if (phi === "softplus") return softplus(c);
  if (phi === "relu") return Math.max(c, 0);
  if (phi === "uniform") return Math.LN2;
  throw new RangeError(`ace.phi is '${phi}'; expected softplus, relu or uniform (batch-mean is per batch)`);
}

/**
 * Confidence shift per rollout c_i = Σ_t mask·(logp − refLogp) (`sum`) or that sum ÷ the number of response
 * tokens (`mean`; 0 for an all-masked row), optionally clipped to [−clip, clip]. `logp` should be the detached
 * (rollout-time) log-probs, layout [B, T] row-major. Returns a Float64Array of length B.
 */
export function confidenceShift(
  logp: Num,
  refLogp: Num,
  mask: Num,
  B: number,
  T: number,
  options: { aggregation: AceAggregation; clip: number | null } = { aggregation: "sum", clip: null },
): Float64Array {
  assertShape(B, T);
  for (const [name, a] of [["logp", logp], ["refLogp", refLogp], ["mask", mask]] as const) {
    assertFinite(name, a, B * T);
  }
  const c = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let sum = 0, len = 0;
    for (let t = b * T; t < (b + 1) * T; t++) {
      sum += mask[t] * (logp[t] - refLogp[t]);
      len += mask[t];
    }
    let value = options.aggregation === "mean" ? (len > 0 ? sum / len : 0) : sum;
    if (options.clip !== null) value = Math.min(options.clip, Math.max(-options.clip, value));
    c[b] = value;
  }
  return c;
}

/**
 * ACE advantages: A'_i = A_i·(1 + α·φ(c_i)) when rollout i is incorrect and A_i < 0, else A_i. Apply after group
 * normalisation. `correct` is 1/true for a correct rollout. Disabled ACE returns a copy of `advantages`.
 */
export function aceAdvantages(
  advantages: Num,
  correct: ArrayLike<number | boolean>,
  c: Num,
  ace: AceConfig,
): Float64Array {
  assertFinite("advantages", advantages);
  assertFinite("c", c, advantages.length);
  assertLength("correct", correct, advantages.length);
  if (!(ace.alpha >= 0)) throw new RangeError(`ace.alpha is ${ace.alpha}; expected a number ≥ 0`);
  const out = Float64Array.from(advantages);
  if (!ace.enabled) return out;
  const penalised = [...out.keys()].filter((i) => !correct[i] && out[i] < 0);
  const mean = penalised.reduce((s, i) => s + softplus(c[i]), 0) / Math.max(penalised.length, 1);
  for (const i of penalised) {
    out[i] *= 1 + ace.alpha * (ace.phi === "batch-mean" ? mean : acePhi(c[i], ace.phi));
  }
  return out;
}

/** The residual weight ρ(c) = softplus(c) − (1 + c)·1{c > 0}; in (−1, log 2 − 1] for c > 0 and (0, log 2] for c ≤ 0. */
export function aceResidualWeight(c: number): number {
  return c > 0 ? Math.log1p(Math.exp(-c)) - 1 : softplus(c);
}

/**
 * The selective regulariser R = Σ_{incorrect i, A_i < 0, c_i > 0} |A_i|·(c_i + c_i²/2) whose negative gradient is
 * ACE's (softplus) extra push on overconfident errors, up to the residual ρ.
 */
export function aceRegulariser(advantages: Num, correct: ArrayLike<number | boolean>, c: Num): number {
  let r = 0;
  for (let i = 0; i < advantages.length; i++) {
    if (!correct[i] && advantages[i] < 0 && c[i] > 0) r += Math.abs(advantages[i]) * (c[i] + c[i] * c[i] / 2);
  }
  return r;
}

/**
 * The `ace-allwrong` ablation (the idea of LENS, arXiv 2510.08696, not its formula): a group whose rollouts are all
 * incorrect has estimator advantage 0, so ACE's extra term −|A|·α·φ(c) vanishes there; this gives every rollout of
 * such a group (≥ 2 rollouts) A' = −α·φ(c_i), ACE's extra term at unit advantage |A| = 1. Other groups keep
 * `advantages`. Returns a new array; with ACE disabled or `allWrong` off it is a copy.
 */
export function aceAllWrong(
  advantages: Num,
  correct: ArrayLike<number | boolean>,
  groupIds: Num,
  c: Num,
  ace: AceConfig,
): Float64Array {
  assertLength("correct", correct, advantages.length);
  assertLength("groupIds", groupIds, advantages.length);
  assertLength("c", c, advantages.length);
  const out = Float64Array.from(advantages);
  if (!ace.enabled || !ace.allWrong) return out;
  for (const idx of groupMembers(groupIds).values()) {
    if (idx.length < 2 || idx.some((i) => correct[i])) continue;
    for (const i of idx) out[i] = -ace.alpha * acePhi(c[i], ace.phi);
  }
  return out;
}
