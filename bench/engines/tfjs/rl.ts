// One RL step: G rollouts per prompt, strict-grader rewards, the RL core's advantages/ACE/loss, Adam updates.
// The core works on per-token arrays; the engine backpropagates the surrogate sum(dLogp ⊙ logp) minus the
// entropy bonus aggregated with the same per-token weights. Every read of a tensor is awaited, so a step runs on
// webgpu (no synchronous GPU reads in Deno) as on the CPU backends.
import * as tf from "@tensorflow/tfjs-core";
import type { Rng } from "../../../common/prng.ts";
import type { MathRecord } from "../../../datasets/mod.ts";
import { grade } from "../../../evaluators/mod.ts";
import {
  aceAdvantages,
  aggregationWeights,
  type AlgoConfig,
  confidenceShift,
  dynamicSampleAsync,
  filterGroups,
  groupAdvantages,
  overlongPenalty,
  policyLoss,
  type PolicyLossMetrics,
  trainingDiagnostics,
} from "../../core/mod.ts";
import {
  type Model,
  type Optimizer,
  sampleAsync,
  tokenLogProbs,
  trainStep,
  trainStepAsync,
} from "./model.ts";
import { readsSync } from "./backend.ts";
import { methodOf } from "./policy.ts";
import type { TfjsSettings } from "./settings.ts";
import { responseSlice } from "./sft.ts";
import { cutAtEos, encodePrompts, type Tokenizer } from "./tokenizer.ts";
import { renderPrompt } from "./traces.ts";

/** The G rollouts of one prompt. */
interface Group {
  record: MathRecord;
  tokens: Int32Array; // [G, P + N]
  oldLogp: Float32Array; // [G, N], zero after EOS
  mask: Float32Array; // [G, N]
  lengths: Int32Array;
  correct: Uint8Array;
  methods: string[];
}

/** What a step needs besides the settings. */
export interface RlContext {
  model: Model;
  ref: Model;
  opt: Optimizer;
  tok: Tokenizer;
  train: readonly MathRecord[];
  settings: TfjsSettings;
  algo: AlgoConfig;
  rng: Rng;
  /** Update in two passes (forward, read, backward) instead of one; default: when the backend lacks sync reads. */
  twoPassUpdate?: boolean;
}

/** Sample `promptsPerStep` training prompts (uniformly, with the run's rng) and G rollouts of each. */
async function rolloutGroups(ctx: RlContext): Promise<Group[]> {
  const { settings: s, tok, rng } = ctx;
  const P = s.model.promptLength, N = s.rl.maxNewTokens, G = s.rl.groupSize, T = P + N;
  const records = Array.from({ length: s.rl.promptsPerStep }, () => ctx.train[rng.int(ctx.train.length)]);
  const prompts = encodePrompts(tok, records.flatMap((r) => Array(G).fill(renderPrompt(r))), P);
  const out = await sampleAsync(ctx.model, prompts, records.length * G, {
    maxNew: N,
    temperature: s.rl.temperature,
    topP: s.rl.topP,
    rng,
    eos: tok.eos,
  });
  return records.map((record, g) => {
    const rows = { start: g * G, end: (g + 1) * G };
    const mask = new Float32Array(G * N);
    const oldLogp = out.logp.slice(rows.start * N, rows.end * N);
    const correct = new Uint8Array(G);
    const methods: string[] = [];
    for (let i = 0; i < G; i++) {
      const len = out.lengths[rows.start + i];
      mask.fill(1, i * N, i * N + len);
      oldLogp.fill(0, i * N + len, (i + 1) * N);
      const row = out.tokens.subarray((rows.start + i) * T + P, (rows.start + i + 1) * T);
      const text = tok.decode(cutAtEos(tok, row).ids);
      correct[i] = grade(text, record.answer, { strict: true }).correct ? 1 : 0;
      methods.push(methodOf(record, text));
    }
    return {
      record,
      tokens: out.tokens.slice(rows.start * T, rows.end * T),
      oldLogp,
      mask,
      lengths: out.lengths.slice(rows.start, rows.end),
      correct,
      methods,
    };
  });
}

