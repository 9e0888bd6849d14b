import * as tf from "@tensorflow/tfjs-core";
import { assert, assertEquals } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  getWeightsAsync,
  initBackend,
  type ModelConfig,
  sample,
  sampleAsync,
  setWeights,
  trainStep,
} from "../../../../bench/engines/tfjs/model.ts";
import {
  DataParallelTrainer,
  fullBatch,
  type MaskedBatch,
  maskedNll,
  SamplerPool,
} from "../../../../bench/engines/tfjs/parallel.ts";
import {
  modelConfig,
  presetSettings,
  settingsTokenizer,
  taskSets,
} from "../../../../bench/engines/tfjs/settings.ts";
import { sftWorkers, trainSft } from "../../../../bench/engines/tfjs/sft.ts";

const cfg: ModelConfig = { vocab: 11, dModel: 16, heads: 2, layers: 2, context: 12 };
await initBackend("wasm");

/** A 5-row batch with a ragged mask over the last 6 log-prob columns (rows split unevenly over 2 workers). */
function batch(seed: number): MaskedBatch {
  const rng = Rng.seeded(seed), rows = 5, cols = 10, maskCols = 6;
  const tokens = Int32Array.from({ length: rows * cols }, () => rng.int(cfg.vocab));
  const mask = Float32Array.from({ length: rows * maskCols }, (_, i) => (i % maskCols) < 2 + (i % 5) ? 1 : 0);
  return { tokens, rows, cols, mask, maskStart: cols - 1 - maskCols, maskCols };
}

/** ‖a − b‖ / ‖b‖ over flat arrays. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0, n = 0;
  for (let i = 0; i < b.length; i++) {
    d += (a[i] - b[i]) ** 2;
    n += b[i] ** 2;
  }
  return Math.sqrt(d / n);
}

function flatWeights(w: Record<string, { data: Float32Array }>): number[] {
  return Object.values(w).flatMap((t) => [...t.data]);
}

/** Single-process step on the same masked loss. */
async function singleStep(b: MaskedBatch, steps: number): Promise<{ weights: number[]; loss: number }> {
  const model = createModel(cfg, Rng.seeded(1));
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 1 });
  let loss = 0;
  for (let s = 0; s < steps; s++) loss = trainStep(model, opt, () => maskedNll(model, b)).loss;
  const weights = flatWeights(await getWeightsAsync(model));
  disposeModel(model);
  return { weights, loss };
}

async function parallelSteps(b: MaskedBatch, steps: number, workers = 2) {
  const model = createModel(cfg, Rng.seeded(1));
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 1 });
  const trainer = await DataParallelTrainer.create(model, opt, workers);
  try {
    let loss = 0;
    for (let s = 0; s < steps; s++) loss = (await trainer.step(b)).loss;
    return { weights: flatWeights(await getWeightsAsync(model)), loss };
  } finally {
    trainer.close();
    assertEquals(trainer.workers, 0); // every worker terminated (the test sanitizers also catch leaks)
    disposeModel(model);
  }
}

Deno.test("parallel: 2-worker gradient equals the single-process gradient", async () => {
  const b = batch(3);
  const model = createModel(cfg, Rng.seeded(1));
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 0 });
  const trainer = await DataParallelTrainer.create(model, opt, 2);
  try {
    const { loss, grads } = await trainer.gradients(b);
    const vars = [...model.params.values()];
    const ref = tf.variableGrads(() => maskedNll(model, b), vars);
    const refFlat = vars.flatMap((v) => [...ref.grads[v.name].dataSync()]);
    const gotFlat = grads.flatMap((g) => [...g]);
    assert(relErr(gotFlat, refFlat) < 1e-5, `gradient rel err ${relErr(gotFlat, refFlat)}`);
    assert(Math.abs(loss - ref.value.dataSync()[0]) < 1e-5 * Math.abs(loss), "loss");
    tf.dispose([ref.value, ...Object.values(ref.grads)]);
  } finally {
    trainer.close();
    disposeModel(model);
  }
});

