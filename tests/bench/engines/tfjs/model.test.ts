import * as tf from "@tensorflow/tfjs-core";
import { assert, assertClose, assertEquals, throws } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  drawScored,
  drawToken,
  getOptimizerStateAsync,
  getWeightsAsync,
  initBackend,
  type Model,
  type ModelConfig,
  sample,
  sampleAsync,
  type SampleOptions,
  setOptimizerState,
  setWeights,
  tokenLogProbs,
  trainStep,
  trainStepAsync,
} from "../../../../bench/engines/tfjs/model.ts";
import { layerNorm, linear, useFusedLayerNorm } from "../../../../bench/engines/tfjs/model/ops.ts";
import { useFusedAdam } from "../../../../bench/engines/tfjs/model/adam.ts";
import { referenceLogProbs } from "./model_reference.ts";

const cfg: ModelConfig = { vocab: 11, dModel: 16, heads: 2, layers: 2, context: 12 };
await initBackend("wasm");

/** Random int tokens [b, t] from a seed. */
function randomTokens(b: number, t: number, seed: number, vocab = cfg.vocab): number[][] {
  const rng = Rng.seeded(seed);
  return Array.from({ length: b }, () => Array.from({ length: t }, () => rng.int(vocab)));
}

function logProbs(
  model: Model,
  rows: number[][],
  entropy = false,
): { logp: number[][]; entropy?: number[][] } {
  return tf.tidy(() => {
    const out = tokenLogProbs(model, tf.tensor2d(rows, undefined, "int32"), { entropy });
    return { logp: out.logp.arraySync(), entropy: out.entropy?.arraySync() };
  });
}

/** A model with non-trivial LayerNorm gains/biases too (fresh ones are 1/0, which would hide mistakes). */
async function perturbedModel(seed: number): Promise<Model> {
  const m = createModel(cfg, Rng.seeded(seed));
  const rng = Rng.seeded(seed + 1), w = await getWeightsAsync(m);
  for (const v of Object.values(w)) for (let i = 0; i < v.data.length; i++) v.data[i] += 0.3 * rng.normal();
  setWeights(m, w);
  return m;
}

Deno.test("model: shapes of log-probs, entropy and samples", () => {
  const m = createModel(cfg, Rng.seeded(1));
  const out = logProbs(m, randomTokens(3, 7, 2), true);
  assertEquals([out.logp.length, out.logp[0].length], [3, 6]);
  assertEquals([out.entropy!.length, out.entropy![0].length], [3, 6]);
  for (const r of out.logp) for (const v of r) assert.ok(v <= 0 && Number.isFinite(v));
  for (const r of out.entropy!) for (const v of r) assert.ok(v >= 0 && v <= Math.log(cfg.vocab) + 1e-4);
  const s = sample(m, new Int32Array(3 * 4), 3, { maxNew: 5, temperature: 1, topP: 1, rng: Rng.seeded(3) });
  assertEquals([s.tokens.length, s.logp.length, [...s.lengths]], [27, 15, [5, 5, 5]]);
  disposeModel(m);
});

Deno.test("model: log-probs match a direct float64 computation", async () => {
  const m = await perturbedModel(4);
  const rows = randomTokens(2, 9, 5);
  const got = logProbs(m, rows).logp, w = await getWeightsAsync(m);
  rows.forEach((row, b) => {
    referenceLogProbs(cfg, w, row).forEach((want, t) =>
      assertClose(got[b][t], want, 2e-4, `logp[${b}][${t}]`)
    );
  });
  disposeModel(m);
});

Deno.test("model: causal — changing a token never changes log-probs of earlier positions", async () => {
  const m = await perturbedModel(6);
  const rows = randomTokens(1, 10, 7);
  const base = logProbs(m, rows).logp[0];
  for (const j of [3, 6, 9]) {
    const changed = rows.map((r) => r.slice());
    changed[0][j] = (changed[0][j] + 1) % cfg.vocab;
    const after = logProbs(m, changed).logp[0];
    for (let t = 0; t < j - 1; t++) {
      assertClose(after[t], base[t], 1e-6, `logp[${t}] after changing token ${j}`);
    }
    assert.ok(Math.abs(after[j - 1] - base[j - 1]) > 1e-6, `logp[${j - 1}] should see token ${j}`);
  }
  disposeModel(m);
});

