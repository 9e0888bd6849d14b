// One RL step on the tabular policy, using exactly the RL core's functions (advantages, ACE, loss, diagnostics).
import type { Rng } from "../../../common/prng.ts";
import {
  aceAdvantages,
  aggregationWeights,
  type AlgoConfig,
  confidenceShift,
  dynamicSample,
  groupAdvantages,
  policyLoss,
  type PolicyLossMetrics,
  type TrainingDiagnostics,
  trainingDiagnostics,
} from "../../core/mod.ts";
import { entropyOf, logitGradient, logProbs, refLogProbs, type TabularParams } from "./policy.ts";
import type { TabularSettings, TabularWorld } from "./world.ts";

/** One sampled rollout: prompt x, chosen strategy, its log-probs at sampling time and under the reference. */
export interface Rollout {
  x: number;
  strategy: number;
  oldLogp: number;
  refLogp: number;
  correct: boolean;
}

/** G rollouts on prompt x from the current policy. */
export function sampleGroup(
  world: TabularWorld,
  params: TabularParams,
  x: number,
  G: number,
  rng: Rng,
): Rollout[] {
  const logp = logProbs(world, params, x);
  const ref = refLogProbs(world, x);
  const probs = logp.map(Math.exp);
  return Array.from({ length: G }, () => {
    const s = rng.categorical(probs);
    return {
      x,
      strategy: s,
      oldLogp: logp[s],
      refLogp: ref[s],
      correct: world.correct[x * world.strategies + s] === 1,
    };
  });
}

/** Draw this step's groups (dynamic sampling when on) and the fraction of generated groups kept. */
function collectGroups(
  world: TabularWorld,
  params: TabularParams,
  algo: AlgoConfig,
  settings: TabularSettings,
  rng: Rng,
): { groups: Rollout[][]; keptFrac: number } {
  const batch = Math.min(settings.rl.promptsPerStep, world.prompts);
  const generate = () => {
    const order = rng.shuffle(Array.from({ length: world.prompts }, (_, x) => x));
    return order.slice(0, batch).map((x) => sampleGroup(world, params, x, settings.rl.groupSize, rng));
  };
  const informative = (g: Rollout[]) => g.length === 1 || g.some((r) => r.correct !== g[0].correct);
  if (algo.dynamicSampling.enabled) {
    const ds = dynamicSample(
      generate,
      informative,
      batch,
      algo.dynamicSampling.maxRounds,
      algo.dynamicSampling.onExhausted,
    );
    return { groups: ds.groups, keptFrac: ds.keptGroups / ds.generatedGroups };
  }
  const groups = generate();
  // Without filtering every group is trained on; the logged fraction is then the informative share.
  return { groups, keptFrac: groups.filter(informative).length / groups.length };
}

/** Reward of a rollout under the preset's scheme (1/0 or +1/−1). */
function reward(r: Rollout, algo: AlgoConfig): number {
  return r.correct ? 1 : algo.rewardScheme === "pm1" ? -1 : 0;
}

/**
 * Sample, score and update in place: group advantages → ACE → clipped loss → SGD on the logits, for ppoEpochs ×
 * miniBatches updates. Returns the shared diagnostics (loss metrics averaged over the updates).
 */
