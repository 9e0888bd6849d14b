// The policy: a small decoder-only transformer (pre-LayerNorm, tied embeddings, learned positions) on tfjs-core.
//
// Layout choices follow what is fast on tfjs-wasm (measured, docs/tfjs-model.md): activations stay 2-D
// [B*T, D] so every projection is one flag-free matMul; heads are column slices of the fused QKV output, so
// no 4-D/5-D transpose is ever needed; embeddings are one-hot matmuls (gather has no gradient on wasm).
import * as tf from "@tensorflow/tfjs-core";
import type { Rng } from "../../../common/prng.ts";
import { layerNorm, linear, oneHotF, tokenScores } from "./model/ops.ts";
import { nativeDraws } from "./ops/native.ts";
import {
  advance,
  cachedAttention,
  cachedStep,
  compactKvCache,
  createKvCache,
  disposeKvCache,
  generate,
  generatesNatively,
  type KvCache,
  selfAttention,
  swapLast,
} from "./ops/attention.ts";
import {
  adam,
  adamApply,
  type AdamOptions,
  adamSteps,
  driveAsync,
  driveSync,
  fromData,
  getOptimizerStateAsync,
  type Optimizer,
  type OptimizerState,
  setOptimizerState,
  type StepResult,
  type TensorData,
  toDataAsync,
} from "./model/adam.ts";

export { initBackend } from "./backend.ts";
export { getOptimizerStateAsync, setOptimizerState };
export type { AdamOptions, Optimizer, OptimizerState, StepResult, TensorData };

/** Transformer shape: vocabulary, width, heads (dModel divisible by heads), blocks, max sequence length. */
export interface ModelConfig {
  vocab: number;
  dModel: number;
  heads: number;
  layers: number;
  context: number;
}

/** A model: its config and its trainable variables by name (names are stable: checkpoints use them). */
export interface Model {
  config: ModelConfig;
  params: Map<string, tf.Variable>;
}

/** Throw a one-line error naming the bad field of a model config. */
function validateConfig(cfg: ModelConfig): void {
  for (const k of ["vocab", "dModel", "heads", "layers", "context"] as const) {
    if (!Number.isInteger(cfg[k]) || cfg[k] < 1) {
      throw new Error(`model config: ${k} must be a positive integer, got ${cfg[k]}`);
    }
  }
  if (cfg.dModel % cfg.heads !== 0) {
    throw new Error(`model config: dModel (${cfg.dModel}) must be divisible by heads (${cfg.heads})`);
  }
}

/** Parameter names and shapes in a fixed order (the order initial values are drawn in). */
function paramSpecs(
  cfg: ModelConfig,
): { name: string; shape: number[]; init: "normal" | "ones" | "zeros"; std?: number }[] {
  const d = cfg.dModel, std = 0.02, residStd = 0.02 / Math.sqrt(2 * cfg.layers);
  const specs: ReturnType<typeof paramSpecs> = [
    { name: "wte", shape: [cfg.vocab, d], init: "normal", std },
    { name: "wpe", shape: [cfg.context, d], init: "normal", std },
  ];
  for (let l = 0; l < cfg.layers; l++) {
    specs.push(
      { name: `h${l}.ln1.g`, shape: [d], init: "ones" },
      { name: `h${l}.ln1.b`, shape: [d], init: "zeros" },
      { name: `h${l}.qkv`, shape: [d, 3 * d], init: "normal", std },
      // Residual-branch outputs start smaller (GPT-2) so the residual stream's scale does not grow with depth.
      { name: `h${l}.proj`, shape: [d, d], init: "normal", std: residStd },
      { name: `h${l}.ln2.g`, shape: [d], init: "ones" },
      { name: `h${l}.ln2.b`, shape: [d], init: "zeros" },
      { name: `h${l}.up`, shape: [d, 4 * d], init: "normal", std },
      { name: `h${l}.down`, shape: [4 * d, d], init: "normal", std: residStd },
    );
  }
  specs.push({ name: "lnf.g", shape: [d], init: "ones" }, { name: "lnf.b", shape: [d], init: "zeros" });
  return specs;
}