Deno.test("model: KV-cached sampling log-probs agree with the uncached forward", async () => {
  const m = await perturbedModel(8);
  const b = 4, p = 3, maxNew = 9, prompts = new Int32Array(randomTokens(b, p, 9).flat());
  const s = sample(m, prompts, b, { maxNew, temperature: 1.3, topP: 0.9, rng: Rng.seeded(10) });
  const rows = Array.from(
    { length: b },
    (_, r) => [...s.tokens.subarray(r * (p + maxNew), (r + 1) * (p + maxNew))],
  );
  for (let r = 0; r < b; r++) assertEquals(rows[r].slice(0, p), [...prompts.subarray(r * p, (r + 1) * p)]);
  const full = logProbs(m, rows).logp;
  for (let r = 0; r < b; r++) {
    for (let i = 0; i < maxNew; i++) {
      assertClose(s.logp[r * maxNew + i], full[r][p - 1 + i], 2e-4, `row ${r} token ${i}`);
    }
  }
  disposeModel(m);
});

Deno.test("model: eos stops a row, fills it with eos and counts it in lengths", async () => {
  const m = await perturbedModel(11);
  const eos = 2, b = 16, p = 2, maxNew = 8;
  const s = sample(m, new Int32Array(b * p).fill(1), b, {
    maxNew,
    temperature: 2,
    topP: 1,
    rng: Rng.seeded(12),
    eos,
  });
  let stopped = 0;
  for (let r = 0; r < b; r++) {
    const gen = [...s.tokens.subarray(r * (p + maxNew) + p, (r + 1) * (p + maxNew))];
    const first = gen.indexOf(eos);
    assertEquals(s.lengths[r], first < 0 ? maxNew : first + 1);
    if (first >= 0) {
      stopped++;
      assert.ok(gen.slice(first).every((t) => t === eos));
      for (let i = first + 1; i < maxNew; i++) assertEquals(s.logp[r * maxNew + i], 0);
    }
  }
  assert.ok(stopped > 0, "with temperature 2 over 11 tokens some of 16 rows should emit eos within 8 steps");
  disposeModel(m);
});

/** Hot sampling (temperature 2, top-p 0.95, 9 new tokens, eos 2, seed 15) that ends rows at many lengths. */
function hotSampling(extra: Partial<SampleOptions>): SampleOptions {
  return { maxNew: 9, temperature: 2, topP: 0.95, rng: Rng.seeded(15), eos: 2, ...extra };
}

Deno.test("model: finished rows leave the batch without changing any row (wasm rows are batch-invariant)", async () => {
  const m = await perturbedModel(13);
  const b = 40, p = 3, prompts = new Int32Array(randomTokens(b, p, 14).flat());
  const opts = (compact: boolean) => hotSampling({ compact });
  const before = tf.memory().numTensors;
  const full = sample(m, prompts, b, opts(false)), compacted = sample(m, prompts, b, opts(true));
  assertEquals(tf.memory().numTensors, before);
  const ends = new Set(full.lengths);
  assert.ok(ends.size >= 4 && Math.min(...full.lengths) <= 3, `rows end at ${[...ends]}: too few to compact`);
  assertEquals(compacted, full);
  assertEquals(await sampleAsync(m, prompts, b, opts(true)), full);
  disposeModel(m);
});

