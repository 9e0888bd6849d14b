// SFT: train the base model on solution traces drawn from the method mix (next-token loss on the response only).
import * as tf from "@tensorflow/tfjs-core";
import type { MathRecord } from "../../../datasets/mod.ts";
import { Rng } from "../../../common/prng.ts";
import { exists } from "../../../common/fs.ts";
import {
  createOptimizer,
  getOptimizerStateAsync,
  getWeightsAsync,
  type Model,
  type OptimizerState,
  setOptimizerState,
  setWeights,
  type StepResult,
  type TensorData,
  trainStepAsync,
} from "./model.ts";
import { disposeOptimizer } from "./model/adam.ts";
import { loadLatestCheckpoint, saveCheckpoint } from "./checkpoint.ts";
import { coreCount, DataParallelTrainer, type MaskedBatch, maskedNll } from "./parallel.ts";
import { trainsDataParallel } from "./backend.ts";
import type { TfjsSettings } from "./settings.ts";
import { encodePrompts, type Tokenizer } from "./tokenizer.ts";
import { type Method, methodsOf, renderPrompt, renderTrace } from "./traces.ts";

/** One training example: the record and the method whose trace is the target. */
interface Example {
  record: MathRecord;
  method: Method;
}

/** Draw `count` examples: a uniform training problem, then a method by the mix weights of its family. */
function drawExamples(train: readonly MathRecord[], s: TfjsSettings, rng: Rng, count: number): Example[] {
  // Per family, its methods of weight > 0 and their weights.
  const mix = new Map(s.tasks.families.map((family) => {
    const methods = methodsOf(family).filter((m) => (s.sft.mix[`${family}/${m.name}`] ?? 0) > 0);
    return [family, { methods, weights: methods.map((m) => s.sft.mix[`${family}/${m.name}`]) }];
  }));
  return Array.from({ length: count }, () => {
    const record = train[rng.int(train.length)];
    const { methods, weights } = mix.get(record.meta.family as string)!;
    return { record, method: methods[rng.categorical(weights)] };
  });
}

/** Token ids of a method's trace of `record` and EOS; throws when they do not fit the response budget `maxNew`. */
export function traceIds(tok: Tokenizer, record: MathRecord, method: Method, maxNew: number): number[] {
  const ids = [...tok.encode(renderTrace(method, record.meta.params ?? {}).text), tok.eos];
  if (ids.length > maxNew) {
    throw new Error(
      `trace of ${record.id} by ${method.name} needs ${ids.length} tokens; rl.maxNewTokens is ${maxNew}`,
    );
  }
  return ids;
}

/**
 * The masked batch of `examples`: token rows [B, T] (left-padded prompt, trace, EOS, right PAD) and the loss mask
 * [B, N] over the response tokens including EOS, where N is the longest response of the batch and
 * T = promptLength + N (padding columns that no row uses are not computed).
 */
function encodeExamples(tok: Tokenizer, examples: readonly Example[], promptLength: number, maxNew: number) {
  const responses = examples.map((e) => traceIds(tok, e.record, e.method, maxNew));
  const B = examples.length, N = Math.max(...responses.map((r) => r.length)), T = promptLength + N;
  const prompts = encodePrompts(tok, examples.map((e) => renderPrompt(e.record)), promptLength);
  const tokens = new Int32Array(B * T).fill(tok.pad);
  const mask = new Float32Array(B * N);
  responses.forEach((response, b) => {
    tokens.set(prompts.subarray(b * promptLength, (b + 1) * promptLength), b * T);
    tokens.set(response, b * T + promptLength);
    mask.fill(1, b * N, b * N + response.length);
  });
  return { tokens, rows: B, cols: T, mask, maskStart: promptLength - 1, maskCols: N } satisfies MaskedBatch;
}

/** Response log-probs [B, maxNew] from the model's [B, T−1] next-token log-probs (response starts at promptLength). */
export function responseSlice(full: tf.Tensor2D, promptLength: number, maxNew: number): tf.Tensor2D {
  return tf.slice(full, [0, promptLength - 1], [full.shape[0], maxNew]);
}