/** A freshly initialised model; every initial value comes from `rng`, so the same seed gives the same weights. */
export function createModel(cfg: ModelConfig, rng: Rng): Model {
  validateConfig(cfg);
  const params = new Map<string, tf.Variable>();
  for (const s of paramSpecs(cfg)) {
    const data = new Float32Array(s.shape.reduce((a, b) => a * b, 1));
    if (s.init === "ones") data.fill(1);
    if (s.init === "normal") { for (let i = 0; i < data.length; i++) data[i] = rng.normal() * s.std!; }
    params.set(s.name, tf.variable(tf.tensor(data, s.shape, "float32"), true));
  }
  return { config: { ...cfg }, params };
}

/** Free a model's variables (tfjs memory is not garbage-collected). */
export function disposeModel(model: Model): void {
  for (const v of model.params.values()) v.dispose();
}

/** Layer l's weights, parameter `h{l}.ln1.g` as ln1g (in kernels.c's order: the native step takes their values). */
function layerWeights(model: Model, l: number) {
  const names = ["ln1.g", "ln1.b", "qkv", "proj", "ln2.g", "ln2.b", "up", "down"];
  const weights = names.map((n) => [n.replace(".", ""), model.params.get(`h${l}.${n}`)!]);
  return Object.fromEntries(weights) as
    & Record<"ln1g" | "ln1b" | "ln2g" | "ln2b", tf.Tensor1D>
    & Record<"qkv" | "proj" | "up" | "down", tf.Tensor2D>;
}

/**
 * The model's tensors as the native decode kernels take them: wte, wpe, LNf gain and bias; each layer's eight
 * (from `lw`, each layer's `layerWeights`, where the caller has them).
 */
function nativeWeights(
  model: Model,
  lw = Array.from({ length: model.config.layers }, (_, l) => layerWeights(model, l)),
): [tf.Tensor[], tf.Tensor[][]] {
  return [
    ["wte", "wpe", "lnf.g", "lnf.b"].map((name) => model.params.get(name)!),
    lw.map((w) => Object.values(w)),
  ];
}

/** Logits [B*T, V] for int32 tokens [B, T] at positions start..start+T-1 (start = cache length). */
function forward(model: Model, tokens: tf.Tensor2D, cache?: KvCache): tf.Tensor2D {
  const { vocab, dModel: d, layers, context } = model.config;
  const [b, t] = tokens.shape, n = b * t, start = cache?.length ?? 0;
  if (start + t > context) {
    throw new Error(`model: sequence of ${start + t} tokens exceeds context ${context}`);
  }
  const p = (name: string) => model.params.get(name)!;
  const wte = p("wte") as tf.Tensor2D, lw = Array.from({ length: layers }, (_, l) => layerWeights(model, l));
  const step = cache && t === 1 && cachedStep(cache, tokens, ...nativeWeights(model, lw));
  if (step) return step;
  const tok = linear(oneHotF(tf.reshape(tokens, [n]) as tf.Tensor1D, vocab), wte);
  const pos = tf.slice(p("wpe"), [start, 0], [t, d]);
  let x = tf.reshape(tf.add(tf.reshape(tok, [b, t, d]), pos), [n, d]) as tf.Tensor2D;
  for (let l = 0; l < layers; l++) {
    const w = lw[l];
    const qkv = linear(layerNorm(x, w.ln1g, w.ln1b), w.qkv);
    const y = cache ? cachedAttention(cache, l, qkv) : selfAttention(qkv, b, model.config.heads);
    x = tf.add(x, linear(y, w.proj));
    const up = tf.relu(linear(layerNorm(x, w.ln2g, w.ln2b), w.up));
    x = tf.add(x, linear(up, w.down));
  }
  if (cache) advance(cache, t);
  const hf = layerNorm(x, p("lnf.g") as tf.Tensor1D, p("lnf.b") as tf.Tensor1D);
  return linear(hf, swapLast(wte)); // tied output head
}

/**
 * Per-token log-probs of int32 tokens [B, T]: logp[b, t] = log p(tokens[b, t+1] | tokens[b, ≤t]), shape
 * [B, T-1], differentiable; with `entropy`, also the policy entropy (nats) at each of those positions.
 * T-1 must not exceed the context. Wrap calls in tf.tidy (or a loss closure) to free intermediates.
 */