Deno.test("model: a row's sample depends only on its prompt and its own stream, not on its batch", async () => {
  const m = await perturbedModel(13);
  const b = 40, p = 3, prompts = new Int32Array(randomTokens(b, p, 14).flat());
  const opts = (firstRow: number) => hotSampling({ firstRow });
  const whole = sample(m, prompts, b, opts(0));
  const total = p + 9;
  for (const [from, to] of [[0, 1], [7, 19], [19, 40]]) {
    const part = sample(m, prompts.slice(from * p, to * p), to - from, opts(from));
    assertEquals(part.tokens, whole.tokens.slice(from * total, to * total), `rows ${from}..${to}`);
    assertEquals(part.lengths, whole.lengths.slice(from, to));
  }
  // The stream is not advanced: the same options give the same samples again.
  assertEquals(sample(m, prompts, b, opts(0)), whole);
  disposeModel(m);
});

Deno.test("model: two close policies sampled with one stream draw mostly the same rows (common random numbers)", async () => {
  const a = await perturbedModel(13), b = await perturbedModel(13);
  const rng = Rng.seeded(16), w = await getWeightsAsync(b);
  for (const v of Object.values(w)) for (let i = 0; i < v.data.length; i++) v.data[i] += 0.001 * rng.normal();
  setWeights(b, w);
  const rows = 200, prompts = new Int32Array(randomTokens(rows, 3, 14).flat()), total = 3 + 8;
  const draw = (m: Model, seed: number) =>
    sample(m, prompts, rows, { maxNew: 8, temperature: 1, topP: 1, rng: Rng.seeded(seed), eos: 2 }).tokens;
  const same = (x: Int32Array, y: Int32Array) =>
    Array.from({ length: rows }, (_, r) => r).filter((r) =>
      x.slice(r * total, (r + 1) * total).every((t, i) => t === y[r * total + i])
    ).length;
  const coupled = same(draw(a, 17), draw(b, 17)), independent = same(draw(a, 17), draw(b, 18));
  assert.ok(coupled >= 0.75 * rows, `one stream: ${coupled}/${rows} rows identical`);
  assert.ok(independent <= 0.05 * rows, `two streams: ${independent}/${rows} rows identical`);
  [a, b].forEach(disposeModel);
});

Deno.test("model: same seed gives the same weights and samples; different seed differs", async () => {
  const a = createModel(cfg, Rng.seeded(13)),
    b = createModel(cfg, Rng.seeded(13)),
    c = createModel(cfg, Rng.seeded(14));
  assertEquals(await getWeightsAsync(a), await getWeightsAsync(b));
  assert.notDeepStrictEqual((await getWeightsAsync(a)).wte.data, (await getWeightsAsync(c)).wte.data);
  const prompts = new Int32Array(randomTokens(3, 2, 15).flat());
  const opts = () => ({ maxNew: 6, temperature: 1, topP: 0.95, rng: Rng.seeded(16) });
  assertEquals(sample(a, prompts, 3, opts()), sample(b, prompts, 3, opts()));
  [a, b, c].forEach(disposeModel);
});

Deno.test("model: weights and optimizer state round-trip; resumed training matches bit for bit", async () => {
  const rows = tf.tensor2d(randomTokens(4, 8, 17), undefined, "int32");
  const loss = (m: Model) => () => tf.neg(tf.mean(tokenLogProbs(m, rows).logp)) as tf.Scalar;
  const a = createModel(cfg, Rng.seeded(18)), optA = createOptimizer(a, { lr: 1e-2, clipNorm: 0.5 });
  trainStep(a, optA, loss(a));
  trainStep(a, optA, loss(a));
  const saved = { w: await getWeightsAsync(a), o: await getOptimizerStateAsync(optA) };
  const stepA = trainStep(a, optA, loss(a));
  const b = createModel(cfg, Rng.seeded(99)), optB = createOptimizer(b, { lr: 1e-2, clipNorm: 0.5 });
  setWeights(b, saved.w);
  setOptimizerState(optB, saved.o);
  const stepB = trainStep(b, optB, loss(b));
  assertEquals(stepB, stepA);
  assertEquals(await getWeightsAsync(b), await getWeightsAsync(a));
  assertEquals(await getOptimizerStateAsync(optB), await getOptimizerStateAsync(optA));
  const bad = await getWeightsAsync(a);
  bad.wte = { shape: [1, 2], data: new Float32Array(2) };
  throws(() => setWeights(b, bad), /weights: 'wte' has shape \[1,2\]/);
  [a, b].forEach(disposeModel);
  rows.dispose();
});

