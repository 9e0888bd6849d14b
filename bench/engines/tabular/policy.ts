// The tabular policy π(s | x) = softmax(shared + perPrompt[x] + refNoise[x]), its gradients and exact Pass@k.
import type { TabularWorld } from "./world.ts";

/** Learned parameters; both start at zero, so the initial policy is the reference. */
export interface TabularParams {
  shared: Float64Array;
  perPrompt: Float64Array;
}

/** Zero parameters for a world (the reference policy). */
export function zeroParams(world: TabularWorld): TabularParams {
  return {
    shared: new Float64Array(world.strategies),
    perPrompt: new Float64Array(world.prompts * world.strategies),
  };
}

/** log π(· | x) as a Float64Array of length S (log-sum-exp shifted by the max, so never Infinity). */
export function logProbs(world: TabularWorld, params: TabularParams, x: number): Float64Array {
  const S = world.strategies;
  const z = new Float64Array(S);
  for (let s = 0; s < S; s++) {
    z[s] = params.shared[s] + params.perPrompt[x * S + s] + world.refNoise[x * S + s];
  }
  let max = -Infinity;
  for (const v of z) max = Math.max(max, v);
  let sum = 0;
  for (const v of z) sum += Math.exp(v - max);
  const lse = max + Math.log(sum);
  for (let s = 0; s < S; s++) z[s] -= lse;
  return z;
}

/** Entropy in nats of π(· | x) given its log-probs. */
export function entropyOf(logp: Float64Array): number {
  let h = 0;
  for (const l of logp) h -= Math.exp(l) * l;
  return h;
}

/** Probability that one sample on prompt x is correct. */
function pCorrect(world: TabularWorld, logp: Float64Array, x: number): number {
  let p = 0;
  for (let s = 0; s < world.strategies; s++) {
    if (world.correct[x * world.strategies + s]) p += Math.exp(logp[s]);
  }
  return p;
}

/** Exact pass@k over all prompts: mean_x 1 − (1 − p_x)^k (k samples with replacement). */
export function exactPassAtK(world: TabularWorld, params: TabularParams, ks: readonly number[]): number[] {
  const p = Array.from({ length: world.prompts }, (_, x) => pCorrect(world, logProbs(world, params, x), x));
  return ks.map((k) => p.reduce((acc, px) => acc + 1 - (1 - px) ** k, 0) / world.prompts);
}

/**
 * Gradient wrt the logits of prompt x of Σ_i g_i·log π(s_i | x) − entropyCoef·Σ_i w_i·H(π(· | x)), for rollouts
 * (s_i, g_i = d loss / d logp_i, w_i = aggregation weight) on that prompt: d log π(s)/dz_j = 1{j=s} − π_j and
 * dH/dz_j = −π_j (log π_j + H).
 */
export function logitGradient(
  logp: Float64Array,
  samples: readonly { strategy: number; dLogp: number; weight: number }[],
  entropyCoef: number,
): Float64Array {
  const S = logp.length;
  const grad = new Float64Array(S);
  const H = entropyOf(logp);
  for (const { strategy, dLogp, weight } of samples) {
    for (let j = 0; j < S; j++) {
      const pj = Math.exp(logp[j]);
      grad[j] += dLogp * ((j === strategy ? 1 : 0) - pj);
      if (entropyCoef !== 0) grad[j] -= entropyCoef * weight * -pj * (logp[j] + H);
    }
  }
  return grad;
}