/** Learning rate at `step` (0-based): linear warmup, then cosine decay to 10% of `lr` at `total`. */
function lrAt(step: number, total: number, lr: number, warmup: number): number {
  if (step < warmup) return lr * (step + 1) / warmup;
  const progress = total > warmup ? (step - warmup) / (total - warmup) : 1;
  return lr * (0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI * Math.min(1, progress))));
}

/** One SFT log line: a step's loss and pre-clipping gradient norm, and its learning rate. */
type SftLog = { step: number } & StepResult & { lr: number };

/** SFT steps between checkpoints when `sft.checkpointEvery` is absent. */
const SFT_CHECKPOINT_EVERY = 100;

/** An SFT checkpoint: everything the next step depends on (weights, Adam state, the data stream, the log). */
interface SftCheckpoint {
  step: number;
  weights: Record<string, TensorData>;
  optimizer: OptimizerState;
  rng: number[];
  log: SftLog[];
}

/** Workers SFT uses: `sft.workers` (0 = one per core) on the CPU backends, 1 (single process) on the others. */
export function sftWorkers(s: TfjsSettings): number {
  if (!trainsDataParallel()) return 1;
  return s.sft.workers === 0 ? coreCount() : s.sft.workers;
}

/**
 * Train `model` in place for `s.sft.steps` steps on traces of `train`; returns the log (every 10th step and the
 * last). The mean token NLL over response tokens is the loss; a non-finite loss throws naming the step. With
 * more than one worker (`sftWorkers`) each step is data-parallel (parallel.ts), deterministic per worker count.
 * With `checkpointDir`, every `sft.checkpointEvery` steps the state goes there atomically, and a call finding a
 * checkpoint there continues from it bit-for-bit (the caller removes the folder once the trained model is saved).
 */
export async function trainSft(
  model: Model,
  tok: Tokenizer,
  train: readonly MathRecord[],
  s: TfjsSettings,
  rng: Rng,
  onStep: (step: number, total: number) => void = () => {},
  checkpointDir?: string,
): Promise<SftLog[]> {
  const opt = createOptimizer(model, { lr: s.sft.lr, clipNorm: s.sft.clipNorm });
  const P = s.model.promptLength, total = s.sft.steps;
  let log: SftLog[] = [], start = 0;
  const resumed = checkpointDir && exists(checkpointDir)
    ? loadLatestCheckpoint<SftCheckpoint>(checkpointDir)
    : null;
  if (resumed) {
    setWeights(model, resumed.value.weights);
    setOptimizerState(opt, resumed.value.optimizer);
    rng = Rng.fromState(resumed.value.rng);
    log = resumed.value.log;
    start = resumed.step;
    onStep(start, total);
  }
  const every = s.sft.checkpointEvery ?? SFT_CHECKPOINT_EVERY;
  const workers = sftWorkers(s);
  const trainer = workers > 1 && total > start ? await DataParallelTrainer.create(model, opt, workers) : null;
  try {
    for (let step = start; step < total; step++) {
      const mb = encodeExamples(tok, drawExamples(train, s, rng, s.sft.batchSize), P, s.rl.maxNewTokens);
      opt.lr = lrAt(step, total, s.sft.lr, s.sft.warmupSteps);
      const { loss, gradNorm } = trainer
        ? await trainer.step(mb)
        : await trainStepAsync(model, opt, () => maskedNll(model, mb));
      if (!Number.isFinite(loss)) {
        throw new Error(`SFT step ${step}: loss is ${loss} (gradient norm ${gradNorm})`);
      }
      if (step % 10 === 0 || step === total - 1) log.push({ step, loss, gradNorm, lr: opt.lr });
      if (checkpointDir && (step + 1) % every === 0 && step + 1 < total) {
        const state: SftCheckpoint = {
          step: step + 1,
          weights: await getWeightsAsync(model),
          optimizer: await getOptimizerStateAsync(opt),
          rng: rng.state(),
          log,
        };
        saveCheckpoint(checkpointDir, step + 1, state);
      }
      onStep(step + 1, total);
    }
  } finally {
    trainer?.close();
  }
  disposeOptimizer(opt);
  return log;
}