Deno.test("model: training lowers the loss on memorised rows", () => {
  // vocab 12: every matrix width a multiple of 4, so all SIMD kernels (tied head included) are on the path
  const m = createModel({ ...cfg, vocab: 12 }, Rng.seeded(20)),
    opt = createOptimizer(m, { lr: 3e-3, clipNorm: 1 });
  const rows = tf.tensor2d(randomTokens(8, 10, 21), undefined, "int32");
  const loss = () => tf.neg(tf.mean(tokenLogProbs(m, rows).logp)) as tf.Scalar;
  const first = trainStep(m, opt, loss);
  let last = first;
  for (let i = 0; i < 60; i++) last = trainStep(m, opt, loss);
  assert.ok(
    last.loss < first.loss - 0.5,
    `loss ${first.loss} → ${last.loss} should drop on 8 memorised rows`,
  );
  assert.ok(first.gradNorm > 0 && Number.isFinite(first.gradNorm));
  rows.dispose();
  disposeModel(m);
});

Deno.test("model: hand-written gradients of linear and layerNorm match tfjs autodiff", () => {
  const rng = Rng.seeded(22);
  const rand = (shape: number[]) =>
    tf.tensor(Array.from({ length: shape.reduce((a, b) => a * b) }, () => rng.normal()), shape);
  const x = rand([5, 6]) as tf.Tensor2D, w = rand([6, 3]) as tf.Tensor2D, g = rand([6]) as tf.Tensor1D;
  const bias = rand([6]) as tf.Tensor1D, dy3 = rand([5, 3]), dy6 = rand([5, 6]);
  const close = (a: tf.Tensor, b: tf.Tensor, what: string) =>
    (a.dataSync() as Float32Array).forEach((v, i) => assertClose(v, b.dataSync()[i], 1e-4, `${what}[${i}]`));
  const mine = tf.grads((a: tf.Tensor, b: tf.Tensor) =>
    tf.sum(tf.mul(linear(a as tf.Tensor2D, b as tf.Tensor2D), dy3))
  )([x, w]);
  const auto = tf.grads((a: tf.Tensor, b: tf.Tensor) =>
    tf.sum(tf.mul(tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D), dy3))
  )([x, w]);
  mine.forEach((t, i) => close(t, auto[i], `linear grad ${i}`));
  const plainLn = (a: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => {
    const { mean, variance } = tf.moments(a, -1, true);
    return tf.add(tf.mul(tf.div(tf.sub(a, mean), tf.sqrt(tf.add(variance, 1e-5))), gg), bb);
  };
  close(layerNorm(x, g, bias), plainLn(x, g, bias), "layerNorm value");
  const lnMine = tf.grads((a: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) =>
    tf.sum(tf.mul(layerNorm(a as tf.Tensor2D, gg as tf.Tensor1D, bb as tf.Tensor1D), dy6))
  )([x, g, bias]);
  const lnAuto = tf.grads((a: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) =>
    tf.sum(tf.mul(plainLn(a, gg, bb), dy6))
  )([x, g, bias]);
  lnMine.forEach((t, i) => close(t, lnAuto[i], `layerNorm grad ${i}`));
});