export function trainStep(
  world: TabularWorld,
  params: TabularParams,
  algo: AlgoConfig,
  settings: TabularSettings,
  rng: Rng,
): TrainingDiagnostics {
  const { groups, keptFrac } = collectGroups(world, params, algo, settings, rng);
  const rollouts = groups.flat();
  const B = rollouts.length;
  const rewards = rollouts.map((r) => reward(r, algo));
  const groupIds = groups.flatMap((g, gi) => g.map(() => gi));
  const correct = rollouts.map((r) => r.correct);
  const oldLogp = rollouts.map((r) => r.oldLogp);
  const refLogp = rollouts.map((r) => r.refLogp);
  const advantages = groupAdvantages(rewards, groupIds, { normByStd: algo.normByStd, eps: algo.stdEps });
  const c = confidenceShift(oldLogp, refLogp, new Float64Array(B).fill(1), B, 1, algo.ace);
  const finalAdvantages = aceAdvantages(advantages, correct, c, algo.ace);

  const sums = { loss: 0, pg_loss: 0, clipfrac: 0, clipfrac_lower: 0, ppo_kl: 0, kl: 0, entropy: 0 };
  let updates = 0;
  const perBatch = Math.ceil(groups.length / settings.rl.miniBatches);
  for (let epoch = 0; epoch < settings.rl.ppoEpochs; epoch++) {
    for (let g0 = 0; g0 < groups.length; g0 += perBatch) {
      const idx = groupIds.flatMap((g, i) => (g >= g0 && g < g0 + perBatch ? [i] : []));
      const r = update(
        world,
        params,
        algo,
        settings,
        idx.map((i) => rollouts[i]),
        idx.map((i) => finalAdvantages[i]),
      );
      sums.loss += r.loss;
      for (const k of ["pg_loss", "clipfrac", "clipfrac_lower", "ppo_kl", "kl", "entropy"] as const) {
        sums[k] += r.metrics[k] ?? 0;
      }
      updates++;
    }
  }
  const avg = (v: number) => (updates ? v / updates : 0);
  const metrics: PolicyLossMetrics = {
    pg_loss: avg(sums.pg_loss),
    clipfrac: avg(sums.clipfrac),
    clipfrac_lower: avg(sums.clipfrac_lower),
    ppo_kl: avg(sums.ppo_kl),
    kl: avg(sums.kl),
    entropy: avg(sums.entropy),
  };
  return trainingDiagnostics({
    rewards,
    correct,
    advantages,
    finalAdvantages,
    c,
    groupsKeptFrac: keptFrac,
    loss: avg(sums.loss),
    metrics,
  });
}

/** One SGD update on a mini-batch; returns the loss result of the core's policyLoss. */
function update(
  world: TabularWorld,
  params: TabularParams,
  algo: AlgoConfig,
  settings: TabularSettings,
  rollouts: Rollout[],
  advantages: number[],
) {
  const B = rollouts.length;
  const S = world.strategies;
  const cache = new Map<number, Float64Array>();
  const logpOf = (x: number) => cache.get(x) ?? cache.set(x, logProbs(world, params, x)).get(x)!;
  const mask = new Float64Array(B).fill(1);
  const result = policyLoss({
    logp: rollouts.map((r) => logpOf(r.x)[r.strategy]),
    oldLogp: rollouts.map((r) => r.oldLogp),
    refLogp: rollouts.map((r) => r.refLogp),
    advantages,
    mask,
    B,
    T: 1,
    entropy: rollouts.map((r) => entropyOf(logpOf(r.x))),
  }, algo);
  const weights = aggregationWeights(mask, B, 1, algo.lossAgg);
  const byPrompt = new Map<number, { strategy: number; dLogp: number; weight: number }[]>();
  rollouts.forEach((r, i) => {
    const list = byPrompt.get(r.x) ?? byPrompt.set(r.x, []).get(r.x)!;
    list.push({ strategy: r.strategy, dLogp: result.dLogp[i], weight: weights[i] });
  });
  const sharedGrad = new Float64Array(S);
  const lr = settings.rl.lr;
  for (const [x, samples] of byPrompt) {
    const g = logitGradient(logpOf(x), samples, algo.entropyCoef);
    for (let s = 0; s < S; s++) {
      sharedGrad[s] += g[s];
      params.perPrompt[x * S + s] -= lr * settings.perPromptLrScale * g[s];
    }
  }
  for (let s = 0; s < S; s++) params.shared[s] -= lr * settings.sharedLrScale * sharedGrad[s];
  return result;
}
