// The tfjs policy as a backend of the one RL loop (bench/engines/loop.ts): G rollouts per prompt graded with the
// strict grader, reference log-probs from the frozen base model, and Adam updates whose gradient is the core's:
// the engine backpropagates the surrogate sum(dLogp ⊙ logp) minus the entropy bonus aggregated with the same
// per-token weights. Every read of a tensor is awaited, so a step runs on webgpu (no synchronous GPU reads in
// Deno) as on the CPU backends.
import * as tf from "@tensorflow/tfjs-core";
import type { Rng } from "../../../common/prng.ts";
import type { MathRecord } from "../../../datasets/mod.ts";
import { grade, verdictOf } from "../../../evaluators/mod.ts";
import type { AlgoConfig } from "../../core/mod.ts";
import type { MiniBatch, PolicyBackend, RolloutGroup, UpdateRequest } from "../engine.ts";
import { rlStep as loopStep, type StepMetrics } from "../loop.ts";
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
import { responseSlice, traceIds } from "./sft.ts";
import { cutAtEos, encodePrompts, type Tokenizer } from "./tokenizer.ts";
import { methodsOf, renderPrompt } from "./traces.ts";

/** The G rollouts of one prompt. */
export interface TfjsGroup extends RolloutGroup {
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
  /** The run's RL stream; never advanced: each sampling round derives its own streams from it. */
  readonly rng: Rng;
  /** Update in two passes (forward, read, backward) instead of one; default: when the backend lacks sync reads. */
  twoPassUpdate?: boolean;
  /** The reward's grader (default: evaluators' `grade`); tests inject one that fails. */
  grade?: typeof grade;
  /** How the reward grades: the sweep's recorded protocol (`gradingOf`, bench/engines/registry.ts). */
  grader: { strict: boolean };
}

/**
 * Sample `promptsPerStep` training prompts (uniformly) and G rollouts of each. The draws of sampling round
 * `round` of step `step` come from streams keyed by (step, round) under the run's stream, so runs of one seed
 * and base (ACE and its baseline) train on the same prompts with coupled rollouts: their difference is not
 * blurred by unrelated sampling noise.
 */
async function rolloutGroups(ctx: RlContext, step: number, round: number): Promise<TfjsGroup[]> {
  const { settings: s, tok } = ctx;
  const P = s.model.promptLength, N = s.rl.maxNewTokens, G = s.rl.groupSize, T = P + N;
  const draws = ctx.rng.derive(`step|${step}|round|${round}`), records = pickPrompts(ctx, draws);
  const prompts = encodePrompts(tok, records.flatMap((r) => Array(G).fill(renderPrompt(r))), P);
  const out = await sampleAsync(ctx.model, prompts, records.length * G, {
    maxNew: N,
    temperature: s.rl.temperature,
    topP: s.rl.topP,
    rng: draws.derive("tokens"),
    eos: tok.eos,
  });
  return records.map((record, g) => {
    const rows = { start: g * G, end: (g + 1) * G };
    const mask = new Float32Array(G * N);
    const oldLogp = out.logp.slice(rows.start * N, rows.end * N);
    const correct = new Uint8Array(G);
    const methods: string[] = [];
    let ungraded = 0;
    for (let i = 0; i < G; i++) {
      const len = out.lengths[rows.start + i];
      mask.fill(1, i * N, i * N + len);
      oldLogp.fill(0, i * N + len, (i + 1) * N);
      const row = out.tokens.subarray((rows.start + i) * T + P, (rows.start + i + 1) * T);
      const text = tok.decode(cutAtEos(tok, row).ids);
      const verdict = (ctx.grade ?? grade)(text, record.answer, { strict: ctx.grader.strict });
      correct[i] = verdict.correct ? 1 : 0;
      // Rewarded as not correct (the loop needs a number), but counted: unknown is not wrong.
      if (verdictOf(verdict.status) === "ungraded") ungraded++;
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
      errorClasses: methods.map((m) => errorClassOf(record, m)),
      ungraded,
    };
  });
}

