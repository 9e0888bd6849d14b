// Shared by the tfjs engine tests: a tiny RL context, a batch of sampled rollouts with non-trivial advantages,
// run configs and their metrics, seeded random tensors.
import { gradingOf } from "../../../../bench/engines/registry.ts";
import * as tf from "@tensorflow/tfjs-core";
import { join } from "node:path";
import { readJsonl } from "../../../../common/fs.ts";
import { Rng } from "../../../../common/prng.ts";
import { groupIdsOf, resolveAlgo, type UpdateResult } from "../../../../bench/core/mod.ts";
import { updatePolicy as loopUpdate } from "../../../../bench/engines/loop.ts";
import { createModel, createOptimizer, sampleAsync } from "../../../../bench/engines/tfjs/model.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import { resolveTfjsRun } from "../../../../bench/engines/tfjs/engine.ts";
import { type RlContext, tfjsPolicy } from "../../../../bench/engines/tfjs/rl.ts";
import {
  modelConfig,
  presetSettings,
  settingsTokenizer,
  taskSets,
  type TfjsSettings,
} from "../../../../bench/engines/tfjs/settings.ts";
import { encodePrompts } from "../../../../bench/engines/tfjs/tokenizer.ts";
import { renderPrompt } from "../../../../bench/engines/tfjs/traces.ts";

/** Policy (seed 1), reference (seed 2), Adam, and ACE-GRPO with KL and an entropy bonus over 2 mini-batches. */
export function rlContext(twoPassUpdate?: boolean): RlContext {
  const settings = presetSettings("tiny");
  settings.rl.miniBatches = 2;
  const tok = settingsTokenizer(settings);
  const model = createModel(modelConfig(settings, tok), Rng.seeded(1));
  const ref = createModel(modelConfig(settings, tok), Rng.seeded(2));
  const opt = createOptimizer(model, { lr: settings.rl.lr, clipNorm: settings.rl.clipNorm });
  const algo = resolveAlgo("ace-grpo", { entropyCoef: 0.01 });
  const train = taskSets(settings).train;
  const grader = gradingOf("tfjs", null, settings as unknown as Record<string, unknown>);
  return { model, ref, opt, tok, train, settings, algo, rng: Rng.seeded(3), twoPassUpdate, grader };
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

/** The step's updates on a batch of whole groups (mini-batches split on G): mean loss and metrics, last grad norm. */
export async function updatePolicy(
  ctx: RlContext,
  batch: Batch,
): Promise<UpdateResult & { gradNorm: number }> {
  const { tokens, N, ...rest } = batch;
  const groupIds = groupIdsOf(Array(batch.B / ctx.settings.rl.groupSize).fill(ctx.settings.rl.groupSize));
  const result = await loopUpdate(tfjsPolicy(ctx), { ...rest, rows: tokens, T: N }, groupIds, ctx.algo);
  return { ...result, gradNorm: result.gradNorm ?? NaN }; // tfjs always measures it
}

/**
 * 4 groups × 4 rollouts sampled from the policy; advantages ±(0.5..1.5) by rollout, reference log-probs shifted
 * by seeded noise so KL and c_i are non-zero. Same context seed, same batch.
 */
export async function rolloutBatch(ctx: RlContext): Promise<Batch> {
  const P = ctx.settings.model.promptLength, N = ctx.settings.rl.maxNewTokens, B = 16;
  const rng = Rng.seeded(4);
  const prompts = encodePrompts(ctx.tok, ctx.train.slice(0, B).map(renderPrompt), P);
  const out = await sampleAsync(ctx.model, prompts, B, {
    maxNew: N,
    temperature: 1,
    topP: 1,
    rng,
    eos: ctx.tok.eos,
  });
  const mask = Float32Array.from(
    { length: B * N },
    (_, i) => (i % N < out.lengths[Math.floor(i / N)] ? 1 : 0),
  );
  const oldLogp = Float32Array.from(out.logp, (v, i) => (mask[i] ? v : 0));
  const refLogp = Float32Array.from(oldLogp, (v, i) => (mask[i] ? v + 0.3 * rng.normal() : 0));
  const advantages = Float64Array.from({ length: B }, (_, i) => (i % 2 ? 1 : -1) * (0.5 + rng.float()));
  return { tokens: out.tokens, oldLogp, refLogp, mask, advantages, B, N };
}

/** A tfjs run of `preset` (its default algorithm) with `seed` on `settings`, resolved as the sweep runner does. */
export function runConfig(
  settings: Record<string, unknown>,
  preset: string,
  seed: number,
  evalSpec: RunConfig["eval"],
  runId = `${preset}_s${seed}`,
): RunConfig<TfjsSettings> {
  return resolveTfjsRun({
    runId,
    engine: "tfjs",
    method: preset,
    preset,
    seed,
    base: 0,
    algo: resolveAlgo(preset),
    settings,
    eval: evalSpec,
  });
}

/** metrics.jsonl without wall-clock fields, which legitimately differ between runs. */
export function metricsOf(runDir: string): Record<string, unknown>[] {
  return readJsonl<Record<string, unknown>>(join(runDir, "metrics.jsonl")).map((
    { sample_s: _a, update_s: _b, ...m },
  ) => m);
}

/** A float32 tensor of the given shape with standard-normal entries drawn from Rng.seeded(seed). */
export function randomTensor(shape: number[], seed: number): tf.Tensor {
  const rng = Rng.seeded(seed);
  return tf.tensor(Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()), shape);
}