/** Rewards of a group's rollouts: 1/0 or ±1 by the scheme, plus DAPO's overlong penalty when enabled. */
function rewardsOf(group: Group, algo: AlgoConfig, maxNew: number): Float64Array {
  const r = Float64Array.from(group.correct, (c) => (c ? 1 : algo.rewardScheme === "pm1" ? -1 : 0));
  if (algo.overlong.enabled) {
    // The presets' buffer (4096) is sized for LLM responses; a tiny policy uses at most a quarter of its budget.
    const buffer = Math.min(algo.overlong.buffer, Math.max(1, Math.floor(maxNew / 4)));
    const pen = overlongPenalty(group.lengths, maxNew, buffer, algo.overlong.factor);
    for (let i = 0; i < r.length; i++) r[i] += pen[i];
  }
  return r;
}

/** Concatenate per-group typed arrays. */
function concat<A extends Float32Array | Int32Array | Uint8Array>(parts: A[], make: (n: number) => A): A {
  const out = make(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Columns [0, keep) of a row-major [rows, cols] array (drops the all-padding tail of a batch). */
function trimColumns<A extends Float32Array | Int32Array>(a: A, rows: number, cols: number, keep: number): A {
  if (keep === cols) return a;
  const out = new (a.constructor as new (n: number) => A)(rows * keep);
  for (let r = 0; r < rows; r++) out.set(a.subarray(r * cols, r * cols + keep), r * keep);
  return out;
}

/** Response log-probs [B, N] of `model` on token rows [B, P + N], without gradient. */
async function responseLogp(model: Model, tokens: Int32Array, B: number, P: number, N: number) {
  const logp = tf.tidy(() =>
    responseSlice(tokenLogProbs(model, tf.tensor2d(tokens, [B, P + N], "int32")).logp, P, N)
  );
  try {
    return await logp.data() as Float32Array;
  } finally {
    logp.dispose();
  }
}

/** One metrics.jsonl record. */
export type StepMetrics = Record<string, number | string | null | Record<string, number>>;

/**
 * Run RL step `step`: collect groups (with DAPO dynamic sampling when the algorithm enables it), compute rewards,
 * c_i against the frozen reference, (ACE) advantages, then `miniBatches` Adam updates on the clipped loss.
 * Throws when the loss or gradient norm is not finite.
 */
export async function rlStep(ctx: RlContext, step: number): Promise<StepMetrics> {
  const { settings: s, algo } = ctx;
  const P = s.model.promptLength, maxNew = s.rl.maxNewTokens, G = s.rl.groupSize;
  const t0 = performance.now();
  let groups: Group[], generatedGroups: number, rounds = 1;
  const informative = (g: Group) => g.correct.some((c) => c !== g.correct[0]);
  if (algo.dynamicSampling.enabled) {
    const ds = await dynamicSampleAsync(
      () => rolloutGroups(ctx),
      informative,
      s.rl.promptsPerStep,
      algo.dynamicSampling.maxRounds,
      algo.dynamicSampling.onExhausted,
    );
    [groups, generatedGroups, rounds] = [ds.groups, ds.generatedGroups, ds.rounds];
  } else {
    groups = await rolloutGroups(ctx);
    generatedGroups = groups.length;
  }
  const tSample = performance.now();
  const B = groups.length * G;
  const rewards = Float64Array.from(groups.flatMap((g) => [...rewardsOf(g, algo, maxNew)]));
  const correct = concat(groups.map((g) => g.correct), (n) => new Uint8Array(n));
  const groupIds = Int32Array.from({ length: B }, (_, i) => Math.floor(i / G));
  const base: StepMetrics = {
    step,
    rounds,
    informative_frac: B ? filterGroups(rewards, groupIds).keptGroups / groups.length : 0,
    method_frac: methodFractions(groups),
  };
  if (B === 0) return { ...base, reward_mean: null, skipped: "no informative groups" };

  // Only the columns some response reaches are computed: the rest is padding under a zero mask. Dr. GRPO's
  // aggregation divides by the padded length, so it keeps the full budget to keep that constant.
  const longest = Math.max(...groups.map((g) => Math.max(...g.lengths)));
  const N = algo.lossAgg === "seq-mean-token-sum-norm" ? maxNew : longest;
  const tokens = trimColumns(
    concat(groups.map((g) => g.tokens), (n) => new Int32Array(n)),
    B,
    P + maxNew,
    P + N,
  );
  const oldLogp = trimColumns(concat(groups.map((g) => g.oldLogp), (n) => new Float32Array(n)), B, maxNew, N);
  const mask = trimColumns(concat(groups.map((g) => g.mask), (n) => new Float32Array(n)), B, maxNew, N);
  const refLogp = await responseLogp(ctx.ref, tokens, B, P, N);
  refLogp.forEach((v, i) => (refLogp[i] = mask[i] ? v : 0)); // padded positions: exactly zero, never NaN
  const c = confidenceShift(oldLogp, refLogp, mask, B, N, algo.ace);
  const advantages = groupAdvantages(rewards, groupIds, { normByStd: algo.normByStd, eps: algo.stdEps });
  const finalAdvantages = aceAdvantages(advantages, correct, c, algo.ace);

  const update = await updatePolicy(ctx, {
    tokens,
    oldLogp,
    refLogp,
    mask,
    advantages: finalAdvantages,
    B,
    N,
  });
  const diag = trainingDiagnostics({
    rewards,
    correct,
    advantages,
    finalAdvantages,
    c,
    groupsKeptFrac: groups.length / generatedGroups,
    loss: update.loss,
    metrics: update.metrics,
  });
  return {
    ...base,
    ...diag,
    grad_norm: update.gradNorm,
    response_len: mask.reduce((a, b) => a + b, 0) / B,
    sample_s: (tSample - t0) / 1000,
    update_s: (performance.now() - tSample) / 1000,
  };
}

/** Fraction of rollouts that reproduce each method's exact trace ("other" for anything else). */
function methodFractions(groups: Group[]): Record<string, number> {
  const counts: Record<string, number> = {};
  let total = 0;
  for (const g of groups) {
    for (const m of g.methods) {
      counts[m] = (counts[m] ?? 0) + 1;
      total++;
    }
  }
  for (const k of Object.keys(counts)) counts[k] /= total;
  return counts;
}

/** The rollouts of one update, as flat arrays ([B, P + N] tokens, [B, N] per-token values). */
export interface Batch {
  tokens: Int32Array;
  oldLogp: Float32Array;
  refLogp: Float32Array;
  mask: Float32Array;
  advantages: Float64Array;
  B: number;
  /** Response columns kept (the longest response of the step). */
  N: number;
}

/** Rows [from, to) of a batch (whole groups, since groups are contiguous and mini-batches split on G). */
function rows(b: Batch, from: number, to: number, P: number): Batch {
  const N = b.N, T = P + N;
  return {
    tokens: b.tokens.slice(from * T, to * T),
    oldLogp: b.oldLogp.slice(from * N, to * N),
    refLogp: b.refLogp.slice(from * N, to * N),
    mask: b.mask.slice(from * N, to * N),
    advantages: b.advantages.slice(from, to),
    B: to - from,
    N,
  };
}

/** Adam updates over `miniBatches` consecutive slices of the batch; returns the mean loss, metrics, last grad norm. */
export async function updatePolicy(ctx: RlContext, batch: Batch) {
  const { settings: s, algo } = ctx;
  const P = s.model.promptLength, G = s.rl.groupSize;
  const groups = batch.B / G;
  const parts = Math.min(s.rl.miniBatches, groups);
  const results: { loss: number; metrics: PolicyLossMetrics; gradNorm: number }[] = [];
  for (let k = 0; k < parts; k++) {
    const mb = rows(batch, Math.floor(k * groups / parts) * G, Math.floor((k + 1) * groups / parts) * G, P);
    results.push(await updateMiniBatch(ctx, mb, algo));
  }
  const mean = (f: (r: typeof results[number]) => number | null) => {
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

/** One Adam step on one mini-batch: the core gives dLogp at the current logp; autodiff does the rest. */
async function updateMiniBatch(ctx: RlContext, mb: Batch, algo: AlgoConfig) {
  const P = ctx.settings.model.promptLength, N = mb.N;
  const tokens = tf.tensor2d(mb.tokens, [mb.B, P + N], "int32");
  const w = tf.tensor2d(Float32Array.from(aggregationWeights(mb.mask, mb.B, N, algo.lossAgg)), [mb.B, N]);
  let step;
  try {
    const twoPass = ctx.twoPassUpdate ?? !readsSync();
    step = twoPass ? await updateTwoPass(ctx, mb, algo, tokens, w) : updateOnePass(ctx, mb, algo, tokens, w);
  } finally {
    tf.dispose([tokens, w]);
  }
  const { result: r, gradNorm } = step;
  if (!r || !Number.isFinite(r.loss) || !Number.isFinite(gradNorm)) {
    throw new Error(`RL loss is ${r?.loss} (gradient norm ${gradNorm}): the run diverged`);
  }
  return { loss: r.loss, metrics: r.metrics, gradNorm };
}

type CoreLoss = ReturnType<typeof policyLoss>;

/** The response log-probs and entropies [B, N] of the policy on `tokens` (inside the tape when training). */
function responseOutputs(model: Model, tokens: tf.Tensor2D, P: number, N: number) {
  const out = tokenLogProbs(model, tokens, { entropy: true });
  return { logp: responseSlice(out.logp, P, N), entropy: responseSlice(out.entropy!, P, N) };
}

/** The core's loss and dLogp at the values of logp and entropy (padded positions read as exactly zero). */
function coreLoss(
  mb: Batch,
  algo: AlgoConfig,
  logp: ArrayLike<number>,
  entropy: ArrayLike<number>,
): CoreLoss {
  const masked = (xs: ArrayLike<number>) => Float32Array.from(xs, (v, i) => (mb.mask[i] ? v : 0));
  return policyLoss(
    {
      logp: masked(logp),
      oldLogp: mb.oldLogp,
      refLogp: mb.refLogp,
      advantages: mb.advantages,
      mask: mb.mask,
      B: mb.B,
      T: mb.N,
      entropy: masked(entropy),
    },
    algo,
  );
}

/** The scalar whose gradient is the core's: sum(dLogp ⊙ logp) − entropyCoef · sum(w ⊙ entropy). */
function surrogate(core: CoreLoss, out: { logp: tf.Tensor; entropy: tf.Tensor }, w: tf.Tensor, coef: number) {
  const dLogp = tf.tensor(Float32Array.from(core.dLogp), out.logp.shape);
  return tf.sub(tf.sum(tf.mul(dLogp, out.logp)), tf.mul(coef, tf.sum(tf.mul(w, out.entropy)))) as tf.Scalar;
}

/** One pass: the loss closure reads logp synchronously, so dLogp is computed inside the tape (CPU backends). */
function updateOnePass(ctx: RlContext, mb: Batch, algo: AlgoConfig, tokens: tf.Tensor2D, w: tf.Tensor) {
  const P = ctx.settings.model.promptLength;
  let result: CoreLoss | null = null;
  const { gradNorm } = trainStep(ctx.model, ctx.opt, () => {
    const out = responseOutputs(ctx.model, tokens, P, mb.N);
    // The core needs the values at the current parameters; they are constants for the surrogate's gradient.
    result = coreLoss(mb, algo, out.logp.dataSync(), out.entropy.dataSync());
    return surrogate(result, out, w, algo.entropyCoef);
  });
  return { result: result as CoreLoss | null, gradNorm };
}

/**
 * Two passes, for backends without synchronous reads: a forward pass read with `await data()`, the core, then a
 * forward/backward pass of the surrogate. The same update as `updateOnePass` (the forward is deterministic), at
 * the cost of one more forward pass.
 */
async function updateTwoPass(ctx: RlContext, mb: Batch, algo: AlgoConfig, tokens: tf.Tensor2D, w: tf.Tensor) {
  const P = ctx.settings.model.promptLength;
  const first = tf.tidy(() => responseOutputs(ctx.model, tokens, P, mb.N));
  let result: CoreLoss;
  try {
    result = coreLoss(mb, algo, await first.logp.data(), await first.entropy.data());
  } finally {
    tf.dispose([first.logp, first.entropy]);
  }
  const { gradNorm } = await trainStepAsync(
    ctx.model,
    ctx.opt,
    () => surrogate(result, responseOutputs(ctx.model, tokens, P, mb.N), w, algo.entropyCoef),
  );
  return { result, gradNorm };
}