/** The `promptsPerStep` training prompts of a sampling round (uniform draws from its stream's "prompts"). */
function pickPrompts(ctx: RlContext, draws: Rng): MathRecord[] {
  const pick = draws.derive("prompts");
  return Array.from({ length: ctx.settings.rl.promptsPerStep }, () => ctx.train[pick.int(ctx.train.length)]);
}

/**
 * The oracle control's groups: the prompts `rolloutGroups` would draw at (step, round), each with `groupSize`
 * copies of its correct method's trace and EOS, and the policy's log-probs of them. Trained as PSR (+1 on every
 * row), this is supervised fine-tuning on the correct method from the same base with the RL optimiser: a method
 * that must widen what the policy solves (a positive control for Pass@k at large k).
 */
async function oracleGroups(ctx: RlContext, step: number, round: number): Promise<TfjsGroup[]> {
  const { settings: s, tok } = ctx;
  const P = s.model.promptLength, N = s.rl.maxNewTokens, G = s.rl.groupSize, T = P + N;
  const records = pickPrompts(ctx, ctx.rng.derive(`step|${step}|round|${round}`));
  const tokens = new Int32Array(records.length * G * T).fill(tok.pad);
  const prompts = encodePrompts(tok, records.map(renderPrompt), P);
  const lengths = records.map((record, g) => {
    const ids = traceIds(tok, record, methodsOf(record.meta.family as string).find((m) => m.correct)!, N);
    for (let i = 0; i < G; i++) {
      const row = (g * G + i) * T;
      tokens.set(prompts.subarray(g * P, (g + 1) * P), row);
      tokens.set(ids, row + P);
    }
    return ids.length;
  });
  const logp = await responseLogp(ctx.model, tokens, records.length * G, P, N);
  return records.map((record, g) => {
    const mask = new Float32Array(G * N);
    for (let i = 0; i < G; i++) mask.fill(1, i * N, i * N + lengths[g]);
    const oldLogp = logp.slice(g * G * N, (g + 1) * G * N).map((v, t) => (mask[t] ? v : 0));
    const method = methodsOf(record.meta.family as string).find((m) => m.correct)!.name;
    return {
      record,
      tokens: tokens.slice(g * G * T, (g + 1) * G * T),
      oldLogp,
      mask,
      lengths: new Int32Array(G).fill(lengths[g]),
      correct: new Uint8Array(G).fill(1),
      methods: Array(G).fill(method),
      errorClasses: Array(G).fill("other"),
    };
  });
}

/** A rollout's class as an error: a tempting "shortcut" method's exact trace, else "other" (correct ones too). */
function errorClassOf(record: MathRecord, method: string): string {
  const m = methodsOf(record.meta.family as string).find((x) => x.name === method);
  return m && !m.correct ? "shortcut" : "other";
}

