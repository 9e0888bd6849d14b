// Advantage estimators by name, as VERL's `register_adv_est`: one function and one registry line each. ACE, when
// enabled, rescales the negative advantages of incorrect rollouts after whichever estimator ran.
import { type GroupAdvantageOptions, groupAdvantages, groupMembers } from "./advantages.ts";
import { assertFinite, assertLength, type Num } from "./check.ts";
import { Registry } from "./registry.ts";
import { softplus } from "./ace.ts";

/** What an estimator sees: per-rollout rewards, prompt group ids and grader verdicts (length B each). */
export interface AdvantageInput {
  rewards: Num;
  groupIds: Num;
  correct: ArrayLike<number | boolean>;
  /** ACE's confidence shift per rollout, for estimators matched to ACE (absent: not computed). */
  c?: Num;
}

/** The algorithm options an estimator may read (a subset of AlgoConfig). */
export interface AdvantageOptions extends GroupAdvantageOptions {
  /** W-REINFORCE's weight λ of a correct rollout (an incorrect one weighs 1). */
  wReinforceLambda: number;
  /** Pass@k training's k (estimator `passk`). */
  passK: number;
  /** ACE's options: `w_reinforce_ace` matches ACE's mean multiplier with them. */
  ace: { alpha: number };
}

/** An estimator: per-rollout advantages (a new Float64Array of length B). */
export type AdvantageEstimator = (input: AdvantageInput, options: AdvantageOptions) => Float64Array;

/**
 * RLOO (Ahmadian et al. 2024, arXiv 2402.14740): A_i = r_i − mean of the other n − 1 rewards of the group,
 * computed as VERL does, r_i·n/(n−1) − mean·n/(n−1); a singleton group keeps A = r.
 */
export function rlooAdvantages(input: AdvantageInput): Float64Array {
  const { rewards, groupIds } = input;
  assertFinite("rewards", rewards);
  assertLength("groupIds", groupIds, rewards.length);
  const adv = Float64Array.from(rewards);
  for (const idx of groupMembers(groupIds).values()) {
    const n = idx.length;
    if (n === 1) continue;
    const mean = idx.reduce((s, i) => s + rewards[i], 0) / n;
    for (const i of idx) adv[i] = rewards[i] * n / (n - 1) - mean * n / (n - 1);
  }
  return adv;
}

/**
 * VERL's `grpo_passk` (Tang et al. 2025, "Optimizing Language Models for Inference Time Objectives using
 * Reinforcement Learning", arXiv 2503.19595): only the best rollout of a group gets a non-zero advantage,
 * r_max − r_second, divided by (Bessel std + eps) when normByStd. Ties go to the first best rollout. Groups need
 * ≥ 2 rollouts. Kept beside Chen et al.'s analytical estimator (`passk`) under its own name.
 */
export function maxMinusSecondAdvantages(input: AdvantageInput, options: AdvantageOptions): Float64Array {
  const { rewards, groupIds } = input;
  assertFinite("rewards", rewards);
  assertLength("groupIds", groupIds, rewards.length);
  const adv = new Float64Array(rewards.length);
  for (const [g, idx] of groupMembers(groupIds)) {
    if (idx.length < 2) {
      throw new RangeError(`grpo_passk advantages need ≥ 2 rollouts per group; group ${g} has 1`);
    }
    const order = [...idx].sort((a, b) => rewards[b] - rewards[a] || a - b);
    let advantage = rewards[order[0]] - rewards[order[1]];
    if (options.normByStd) {
      const mean = idx.reduce((s, i) => s + rewards[i], 0) / idx.length;
      const variance = idx.reduce((s, i) => s + (rewards[i] - mean) ** 2, 0) / (idx.length - 1);
      advantage /= Math.sqrt(variance) + options.stdEps;
    }
    adv[order[0]] = advantage;
  }
  return adv;
}

/** C(n, k) / C(m, k) for 0 ≤ k, as a product (no large binomials); 0 when k > n. */
function binomialRatio(n: number, m: number, k: number): number {
  if (k > n) return 0;
  let r = 1;
  for (let i = 0; i < k; i++) r *= (n - i) / (m - i);
  return r;
}