export function tokenLogProbs(
  model: Model,
  tokens: tf.Tensor2D,
  opts: { entropy?: boolean } = {},
): { logp: tf.Tensor2D; entropy?: tf.Tensor2D } {
  const [b, t] = tokens.shape;
  if (tokens.dtype !== "int32") throw new Error(`tokenLogProbs: tokens must be int32, got ${tokens.dtype}`);
  if (t < 2) throw new Error(`tokenLogProbs: need at least 2 tokens per row, got ${t}`);
  const inputs = tf.slice(tokens, [0, 0], [b, t - 1]);
  const targets = tf.reshape(tf.slice(tokens, [0, 1], [b, t - 1]), [b * (t - 1)]) as tf.Tensor1D;
  const logits = forward(model, inputs), scores = tokenScores(logits, targets);
  if (scores) {
    const column = (c: number) => tf.reshape(tf.slice(scores, [0, c], [-1, 1]), [b, t - 1]) as tf.Tensor2D;
    return opts.entropy ? { logp: column(0), entropy: column(1) } : { logp: column(0) };
  }
  const logsm = tf.logSoftmax(logits);
  const logp = tf.reshape(tf.sum(tf.mul(logsm, oneHotF(targets, model.config.vocab)), 1), [
    b,
    t - 1,
  ]) as tf.Tensor2D;
  if (!opts.entropy) return { logp };
  const entropy = tf.reshape(tf.neg(tf.sum(tf.mul(tf.exp(logsm), logsm), 1)), [b, t - 1]) as tf.Tensor2D;
  return { logp, entropy };
}

/**
 * Options of `sample`: new tokens per row, temperature (0 = greedy), nucleus mass, the stream the rows' uniforms
 * derive from and the index of the first row in it (default 0), stop token, and whether finished rows leave the
 * batch (default true; false computes every row to the end, as a reference).
 */
export interface SampleOptions {
  maxNew: number;
  temperature: number;
  topP: number;
  rng: Rng;
  firstRow?: number;
  eos?: number;
  compact?: boolean;
}

/** Scratch for the unnormalised probabilities of one row (reused: this runs B × maxNew times per sample). */
let scratch = new Float64Array(0);

/** w[i] = exp((logits[i] − max) / temperature) into `scratch` (float64); the argmax (first) and Σ w in index order. */
function weights(logits: ArrayLike<number>, temperature: number) {
  const v = logits.length, best = argmax(logits);
  if (scratch.length < v) scratch = new Float64Array(v);
  const w = scratch;
  let z = 0;
  for (let i = 0; i < v; i++) z += w[i] = Math.exp((logits[i] - logits[best]) / temperature);
  return { best, z, w };
}

/** Index of the first largest logit. */
function argmax(logits: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/** The index where u·z falls walking w[0..v) in index order (untruncated sampling). */
function walk(w: Float64Array, v: number, z: number, u: number, best: number): number {
  let r = u * z;
  for (let i = 0; i < v; i++) {
    r -= w[i];
    if (r < 0) return i;
  }
  return best;
}

/** Index drawn from logits at a temperature with nucleus (top-p) truncation, using one uniform u in [0, 1). */
export function drawToken(logits: ArrayLike<number>, temperature: number, topP: number, u: number): number {
  if (temperature === 0) return argmax(logits);
  const v = logits.length, { best, z, w } = weights(logits, temperature);
  // No truncation: walk the distribution in index order (no sort).
  if (topP >= 1) return walk(w, v, z, u, best);
  const order = Array.from({ length: v }, (_, i) => i).sort((a, b) => w[b] - w[a] || a - b);
  // Keep the smallest prefix of the sorted distribution whose mass reaches topP.
  let kept = 0, mass = 0;
  while (kept < v && mass < topP * z) mass += w[order[kept++]];
  let r = u * mass;
  for (let i = 0; i < kept; i++) {
    r -= w[order[i]];
    if (r < 0) return order[i];
  }
  return order[kept - 1];
}

/** log softmax(logits)[index] in float64. */
function logSoftmaxAt(logits: ArrayLike<number>, index: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - max);
  return logits[index] - max - Math.log(z);
}

/**
 * `drawToken` and the drawn token's `logSoftmaxAt`, the same two numbers bit for bit; at temperature 1 without
 * truncation from one pass of exponentials (the draw's are the log-softmax's: exp(x − max) summed in index
 * order), which halves the exponentials of sampling, the largest cost outside the model there.
 */