Deno.test("model: drawToken honours temperature 0, top-p and the uniform", () => {
  const logits = [0, 3, 1, 2.9];
  assertEquals(drawToken(logits, 0, 1, 0.99), 1);
  assertEquals(drawToken(logits, 1, 0.01, 0.99), 1); // nucleus of one token
  const seen = new Set([0, 0.2, 0.4, 0.6, 0.8, 0.99].map((u) => drawToken(logits, 1, 0.8, u)));
  assertEquals([...seen].sort(), [1, 3]); // the two top tokens hold > 80% of the mass
  const all = new Set(Array.from({ length: 1000 }, (_, i) => drawToken(logits, 1, 1, i / 1000)));
  assertEquals([...all].sort(), [0, 1, 2, 3]); // no truncation at topP 1
  // the fraction of uniforms mapped to each token is its softmax probability
  const z = logits.reduce((a, l) => a + Math.exp(l), 0);
  const share =
    Array.from({ length: 10000 }, (_, i) => drawToken(logits, 1, 1, i / 10000)).filter((t) => t === 2).length;
  assertClose(share / 10000, Math.exp(1) / z, 1e-3, "share of token 2");
});

Deno.test("model: drawScored is drawToken and the token's log-softmax, bit for bit, in one pass at temperature 1", () => {
  /** The two-pass form sampling used before: a max by Math.max, Σ exp(x − max), then the token's log-prob. */
  const logSoftmaxAt = (l: Float32Array, i: number) => {
    let max = -Infinity;
    for (const x of l) max = Math.max(max, x);
    let z = 0;
    for (const x of l) z += Math.exp(x - max);
    return l[i] - max - Math.log(z);
  };
  const rng = Rng.seeded(11);
  const rows = Array.from({ length: 200 }, (_, r) => {
    const row = Float32Array.from({ length: 98 }, () => (r % 3 + 1) * rng.normal());
    if (r % 10 === 0) row.fill(-2).set([-0, 0, -0], 5); // ties at the max, the first one −0
    if (r % 10 === 1) row.fill(-1e30).set([0], 7); // every other exponential underflows: Σ = 1, log-prob ±0
    return row;
  });
  let checked = 0;
  for (const [t, p] of [[1, 1], [0.7, 1], [1, 0.9], [0, 1]]) {
    for (const row of rows) {
      const u = rng.float(), tok = drawToken(row, t, p, u), lp = logSoftmaxAt(row, tok);
      const [tok2, lp2] = drawScored(row, t, p, u);
      assertEquals(tok2, tok);
      assert(Object.is(lp2, lp), `log-prob ${lp2} against ${lp} (temperature ${t}, top-p ${p})`);
      checked++;
    }
  }
  assertEquals(checked, 800);
});

Deno.test("model: bad configs and inputs are one-line errors naming the field", () => {
  throws(
    () => createModel({ ...cfg, heads: 3 }, Rng.seeded(1)),
    /dModel \(16\) must be divisible by heads \(3\)/,
  );
  throws(() => createModel({ ...cfg, layers: 0 }, Rng.seeded(1)), /layers must be a positive integer/);
  const m = createModel(cfg, Rng.seeded(1));
  throws(
    () => sample(m, new Int32Array(5), 2, { maxNew: 1, temperature: 1, topP: 1, rng: Rng.seeded(1) }),
    /multiple of B=2/,
  );
  throws(
    () => sample(m, new Int32Array(2), 1, { maxNew: 12, temperature: 1, topP: 1, rng: Rng.seeded(1) }),
    /exceeds context 12/,
  );
  throws(() => logProbs(m, randomTokens(1, 14, 1)), /exceeds context 12/);
  disposeModel(m);
});

Deno.test("model: the async forms (for webgpu) give exactly what the sync forms give", async () => {
  const prompts = new Int32Array(randomTokens(3, 2, 23).flat());
  const opts = () => ({ maxNew: 5, temperature: 1, topP: 0.9, rng: Rng.seeded(24) });
  const a = createModel(cfg, Rng.seeded(25)), b = createModel(cfg, Rng.seeded(25));
  assertEquals(await sampleAsync(a, prompts, 3, opts()), sample(a, prompts, 3, opts()));
  const rows = tf.tensor2d(randomTokens(4, 8, 26), undefined, "int32");
  const loss = (m: Model) => () => tf.neg(tf.mean(tokenLogProbs(m, rows).logp)) as tf.Scalar;
  const optA = createOptimizer(a, { lr: 1e-2, clipNorm: 1 }),
    optB = createOptimizer(b, { lr: 1e-2, clipNorm: 1 });
  assertEquals(await trainStepAsync(a, optA, loss(a)), trainStep(b, optB, loss(b)));
  assertEquals(await getWeightsAsync(a), await getWeightsAsync(b));
  [a, b].forEach(disposeModel);
  rows.dispose();
});