/** The row-major [rows, cols] arrays of the groups stacked, each row cut to its first `keep` columns. */
function stackRows<A extends Float32Array | Int32Array>(parts: A[], cols: number, keep: number): A {
  const rows = parts.reduce((n, p) => n + p.length / cols, 0);
  const out = new (parts[0].constructor as new (n: number) => A)(rows * keep);
  let r = 0;
  for (const p of parts) {
    for (let i = 0; i < p.length; i += cols) out.set(p.subarray(i, i + keep), keep * r++);
  }
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

/**
 * The tfjs policy as the RL step sees it. Only the response columns some rollout reaches are computed (the rest
 * is padding under a zero mask); Dr. GRPO's aggregation divides by the padded length, so it keeps the full budget
 * to keep that constant.
 */
export function tfjsPolicy(ctx: RlContext): PolicyBackend<TfjsGroup, Int32Array> {
  const { settings: s } = ctx;
  const P = s.model.promptLength, maxNew = s.rl.maxNewTokens;
  return {
    groupsPerStep: s.rl.promptsPerStep,
    maxResponseLength: maxNew,
    miniBatches: s.rl.miniBatches,
    ppoEpochs: 1,
    sampleGroups: (step, round) =>
      ctx.algo.oracle ? oracleGroups(ctx, step, round) : rolloutGroups(ctx, step, round),
    toBatch(groups, algo) {
      const B = groups.reduce((n, g) => n + g.correct.length, 0);
      const longest = Math.max(...groups.map((g) => Math.max(...g.lengths)));
      const N = algo.lossAgg === "seq-mean-token-sum-norm" ? maxNew : longest;
      return {
        rows: stackRows(groups.map((g) => g.tokens), P + maxNew, P + N),
        B,
        T: N,
        oldLogp: stackRows(groups.map((g) => g.oldLogp), maxNew, N),
        mask: stackRows(groups.map((g) => g.mask), maxNew, N),
      };
    },
    selectRows: (rows, indices, T) => {
      const out = new Int32Array(indices.length * (P + T));
      indices.forEach((r, i) => out.set(rows.subarray(r * (P + T), (r + 1) * (P + T)), i * (P + T)));
      return out;
    },
    refLogp: (batch) => responseLogp(ctx.ref, batch.rows, batch.B, P, batch.T),
    update: (mb, request) => updateMiniBatch(ctx, mb, request),
    groupMetrics: (groups) => ({ method_frac: methodFractions(groups) }),
  };
}

/**
 * Run RL step `step` of the one step recipe on this context (without evaluation or checkpoints): collect groups,
 * score, reference log-probs, advantages, `miniBatches` Adam updates. Throws when the loss diverges.
 */
export function rlStep(ctx: RlContext, step: number): Promise<StepMetrics> {
  return loopStep(tfjsPolicy(ctx), ctx.algo, step);
}

/** Fraction of rollouts that reproduce each method's exact trace ("other" for anything else). */
function methodFractions(groups: TfjsGroup[]): Record<string, number> {
  const methods = groups.flatMap((g) => g.methods), counts: Record<string, number> = {};
  for (const m of methods) counts[m] = (counts[m] ?? 0) + 1;
  for (const k of Object.keys(counts)) counts[k] /= methods.length;
  return counts;
}

/**
 * One Adam step on one mini-batch: the core gives dLogp at the current logp; autodiff does the rest. With
 * synchronous reads the loss closure reads logp inside the tape; on webgpu a forward pass is read with `await
 * data()` first: the same update (the forward is deterministic) at the cost of one more forward pass.
 */
async function updateMiniBatch(ctx: RlContext, mb: MiniBatch<Int32Array>, request: UpdateRequest) {
  const P = ctx.settings.model.promptLength;
  const tokens = tf.tensor2d(mb.rows, [mb.B, P + mb.T], "int32");
  const w = tf.tensor2d(Float32Array.from(request.weights), [mb.B, mb.T]);
  const outputs = () => {
    const out = tokenLogProbs(ctx.model, tokens, { entropy: true });
    return { logp: responseSlice(out.logp, P, mb.T), entropy: responseSlice(out.entropy!, P, mb.T) };
  };
  // The scalar whose gradient is the core's: sum(dLogp ⊙ logp) − entropyCoef · sum(w ⊙ entropy).
  const surrogate = (core: CoreLoss, out: ReturnType<typeof outputs>) => {
    const dLogp = tf.tensor(Float32Array.from(core.dLogp), out.logp.shape), coef = request.entropyCoef;
    return tf.sub(tf.sum(tf.mul(dLogp, out.logp)), tf.mul(coef, tf.sum(tf.mul(w, out.entropy)))) as tf.Scalar;
  };
  try {
    if (!(ctx.twoPassUpdate ?? !readsSync())) {
      return trainStep(ctx.model, ctx.opt, () => {
        const out = outputs();
        // The core needs the values at the current parameters: constants for the surrogate's gradient.
        return surrogate(request.lossAt(out.logp.dataSync(), out.entropy.dataSync()), out);
      }).gradNorm;
    }
    const first = tf.tidy(outputs);
    let core: CoreLoss;
    try {
      core = request.lossAt(await first.logp.data(), await first.entropy.data());
    } finally {
      tf.dispose([first.logp, first.entropy]);
    }
    return (await trainStepAsync(ctx.model, ctx.opt, () => surrogate(core, outputs()))).gradNorm;
  } finally {
    tf.dispose([tokens, w]);
  }
}

type CoreLoss = ReturnType<UpdateRequest["lossAt"]>;