export function drawScored(
  logits: ArrayLike<number>,
  temperature: number,
  topP: number,
  u: number,
): [number, number] {
  if (temperature !== 1 || topP < 1) {
    const tok = drawToken(logits, temperature, topP, u);
    return [tok, logSoftmaxAt(logits, tok)];
  }
  const v = logits.length, { best, z, w } = weights(logits, 1), tok = walk(w, v, z, u, best);
  // logSoftmaxAt's max is Math.max's (the same value as logits[best], but +0 over −0), so subtract that one.
  let max = -Infinity;
  for (let i = 0; i < v; i++) max = Math.max(max, logits[i]);
  return [tok, logits[tok] - max - Math.log(z)];
}

/**
 * A chunk for a sampler to run: tokens [rows, t] appended to every row (prefill: the prompts; then t = 1). With
 * `keep`, only those rows of the previous chunk (ascending indices) continue, and `tokens` covers just them.
 */
export interface LogitsRequest {
  tokens: Int32Array;
  t: number;
  keep?: Int32Array;
}

/**
 * Last-position logits [rows, V] of successive chunks of `rows` rows of `model` on the active backend, through
 * a key/value cache of the model's context (made on first use; a prefill, then one token at a time). `close`
 * frees the cache.
 */
export function localLogits(model: Model, rows: number) {
  const { layers, heads, dModel, context } = model.config;
  let cache: KvCache | null = null;
  return {
    next(req: LogitsRequest): tf.Tensor {
      cache ??= createKvCache(layers, rows, heads, dModel / heads, context);
      if (req.keep) compactKvCache(cache, req.keep);
      const { b } = cache!, t = req.t;
      return tf.tidy(() => {
        const logits = forward(model, tf.tensor2d(req.tokens, [b, t], "int32"), cache!);
        return t === 1
          ? logits
          : tf.reshape(tf.slice(tf.reshape(logits, [b, t, -1]), [0, t - 1, 0], [b, 1, -1]), [b, -1]);
      });
    },
    close() {
      if (cache) disposeKvCache(cache);
    },
  };
}

/** Another source of logits for `sampleAsync` (data-parallel sampling, parallel.ts), or null to run here. */
export type SamplerDelegate = (
  model: Model,
  rows: number,
) => { next(req: LogitsRequest): Promise<Float32Array>; close(): void } | null;

let delegate: SamplerDelegate | null = null;

/** Route `sampleAsync`'s logits through `d` (null: back to the active backend in this process). */
export function setSamplerDelegate(d: SamplerDelegate | null): void {
  delegate = d;
}

/**
 * Batched sampling with a key/value cache. `prompts` is [B, P] row-major (all rows length P, left-padded).
 * Returns tokens [B, P+maxNew], logp [B, maxNew] (log-prob of each sampled token at temperature 1, 0 after
 * eos) and lengths (tokens generated per row, eos included). Rows that emitted eos are filled with eos.
 * Row r draws one uniform per token it generates from its own stream `opts.rng.derive(firstRow + r)` (`rng` is
 * not advanced): a row's sample depends on its prompt, the model and that stream only, never on when other rows
 * finish or how rows are batched, so two policies sampled with one stream are coupled row by row (common random
 * numbers: where their next-token distributions agree, they draw the same token).
 */
export function sample(model: Model, prompts: Int32Array, b: number, opts: SampleOptions): SampleResult {
  return sampleNatively(model, prompts, b, opts) ??
    driveSync(locally(model, b, sampleSteps(model, prompts, b, opts, opts.compact ?? true)));
}

/**
 * `sample` as one native call (kernels.c's ace_generate: each block of rows runs its prompts' prefill, draws and
 * decodes all its tokens on one thread, its key/value cache kept warm), where whole native decode steps run and
 * the draw is at temperature 1 without truncation; null elsewhere. The loop's draws and decode arithmetic; the
 * prefill's attention sums in another order than tfjs's, and a finished row leaves its block's products at
 * once, so last bits (hence rare tokens) may differ from the loop's; `compact: false` runs the loop.
 */