Deno.test("model: sampling and training leave no tensors behind", () => {
  const m = createModel(cfg, Rng.seeded(27)), opt = createOptimizer(m, { lr: 1e-3, clipNorm: 1 });
  const rows = tf.tensor2d(randomTokens(2, 6, 28), undefined, "int32");
  const run = () => {
    sample(m, new Int32Array(4), 2, { maxNew: 4, temperature: 1, topP: 1, rng: Rng.seeded(29) });
    trainStep(m, opt, () => tf.neg(tf.mean(tokenLogProbs(m, rows).logp)) as tf.Scalar);
  };
  run(); // first call may create cached masks
  const before = tf.memory().numTensors;
  run();
  assertEquals(tf.memory().numTensors, before);
  rows.dispose();
  disposeModel(m);
});

Deno.test("model: the fused wasm Adam kernel gives bit-for-bit what the tf-ops update gives", async () => {
  const rows = tf.tensor2d(randomTokens(4, 8, 30), undefined, "int32");
  const run = async (fusedOn: boolean) => {
    useFusedAdam(fusedOn);
    const m = createModel(cfg, Rng.seeded(31)), opt = createOptimizer(m, { lr: 1e-2, clipNorm: 0.3 });
    const loss = () => tf.neg(tf.mean(tokenLogProbs(m, rows).logp)) as tf.Scalar;
    for (let i = 0; i < 3; i++) trainStep(m, opt, loss);
    const out = { w: await getWeightsAsync(m), o: await getOptimizerStateAsync(opt) };
    disposeModel(m);
    return out;
  };
  try {
    const plain = await run(false), kernel = await run(true);
    assertEquals(kernel, plain);
  } finally {
    useFusedAdam(true);
    rows.dispose();
  }
});

Deno.test("model: fused wasm LayerNorm (width 8) and plain-ops LayerNorm (width 6) match autodiff", () => {
  const rng = Rng.seeded(32);
  const rand = (shape: number[]) =>
    tf.tensor(Array.from({ length: shape.reduce((a, b) => a * b) }, () => rng.normal()), shape);
  const plainLn = (a: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => {
    const { mean, variance } = tf.moments(a, -1, true);
    return tf.add(tf.mul(tf.div(tf.sub(a, mean), tf.sqrt(tf.add(variance, 1e-5))), gg), bb);
  };
  const close = (a: tf.Tensor, b: tf.Tensor, what: string) =>
    (a.dataSync() as Float32Array).forEach((v, i) => assertClose(v, b.dataSync()[i], 2e-4, `${what}[${i}]`));
  for (const d of [8, 6]) {
    const x = tf.add(tf.mul(rand([7, d]), 3), 1), g = rand([d]), b = rand([d]), dy = rand([7, d]);
    const f = (ln: typeof plainLn) => (a: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) =>
      tf.sum(tf.mul(ln(a, gg, bb), dy));
    const mine = layerNorm as unknown as typeof plainLn;
    close(mine(x, g, b), plainLn(x, g, b), `layerNorm d=${d}`);
    const want = tf.grads(f(plainLn))([x, g, b]);
    tf.grads(f(mine))([x, g, b]).forEach((t, i) => close(t, want[i], `layerNorm d=${d} grad ${i}`));
    useFusedLayerNorm(false);
    try {
      tf.grads(f(mine))([x, g, b]).forEach((t, i) => close(t, want[i], `plain layerNorm d=${d} grad ${i}`));
    } finally {
      useFusedLayerNorm(true);
    }
  }
});