/**
 * Pass@k training with the analytical advantage (Chen et al. 2025, "Pass@k Training for Adaptively Balancing
 * Exploration and Exploitation of Large Reasoning Models", arXiv 2508.10751): the group's reward is its Pass@k,
 * R̄ = 1 − C(N_neg, k)/C(N, k), σ = √(R̄(1 − R̄)); a correct rollout gets (1 − R̄)/(σ + eps) and an incorrect
 * one (1 − R̄ − C(N_neg − 1, k − 1)/C(N − 1, k − 1))/(σ + eps), the expected advantage of the k-subsets it belongs
 * to (the authors' code, RUCAIBox/Passk_Training `calc_adv`, with eps = 1e-6). Every rollout of a mixed group gets
 * a signal (incorrect ones pushed down); where σ = 0 (all agree, or fewer than k incorrect) every advantage is 0,
 * as there. Needs k ≤ the group size.
 */
export function passkAdvantages(input: AdvantageInput, options: AdvantageOptions): Float64Array {
  const { rewards, groupIds, correct } = input;
  assertLength("groupIds", groupIds, rewards.length);
  assertLength("correct", correct, rewards.length);
  const k = options.passK;
  const adv = new Float64Array(rewards.length);
  for (const [g, idx] of groupMembers(groupIds)) {
    const N = idx.length;
    if (k > N) throw new RangeError(`passk advantages need k = ${k} ≤ the group size; group ${g} has ${N}`);
    const neg = idx.filter((i) => !correct[i]).length;
    const mean = 1 - binomialRatio(neg, N, k);
    const sigma = Math.sqrt(mean * (1 - mean));
    if (!(sigma > 0)) continue;
    const scale = sigma + options.stdEps;
    const negAdv = (1 - mean - (neg > 0 ? binomialRatio(neg - 1, N - 1, k - 1) : 0)) / scale;
    for (const i of idx) adv[i] = correct[i] ? (1 - mean) / scale : negAdv;
  }
  return adv;
}

/**
 * W-REINFORCE (Zhu et al. 2025, "The Surprising Effectiveness of Negative Reinforcement in LLM Reasoning"):
 * REINFORCE without a baseline where a correct rollout's advantage is λ and an incorrect one's is −1, so the
 * negative samples carry most of the signal (the paper uses λ = 0.1).
 */
export function wReinforceAdvantages(input: AdvantageInput, options: AdvantageOptions): Float64Array {
  const { correct } = input;
  assertLength("correct", correct, input.rewards.length);
  return Float64Array.from(correct, (ok) => (ok ? options.wReinforceLambda : -1));
}

/**
 * W-REINFORCE with λ matched to ACE, a control for ACE: each batch's λ = 1/m̄, m̄ the mean over its incorrect
 * rollouts of ACE's multiplier 1 + α·softplus(c_i), so negatives outweigh positives by ACE's own mean factor
 * (−1 vs λ) but uniformly, with no selection by confidence. Needs `c`.
 */
export function wReinforceAceAdvantages(input: AdvantageInput, options: AdvantageOptions): Float64Array {
  const { correct, c } = input;
  assertLength("correct", correct, input.rewards.length);
  if (!c) throw new RangeError("w_reinforce_ace needs the confidence shift c of every rollout");
  assertLength("c", c, correct.length);
  const wrong = Array.from({ length: c.length }, (_, i) => i).filter((i) => !correct[i]);
  const mean = wrong.reduce((s, i) => s + 1 + options.ace.alpha * softplus(c[i]), 0) /
    Math.max(wrong.length, 1);
  const lambda = wrong.length ? 1 / mean : 1;
  return Float64Array.from(correct, (ok) => (ok ? lambda : -1));
}

/**
 * PSR, positive sample reinforcement (Zhu et al. 2025, arXiv 2506.01347): A = +1 for a correct rollout and 0 for
 * an incorrect one, REINFORCE on the positives only — the other end of W-REINFORCE from NSR (W-REINFORCE with
 * λ = 0: 0 for a correct rollout, −1 for an incorrect one).
 */
export function psrAdvantages(input: AdvantageInput): Float64Array {
  const { correct } = input;
  assertLength("correct", correct, input.rewards.length);
  return Float64Array.from(correct, (ok) => (ok ? 1 : 0));
}

/** The advantage estimators by VERL's names (`algo.advEstimator`). */
export const ADV_ESTIMATORS = new Registry<AdvantageEstimator>("advEstimator", [
  // GRPO (and Dr. GRPO with normByStd false): (r − mean_g)/(std_g + eps)
  ["grpo", ({ rewards, groupIds }, options) => groupAdvantages(rewards, groupIds, options)],
  ["rloo", rlooAdvantages],
  ["passk", passkAdvantages],
  ["grpo_passk", maxMinusSecondAdvantages],
  ["w_reinforce", wReinforceAdvantages],
  ["w_reinforce_ace", wReinforceAceAdvantages],
  ["psr", psrAdvantages],
]);
