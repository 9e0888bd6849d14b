// GRPO outcome advantages (arXiv 2402.03300): normalise each rollout's reward within its prompt group.
import { assertFinite, assertLength, type Num } from "./check.ts";

/** Options of the group advantage: divide by the group's Bessel std (GRPO) or not (Dr. GRPO). */
export interface GroupAdvantageOptions {
  normByStd: boolean;
  /** Added to the std before dividing (VERL: 1e-6). */
  stdEps: number;
}

/**
 * Per-rollout advantages A_i = (r_i − mean_g) / (std_g + stdEps), std with Bessel's n−1; `normByStd: false` gives
 * r_i − mean_g. A singleton group has mean 0 and std 1 (A = r, as VERL); a group whose rewards are all exactly
 * equal gets A = 0 without dividing by a tiny float. Returns a new Float64Array of length B.
 */
export function groupAdvantages(
  rewards: Num,
  groupIds: Num,
  options: GroupAdvantageOptions = { normByStd: true, stdEps: 1e-6 },
): Float64Array {
  assertFinite("rewards", rewards);
  assertLength("groupIds", groupIds, rewards.length);
  const members = groupMembers(groupIds);
  const adv = new Float64Array(rewards.length);
  for (const idx of members.values()) {
    if (idx.length === 1) {
      adv[idx[0]] = rewards[idx[0]];
      continue;
    }
    const r0 = rewards[idx[0]];
    if (idx.every((i) => rewards[i] === r0)) continue; // degenerate group: no signal, exactly zero
    const mean = idx.reduce((s, i) => s + rewards[i], 0) / idx.length;
    const variance = idx.reduce((s, i) => s + (rewards[i] - mean) ** 2, 0) / (idx.length - 1);
    const scale = options.normByStd ? Math.sqrt(variance) + options.stdEps : 1;
    for (const i of idx) adv[i] = (rewards[i] - mean) / scale;
  }
  return adv;
}

/** Rollout indices of each group id, in order of first appearance; ids must be integers. */
export function groupMembers(groupIds: Num): Map<number, number[]> {
  const members = new Map<number, number[]>();
  for (let i = 0; i < groupIds.length; i++) {
    const g = groupIds[i];
    if (!Number.isInteger(g)) throw new RangeError(`groupIds[${i}] is ${g}; expected an integer`);
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  }
  return members;
}
