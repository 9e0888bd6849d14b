// The pure pieces of one RL step, shared by every engine: score rollouts, decide which groups are informative,
// turn rewards into the advantages the loss sees, and average the metrics of the mini-batch updates.
import { aceAdvantages, aceAllWrong, confidenceShift } from "./ace.ts";
import { groupMembers } from "./advantages.ts";
import { assertLength, type Num } from "./check.ts";
import { ADV_ESTIMATORS } from "./estimators.ts";
import { overlongPenalty } from "./overlong.ts";
import type { PolicyLossMetrics } from "./policy_loss.ts";
import type { AlgoConfig, TrainOn } from "./presets.ts";

/**
 * Rewards of B rollouts: 1/0 (`binary`) or +1/−1 (`pm1`) by correctness, plus DAPO's overlong penalty when
 * `algo.overlong.enabled`, over the last `algo.overlong.buffer` tokens of `maxLength`. `lengths` are response
 * lengths in tokens; null for rollouts without a length (the tabular policy's single actions), which are never
 * shaped. A buffer larger than `maxLength` throws, naming it.
 */
export function scoreRollouts(
  correct: ArrayLike<number | boolean>,
  lengths: Num | null,
  maxLength: number,
  algo: Pick<AlgoConfig, "rewardScheme" | "overlong">,
): Float64Array {
  const rewards = Float64Array.from(correct, (c) => (c ? 1 : algo.rewardScheme === "pm1" ? -1 : 0));
  if (algo.overlong.enabled && lengths) {
    assertLength("lengths", lengths, rewards.length);
    const penalty = overlongPenalty(lengths, maxLength, algo.overlong.buffer, algo.overlong.factor);
    for (let i = 0; i < rewards.length; i++) rewards[i] += penalty[i];
  }
  return rewards;
}

/**
 * The overlong buffer an engine with a response budget of `maxLength` tokens records: `buffer` itself when it
 * fits, else a quarter of the budget (at least 1) — the presets' 4096 tokens are sized for LLM responses.
 */
export function fitOverlongBuffer(buffer: number, maxLength: number): number {
  return buffer <= maxLength ? buffer : Math.max(1, Math.floor(maxLength / 4));
}

/**
 * Whether a group can teach the policy anything: its rollouts disagree (some correct, some not), or it has a
 * single rollout (DAPO keeps singletons). The one definition behind dynamic sampling and `informative_frac`.
 */
export function informativeGroup(correct: ArrayLike<number | boolean>): boolean {
  if (correct.length === 1) return true;
  for (let i = 1; i < correct.length; i++) if (!correct[i] !== !correct[0]) return true;
  return false;
}

/** A step's rollouts in the RL core's layout: per-rollout values (length B) and [B, T] per-token arrays. */
export interface StepRollouts {
  rewards: Num;
  correct: ArrayLike<number | boolean>;
  groupIds: Num;
  /** Log-probs at sampling time (detached), zero where the mask is zero. */
  oldLogp: Num;
  refLogp: Num;
  mask: Num;
  B: number;
  T: number;
}

/**
 * Rewards → the registered estimator's advantages (`algo.advEstimator`) → ACE (when enabled, from c_i = the
 * rollout's log-ratio to the reference, aggregated by `algo.ace`; all-wrong groups too under `ace.allWrong`) → the
 * advantages the loss sees (`finalAdvantages`), returned with the estimator's and the confidence shifts c.
 */
export function batchAdvantages(rollouts: StepRollouts, algo: AlgoConfig) {
  const { rewards, correct, groupIds, oldLogp, refLogp, mask, B, T } = rollouts;
  const c = confidenceShift(oldLogp, refLogp, mask, B, T, algo.ace);
  const advantages = ADV_ESTIMATORS.get(algo.advEstimator)({ rewards, groupIds, correct, c }, algo);
  const finalAdvantages = aceAllWrong(
    aceAdvantages(advantages, correct, c, algo.ace),
    correct,
    groupIds,
    c,
    algo.ace,
  );
  return { advantages, c, finalAdvantages };
}

/**
 * The rows the loss trains on, in order: null for `all`; else the correct (PSR) or incorrect (NSR) rollouts
 * alone, as Zhu et al.'s code (arXiv 2506.01347) subsets the batch before the update, so a token mean runs over
 * the subset's tokens only. May be empty.
 */
export function trainingRows(correct: ArrayLike<number | boolean>, trainOn: TrainOn): number[] | null {
  if (trainOn === "all") return null;
  const want = trainOn === "correct";
  return [...Array(correct.length).keys()].filter((i) => !!correct[i] === want);
}

/** Group id of every rollout, for groups of the given sizes laid out one after the other. */
export function groupIdsOf(sizes: readonly number[]): Int32Array {
  return Int32Array.from(sizes.flatMap((n, g) => Array(n).fill(g)));
}

/**
 * Row ranges [from, to) of the mini-batches: the groups split into min(parts, groups) contiguous runs of whole
 * groups, run k holding groups [⌊k·n/parts⌋, ⌊(k+1)·n/parts⌋).
 */
export function miniBatchRows(groupIds: Num, parts: number): [number, number][] {
  const starts = [...groupMembers(groupIds).values()].map((idx) => idx[0]);
  const n = starts.length, k = Math.min(parts, n);
  const rowOf = (g: number) => (g < n ? starts[g] : groupIds.length);
  return Array.from(
    { length: k },
    (_, i) => [rowOf(Math.floor(i * n / k)), rowOf(Math.floor((i + 1) * n / k))],
  );
}

/** The loss and metrics of one mini-batch update. */
export interface UpdateResult {
  loss: number;
  metrics: PolicyLossMetrics;
  /** Gradient norm before clipping; null for an engine that does not compute one. */
  gradNorm: number | null;
}

/**
 * Means over a step's updates (in order): loss and each metric, skipping nulls (a metric null in every update
 * stays null); the gradient norm is the last update's. At least one update.
 */
export function meanUpdates(results: readonly UpdateResult[]): UpdateResult {
  if (results.length === 0) throw new RangeError("meanUpdates: no updates");
  const mean = (f: (r: UpdateResult) => number | null) => {
    const xs = results.map(f).filter((x): x is number => x !== null);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  };
  return {
    loss: mean((r) => r.loss)!,
    gradNorm: results[results.length - 1].gradNorm,
    metrics: {
      pg_loss: mean((r) => r.metrics.pg_loss)!,
      clipfrac: mean((r) => r.metrics.clipfrac)!,
      clipfrac_lower: mean((r) => r.metrics.clipfrac_lower)!,
      ppo_kl: mean((r) => r.metrics.ppo_kl)!,
      kl: mean((r) => r.metrics.kl),
      entropy: mean((r) => r.metrics.entropy),
    },
  };
}