Deno.test("parallel: 2-worker updates equal single-process updates; same seed, identical weights", async () => {
  const b = batch(4);
  const single = await singleStep(b, 3);
  const a = await parallelSteps(b, 3), c = await parallelSteps(b, 3);
  assert(relErr(a.weights, single.weights) < 1e-5, `weights rel err ${relErr(a.weights, single.weights)}`);
  assert(Math.abs(a.loss - single.loss) < 1e-5 * single.loss, `loss ${a.loss} vs ${single.loss}`);
  assertEquals(a.weights, c.weights);
});

Deno.test("parallel: more workers than rows, and the plain full-batch loss", async () => {
  const rng = Rng.seeded(5);
  const b = fullBatch(Int32Array.from({ length: 2 * 8 }, () => rng.int(cfg.vocab)), 2, 8);
  const single = await singleStep(b, 1);
  const p = await parallelSteps(b, 1, 3);
  assert(relErr(p.weights, single.weights) < 1e-5);
});

Deno.test("parallel: a bad worker count is rejected", async () => {
  const model = createModel(cfg, Rng.seeded(1));
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 0 });
  let threw = false;
  try {
    await DataParallelTrainer.create(model, opt, 0);
  } catch (e) {
    threw = /workers must be a positive integer/.test((e as Error).message);
  }
  assert(threw);
  disposeModel(model);
});

Deno.test("parallel SFT: the same seed and worker count give identical weights", async () => {
  const s = presetSettings("tiny");
  s.sft.steps = 3;
  s.sft.workers = 2;
  const tok = settingsTokenizer(s), train = taskSets(s).train;
  const run = async () => {
    const rng = Rng.seeded(7);
    const model = createModel(modelConfig(s, tok), rng.derive("init"));
    const log = await trainSft(model, tok, train, s, rng);
    const w = flatWeights(await getWeightsAsync(model));
    disposeModel(model);
    return { log, w };
  };
  const a = await run(), b = await run();
  assertEquals(sftWorkers(s), 2);
  assertEquals(a.log, b.log);
  assertEquals(a.w, b.w);
});

Deno.test("parallel sampling: the pool's samples equal single-process samples bit for bit", async () => {
  const model = createModel(cfg, Rng.seeded(31));
  // Larger weights than the init so the distribution is far from uniform and eos is actually drawn.
  const w = await getWeightsAsync(model), noise = Rng.seeded(32);
  for (const v of Object.values(w)) for (let i = 0; i < v.data.length; i++) v.data[i] += 0.3 * noise.normal();
  setWeights(model, w);
  const rows = 7, p = 3, rng = Rng.seeded(33);
  const prompts = Int32Array.from({ length: rows * p }, () => rng.int(cfg.vocab));
  const opts = (topP: number) => ({ maxNew: 8, temperature: 1.5, topP, rng: Rng.seeded(34), eos: 2 });
  const want = [sample(model, prompts, rows, opts(1)), sample(model, prompts, rows, opts(0.8))];
  const other = createModel({ ...cfg, layers: 1 }, Rng.seeded(35));
  const pool = await SamplerPool.start(model, 2, 1);
  try {
    assertEquals(await sampleAsync(model, prompts, rows, opts(1)), want[0]);
    assertEquals(await sampleAsync(model, prompts, rows, opts(0.8)), want[1]);
    // Another shape runs in this process, and still gives its single-process result.
    assertEquals(await sampleAsync(other, prompts, rows, opts(1)), sample(other, prompts, rows, opts(1)));
    assertEquals(pool.served, 2);
  } finally {
    pool.close();
    assertEquals(pool.workers, 0);
  }
  assertEquals(await sampleAsync(model, prompts, rows, opts(1)), want[0]); // local again after close
  disposeModel(model);
  disposeModel(other);
});