function sampleNatively(
  model: Model,
  prompts: Int32Array,
  b: number,
  opts: SampleOptions,
): SampleResult | null {
  const { dModel, heads } = model.config;
  if (
    opts.temperature !== 1 || opts.topP < 1 || opts.compact === false || !generatesNatively(dModel / heads)
  ) {
    return null;
  }
  const p = checkSample(model, prompts, b, opts),
    { maxNew, rng, eos, firstRow = 0 } = opts,
    total = p + maxNew;
  const u = new Float64Array(b * maxNew);
  for (let r = 0; r < b; r++) {
    const stream = rng.derive(firstRow + r);
    for (let s = 0; s < maxNew; s++) u[r * maxNew + s] = stream.float();
  }
  const out = tf.tidy(() => {
    const x = tf.tensor2d(prompts, [b, p], "int32");
    return generate(x, heads, u, maxNew, eos ?? -1, ...nativeWeights(model));
  });
  const [drawn, logp, lengths] = [out.tokens, out.logp, out.lengths].map((t) => t.dataSync());
  tf.dispose([out.tokens, out.logp, out.lengths]);
  const tokens = new Int32Array(b * total);
  for (let r = 0; r < b; r++) {
    tokens.set(prompts.subarray(r * p, (r + 1) * p), r * total);
    tokens.set(drawn.subarray(r * maxNew, r * maxNew + lengths[r]), r * total + p);
    tokens.fill(eos!, r * total + p + lengths[r], (r + 1) * total);
  }
  return { tokens, logp: logp as Float32Array, lengths: lengths as Int32Array };
}

/** A sampling loop with its chunks' logits computed here (`localLogits`): yields each logits tensor to read. */
function* locally(
  model: Model,
  b: number,
  gen: Generator<LogitsRequest, SampleResult, Float32Array>,
): Generator<tf.Tensor, SampleResult, Float32Array> {
  const source = localLogits(model, b);
  try {
    let step = gen.next(undefined as unknown as Float32Array);
    while (!step.done) {
      const logits = source.next(step.value);
      try {
        step = gen.next(yield logits);
      } finally {
        logits.dispose();
      }
    }
    return step.value;
  } finally {
    source.close();
  }
}

/**
 * `sample` reading logits asynchronously: the form that works on webgpu (Deno has no synchronous GPU read).
 * With a sampler delegate set (parallel.ts), the rows' logits are computed by its workers; the draws stay
 * here, in row order, so the result is the same as `sample`'s.
 */
export async function sampleAsync(model: Model, prompts: Int32Array, b: number, opts: SampleOptions) {
  // Finished rows are dropped from the batch only here: a delegate's workers hold fixed slices of the rows.
  const remote = delegate?.(model, b) ?? null;
  const native = remote === null ? sampleNatively(model, prompts, b, opts) : null;
  if (native) return native;
  const gen = sampleSteps(model, prompts, b, opts, remote === null && (opts.compact ?? true));
  if (!remote) return driveAsync(locally(model, b, gen));
  try {
    let step = gen.next(undefined as unknown as Float32Array);
    while (!step.done) step = gen.next(await remote.next(step.value));
    return step.value;
  } finally {
    remote.close();
  }
}

/** What `sample` returns. */
export interface SampleResult {
  tokens: Int32Array;
  logp: Float32Array;
  lengths: Int32Array;
}

/** The prompt length P of `sample`'s arguments; throws on any it refuses (one line naming the argument). */
function checkSample(model: Model, prompts: Int32Array, b: number, opts: SampleOptions): number {
  const { vocab, context } = model.config, { maxNew, temperature, topP } = opts;
  if (!Number.isInteger(b) || b < 1 || prompts.length % b !== 0 || prompts.length === 0) {
    throw new Error(`sample: prompts length ${prompts.length} is not a positive multiple of B=${b}`);
  }
  const p = prompts.length / b;
  if (!Number.isInteger(maxNew) || maxNew < 1) {
    throw new Error(`sample: maxNew must be a positive integer, got ${maxNew}`);
  }
  if (!(temperature >= 0)) throw new Error(`sample: temperature must be >= 0, got ${temperature}`);
  if (!(topP > 0 && topP <= 1)) throw new Error(`sample: topP must be in (0, 1], got ${topP}`);
  if (p + maxNew - 1 > context) {
    throw new Error(`sample: prompt ${p} + maxNew ${maxNew} - 1 exceeds context ${context}`);
  }
  for (let i = 0; i < prompts.length; i++) {
    if (!(prompts[i] >= 0 && prompts[i] < vocab)) {
      throw new Error(`sample: prompt token ${prompts[i]} at ${i} outside [0, ${vocab})`);
    }
  }
  return p;
}

/** The sampling loop: yields the chunks whose logits it needs, draws each row's next token in row order. */
function* sampleSteps(
  model: Model,
  prompts: Int32Array,
  b: number,
  opts: SampleOptions,
  compact: boolean,
): Generator<LogitsRequest, SampleResult, Float32Array> {
  const p = checkSample(model, prompts, b, opts),
    { maxNew, temperature, topP, rng, eos, firstRow = 0 } = opts;
  const total = p + maxNew, vocab = model.config.vocab;
  const tokens = new Int32Array(b * total), logp = new Float32Array(b * maxNew), lengths = new Int32Array(b);
  for (let r = 0; r < b; r++) tokens.set(prompts.subarray(r * p, (r + 1) * p), r * total);
  // live[i] = the original row of the batch's i-th row; finished rows leave the batch (when `compact`) once a
  // quarter of it is done, so late steps compute only the rows still generating.
  let live = Int32Array.from({ length: b }, (_, r) => r);
  const done = new Uint8Array(b), uniforms = Array.from({ length: b }, (_, r) => rng.derive(firstRow + r));
  let logits = yield { tokens: prompts, t: p };
  for (let s = 0; s < maxNew; s++) {
    const drawn: number[] = [], u = Float64Array.from(live, (r) => done[r] ? NaN : uniforms[r].float());
    const native = temperature === 1 && topP >= 1 ? nativeDraws(logits, u, vocab) : null;
    for (let i = 0; i < live.length; i++) {
      const r = live[i];
      let tok = eos!;
      if (!done[r]) {
        const row = logits.subarray(i * vocab, (i + 1) * vocab);
        [tok, logp[r * maxNew + s]] = native
          ? [native.tokens[i], native.logp[i]]
          : drawScored(row, temperature, topP, u[i]);
        lengths[r]++;
        if (tok === eos) done[r] = 1;
        else drawn.push(i);
      }
      tokens[r * total + p + s] = tok;
    }
    if (drawn.length === 0) break;
    if (s + 1 === maxNew) break;
    const keep = compact && drawn.length <= 0.75 * live.length ? Int32Array.from(drawn) : undefined;
    if (keep) live = live.filter((_, i) => !done[live[i]]);
    const next = new Int32Array(live.length); // a fresh array per step: a delegate may transfer it to its workers
    for (let i = 0; i < live.length; i++) next[i] = tokens[live[i] * total + p + s];
    logits = yield keep ? { tokens: next, t: 1, keep } : { tokens: next, t: 1 };
  }
  for (let r = 0; r < b; r++) tokens.fill(eos!, r * total + p + lengths[r], (r + 1) * total);
  return { tokens, logp, lengths };
}

/** Adam with global-norm gradient clipping over the model's parameters (clipNorm 0 = no clipping). */
export function createOptimizer(model: Model, opts: AdamOptions): Optimizer {
  return adam(model.params, opts);
}

/** One Adam step on `loss` (a closure calling tokenLogProbs); returns the loss and pre-clip gradient norm. */
export function trainStep(model: Model, opt: Optimizer, loss: () => tf.Scalar): StepResult {
  return driveSync(adamSteps(model.params, opt, loss));
}

/**
 * The update of `trainStep` from precomputed gradients (one Float32Array per parameter, in `model.params`
 * order, e.g. summed over data-parallel workers): the same clipping and Adam; returns `loss` and the norm.
 */
export function applyGradients(model: Model, opt: Optimizer, grads: Float32Array[], loss: number) {
  const vars = [...model.params.values()];
  const tensors = grads.map((g, i) => tf.tensor(g, vars[i].shape, "float32"));
  try {
    return driveSync(adamApply(model.params, opt, tensors, loss));
  } finally {
    tf.dispose(tensors);
  }
}

/** `trainStep` reading the loss and norm asynchronously (the form that works on webgpu); `loss` must not read data. */
export function trainStepAsync(model: Model, opt: Optimizer, loss: () => tf.Scalar): Promise<StepResult> {
  return driveAsync(adamSteps(model.params, opt, loss));
}

/** The model's weights as plain data by parameter name (an awaited read: works on every backend). */
export function getWeightsAsync(model: Model): Promise<Record<string, TensorData>> {
  return toDataAsync(model.params);
}

/** Load weights from `getWeightsAsync` output (e.g. into a frozen reference copy); the error names a bad entry. */
export function setWeights(model: Model, w: Record<string, TensorData>): void {
  fromData(model.params, w, "weights");
}

/** Number of scalar parameters. */
export function parameterCount(model: Model): number {
  return [...model.params.values()].reduce((n, v) => n + v.size, 0);
}
