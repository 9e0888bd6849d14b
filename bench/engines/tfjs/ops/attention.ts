// Causal multi-head self-attention, for training (differentiable) and for sampling (key/value cache).
//
// On tfjs-wasm every batched or transposed matMul runs a scalar loop (~1.8 GFLOP/s measured) and head
// splitting needs 4-D/5-D transposes, so attention was most of a training step. Here the batched products and
// the head split/merge are our own WebAssembly SIMD kernels (attention.wat), registered as tfjs-wasm kernels
// that work on tensors in place (the module imports tfjs-wasm's memory). Other backends use plain tfjs ops.
import * as tf from "@tensorflow/tfjs-core";
import { addr, attr, compileWat, type Fn, type KernelArgs, nativeAddr, type WasmBackend } from "./wasm.ts";
import { blasActive, gemmBatch } from "./blas.ts";
import { nativeKernels, nativeSteps, nativeThreads } from "./native.ts";

let wasmKernels: { bmm: Fn; bmmNT: Fn; heads: Fn; transpose: Fn } | null = null;
let enabled = true;
/** Below this many query rows per head (decoding) one SIMD kernel call beats a BLAS call per head. */
const BLAS_MIN_ROWS = 8;

/** Whether the kernels run; they copy and dot in 4-float SIMD lanes, so row widths must be multiples of 4. */
const own = (width = 4) => enabled && width % 4 === 0 && wasmKernels !== null && tf.getBackend() === "wasm";

/** Switch the SIMD kernels off (plain tfjs ops) or back on: for side-by-side tests and benchmarks. */
export function useKernels(on: boolean): void {
  enabled = on;
}

/**
 * C = alpha · op(A) @ B for a [n, m, k] (transA: [n, k, m]), b [n, ≥k, p]: only the first k rows of each B are
 * read (cache buffers). transA and alpha are BLAS-only (ops/blas.ts folds them into the product).
 */
function bmmKernel({ inputs: { a, b }, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, transA = attr(attrs, "transA") === 1, alpha = attr(attrs, "alpha") ?? 1;
  const [n, ar, ac] = a.shape, [m, k] = transA ? [ac, ar] : [ar, ac], [nb, rows, p] = b.shape;
  if (nb !== n || rows < k) throw new Error(`AceBmm: shapes [${a.shape}] and [${b.shape}] do not match`);
  const out = be.makeOutput([n, m, p], "float32");
  if (blasActive() && (m >= BLAS_MIN_ROWS || transA || alpha !== 1)) {
    const g = { m, n: p, k, transA, transB: false, lda: ac, ldb: p, alpha };
    gemmBatch(be, g, n, [a, b, out], [m * k, rows * p, m * p]);
  } else wasmKernels!.bmm(addr(be, a), addr(be, b), addr(be, out), n, m, k, p, rows * p);
  return out;
}

/** C = alpha · A @ Bᵀ for a [n, m, k], b [n, ≥keys, k]: scores against the first `keys` rows of each B. */
function bmmNTKernel({ inputs: { a, b }, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend,
    [n, m, k] = a.shape,
    [nb, rows, kb] = b.shape,
    keys = attr(attrs, "keys"),
    alpha = attr(attrs, "alpha") ?? 1;
  if (nb !== n || kb !== k || keys > rows) {
    throw new Error(`AceBmmNT: shapes [${a.shape}] and [${b.shape}] do not match`);
  }
  const out = be.makeOutput([n, m, keys], "float32");
  if (blasActive() && (m >= BLAS_MIN_ROWS || alpha !== 1)) {
    const g = { m, n: keys, k, transA: false, transB: true, lda: k, ldb: k, alpha };
    gemmBatch(be, g, n, [a, b, out], [m * k, rows * k, m * keys]);
  } else wasmKernels!.bmmNT(addr(be, a), addr(be, b), addr(be, out), n, m, k, keys, rows * k);
  return out;
}

/** Rows x [b*t, width] → heads [b*h, t, hd] from columns offset..offset+h*hd. */
function splitKernel({ inputs: { x }, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend,
    [b, heads, hd, offset] = ["b", "heads", "hd", "offset"].map((k) => attr(attrs, k));
  const t = x.shape[0] / b, out = be.makeOutput([b * heads, t, hd], "float32");
  wasmKernels!.heads(addr(be, x), addr(be, out), b, t, heads, hd, x.shape[1], offset, t, 0, 1);
  return out;
}

/** Heads y [b*h, t, hd] → rows [b*t, width] at columns offset..offset+h*hd, zeros elsewhere. */
function mergeKernel({ inputs: { y }, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, [b, width, offset] = ["b", "width", "offset"].map((k) => attr(attrs, k));
  const [bh, t, hd] = y.shape, heads = bh / b, out = be.makeOutput([b * t, width], "float32");
  const at = addr(be, out);
  if (width !== heads * hd) be.wasm.HEAPF32.fill(0, at / 4, at / 4 + b * t * width);
  wasmKernels!.heads(at, addr(be, y), b, t, heads, hd, width, offset, t, 0, 0);
  return out;
}

/** Cache buffer x [b*h, cap, hd] → [rows*h, cap, hd] of the given rows; only positions < length are copied. */
function keepRowsKernel({ inputs: { x }, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, rows = attrs!.rows as number[];
  const [heads, length] = ["heads", "length"].map((k) => attr(attrs, k)), [, cap, hd] = x.shape;
  const out = be.makeOutput([rows.length * heads, cap, hd], "float32");
  const heap = be.wasm.HEAPF32, from = addr(be, x) / 4, to = addr(be, out) / 4, block = cap * hd;
  for (let i = 0; i < rows.length; i++) {
    for (let h = 0; h < heads; h++) {
      const src = from + (rows[i] * heads + h) * block;
      heap.copyWithin(to + (i * heads + h) * block, src, src + length * hd);
    }
  }
  return out;
}

/**
 * One decode step of a layer on the native kernels (ops/kernels.c): new keys/values of qkv [b, 3D] written
 * into the cache buffers k, v [b*h, cap, hd] at position `length`, attention over positions 0..length, heads
 * merged → [b, D]. One call instead of six kernels, on the native threads.
 */
function decodeKernel({ inputs: { qkv, k, v }, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, [heads, length] = ["heads", "length"].map((n) => attr(attrs, n));
  const [b, width] = qkv.shape, [, cap, hd] = k.shape, out = be.makeOutput([b, width / 3], "float32");
  const [q, kp, vp, o] = [qkv, k, v, out].map((t) => nativeAddr(be, t)), scale = 1 / Math.sqrt(hd);
  nativeKernels()!.ace_decode_attention(q, kp, vp, o, b, heads, hd, cap, length, scale, nativeThreads());
  return out;
}

/**
 * A whole decode step on the native kernels (kernels.c's ace_decode_step): inputs w0, w1, … are tokens [b, 1]
 * and the model's tensors in step_args's order (wte, wpe, LNf gain and bias, per layer its eight weights and
 * its key and value cache buffers) → logits [b, V].
 */
function decodeStepKernel({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend,
    [heads, length, layers] = ["heads", "length", "layers"].map((n) => attr(attrs, n));
  const { w0: tokens, w1: wte, w13: k } = inputs, [vocab, d] = wte.shape, b = tokens.shape[0];
  const out = be.makeOutput([b, vocab], "float32"),
    named = Array.from({ length: 5 + 10 * layers }, (_, i) => inputs[`w${i}`]);
  const w = BigUint64Array.from([out, ...named], (t) => BigInt(nativeAddr(be, t)));
  nativeKernels()!.ace_decode_step(w, b, d, heads, k.shape[1], length, layers, vocab, nativeThreads());
  return out;
}

/**
 * A sampling run on the native kernels (kernels.c's ace_generate): inputs w1, w2, … as AceDecodeStep's without
 * the cache buffers (the prompts [b, p] (int32), wte, wpe, LNf gain and bias, per layer its eight weights); attrs
 * heads, layers, maxNew, eos and u (Float64Array [b, maxNew], each row's uniforms) → tokens (int32) and
 * log-probs [b, maxNew], lengths [b].
 */
function generateKernel({ inputs, backend, attrs }: KernelArgs): tf.TensorInfo[] {
  const be = backend as WasmBackend,
    [heads, layers, maxNew, eos] = ["heads", "layers", "maxNew", "eos"].map((n) => attr(attrs, n));
  const { w1: prompts, w2: wte } = inputs, [vocab, d] = wte.shape, [b, p] = prompts.shape;
  const tokens = be.makeOutput([b, maxNew], "int32"),
    logp = be.makeOutput([b, maxNew], "float32"),
    lengths = be.makeOutput([b], "int32");
  // kernels.c's address table (step_args): w0 (the logits) and each layer's two cache entries (its own) are 0.
  const w = BigUint64Array.from(
    { length: 6 + 10 * layers },
    (_, i) => inputs[`w${i}`] ? BigInt(nativeAddr(be, inputs[`w${i}`])) : 0n,
  );
  const [tp, lp, np] = [tokens, logp, lengths].map((t) => nativeAddr(be, t)), cap = p + maxNew - 1;
  const u = (attrs as unknown as { u: Float64Array }).u;
  nativeKernels()!.ace_generate(
    w,
    u,
    tp,
    lp,
    np,
    b,
    d,
    heads,
    cap,
    p,
    layers,
    vocab,
    maxNew,
    eos,
    nativeThreads(),
  );
  return [tokens, logp, lengths];
}

/** Causal softmax of scaled scores x [n, t, t] on the native kernels (keys after a row's own position: 0). */
function causalSoftmaxKernel({ inputs: { x }, backend }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, [n, t] = x.shape, out = be.makeOutput([...x.shape], "float32");
  nativeKernels()!.ace_causal_softmax(nativeAddr(be, x), nativeAddr(be, out), n, t, nativeThreads());
  return out;
}

/** Gradient of the causal softmax from its output p and the gradient dp at it, on the native kernels. */
function causalSoftmaxGradKernel({ inputs: { p, dp }, backend }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, [n, t] = p.shape, out = be.makeOutput([...p.shape], "float32");
  const [pp, dpp, o] = [p, dp, out].map((x) => nativeAddr(be, x));
  nativeKernels()!.ace_causal_softmax_grad(pp, dpp, o, n, t, nativeThreads());
  return out;
}

/** Swap the last two axes of x [..., r, c] (r, c multiples of 4) → [..., c, r]. */
function transposeKernel({ inputs: { x }, backend }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, shape = x.shape, n = shape.length;
  const [r, c] = [shape[n - 2], shape[n - 1]], batch = x.shape.slice(0, -2).reduce((a, b) => a * b, 1);
  const out = be.makeOutput([...shape.slice(0, -2), c, r], "float32");
  wasmKernels!.transpose(addr(be, x), addr(be, out), batch, r, c);
  return out;
}

/** Compile attention.wat against tfjs-wasm's memory and register its kernels (idempotent; not on other backends). */
export async function loadKernels(): Promise<void> {
  if (wasmKernels) return;
  wasmKernels = await compileWat(new URL("./attention.wat", import.meta.url), {
    AceBmm: bmmKernel,
    AceBmmNT: bmmNTKernel,
    AceSplitHeads: splitKernel,
    AceMergeHeads: mergeKernel,
    AceTranspose: transposeKernel,
    AceKeepRows: keepRowsKernel,
    AceDecodeAttention: decodeKernel,
    AceDecodeStep: decodeStepKernel,
    AceGenerate: generateKernel,
    AceCausalSoftmax: causalSoftmaxKernel,
    AceCausalSoftmaxGrad: causalSoftmaxGradKernel,
  }) as typeof wasmKernels;
  // Used inside differentiated code too (the tied output head), so it needs a gradient: transpose back.
  if (wasmKernels) {
    tf.registerGradient({
      kernelName: "AceTranspose",
      gradFunc: (dy) => ({ x: () => swapLast(dy as tf.Tensor) }),
    });
  }
}

/** Which path attention takes on the current backend (for benchmark output). */
export function kernelInfo(): string {
  if (!own()) return "tfjs ops";
  const decode = nativeSteps()
    ? `whole native decode steps (kernels.c, ${nativeThreads()} thread(s))`
    : nativeKernels()
    ? `native decode attention (kernels.c, ${nativeThreads()} thread(s))`
    : "wasm SIMD kernels (attention.wat)";
  return blasActive()
    ? `BLAS products; decode rows < ${BLAS_MIN_ROWS}: ${decode}`
    : "wasm SIMD attention kernels (attention.wat)";
}

const run = (name: string, inputs: tf.NamedTensorMap, attrs: tf.NamedAttrMap = {}) =>
  tf.engine().runKernel(name, inputs, attrs) as tf.Tensor;
/** x with its last two axes swapped (SIMD 4x4-block kernel on wasm; tfjs's Transpose is ~5x slower there). */
export function swapLast<T extends tf.Tensor>(x: T): T {
  const n = x.rank, [r, c] = x.shape.slice(-2);
  if (own() && x.dtype === "float32" && r % 4 === 0 && c % 4 === 0) return run("AceTranspose", { x }) as T;
  return tf.transpose(x, [...Array.from({ length: n - 2 }, (_, i) => i), n - 1, n - 2]);
}

/** a [n, m, k] @ b [n, k, p] (b may hold more rows than k: only the first k are used). */
export function bmm(a: tf.Tensor3D, b: tf.Tensor3D): tf.Tensor3D {
  if (own()) return run("AceBmm", { a, b }) as tf.Tensor3D;
  const k = a.shape[2];
  return tf.matMul(a, b.shape[1] === k ? b : tf.slice(b, [0, 0, 0], [-1, k, -1]));
}

/** a [n, m, k] @ b[:, :keys]ᵀ for b [n, ≥keys, k] → [n, m, keys]. */
export function bmmNT(a: tf.Tensor3D, b: tf.Tensor3D, keys = b.shape[1]): tf.Tensor3D {
  if (own(a.shape[2])) return run("AceBmmNT", { a, b }, { keys }) as tf.Tensor3D;
  return tf.matMul(a, keys === b.shape[1] ? b : tf.slice(b, [0, 0, 0], [-1, keys, -1]), false, true);
}

/** a[n, k, m]ᵀ @ b [n, k, p] → [n, m, p], times alpha: one transposed product on the BLAS, else transpose + bmm. */
function bmmTN(a: tf.Tensor3D, b: tf.Tensor3D, alpha = 1): tf.Tensor3D {
  if (own() && blasActive()) return run("AceBmm", { a, b }, { transA: 1, alpha }) as tf.Tensor3D;
  const c = bmm(swapLast(a), b);
  return alpha === 1 ? c : tf.mul(c, alpha);
}

/** Heads [b*h, t, hd] of the columns offset..offset+D of rows x [b*t, width] (not differentiable). */
function split(x: tf.Tensor2D, b: number, heads: number, hd: number, offset: number): tf.Tensor3D {
  if (own(hd)) return run("AceSplitHeads", { x }, { b, heads, hd, offset }) as tf.Tensor3D;
  const t = x.shape[0] / b, cols = tf.slice(x, [0, offset], [-1, heads * hd]);
  return tf.reshape(tf.transpose(tf.reshape(cols, [b, t, heads, hd]), [0, 2, 1, 3]), [b * heads, t, hd]);
}

/** Rows [b*t, width] holding heads y [b*h, t, hd] at columns offset.. (zeros elsewhere) (not differentiable). */
function merge(y: tf.Tensor3D, b: number, width: number, offset: number): tf.Tensor2D {
  const [bh, t, hd] = y.shape, heads = bh / b;
  if (own(hd)) return run("AceMergeHeads", { y }, { b, width, offset }) as tf.Tensor2D;
  const rows = tf.reshape(tf.transpose(tf.reshape(y, [b, heads, t, hd]), [0, 2, 1, 3]), [b * t, heads * hd]);
  return (width === heads * hd
    ? rows
    : tf.pad(rows, [[0, 0], [offset, width - offset - heads * hd]])) as tf.Tensor2D;
}

// tfjs types a custom-gradient body as variadic (Tensor | save)[]; ours take fixed positional arguments.
type Body = Parameters<typeof tf.customGrad>[0];
/** tf.customGrad of a body with fixed positional arguments, typed as `F`. */
export const grad = <F>(body: (...args: never[]) => unknown) =>
  tf.customGrad(body as unknown as Body) as unknown as F;
type T3 = tf.Tensor3D;

/** Differentiable product `f` of a and b, whose gradients `back(dC, a, b)` gives (a and b saved for it). */
export const product = <T extends tf.Tensor>(
  f: (a: T, b: T) => T,
  back: (dy: T, a: T, b: T) => tf.Tensor[],
) =>
  grad<(a: T, b: T) => T>((a: T, b: T, save: tf.GradSaveFunc) => {
    save([a, b]);
    return { value: f(a, b), gradFunc: (dy: tf.Tensor, [as, bs]: T[]) => back(dy as T, as, bs) };
  });

/** Differentiable a @ b for [n, m, k] x [n, k, p]: dA = dC bᵀ, dB = aᵀ dC. */
const matMulAB = product<T3>(bmm, (dy, a, b) => [bmmNT(dy, b), bmmTN(a, dy)]);

/** Differentiable a @ bᵀ for [n, m, k] x [n, p, k]: dA = dC b, dB = dCᵀ a. */
const matMulABt = product<T3>((a, b) => bmmNT(a, b), (dy, a, b) => [bmm(dy, b), bmmTN(dy, a)]);

/** Differentiable alpha · a @ bᵀ on the BLAS (only while blasActive()), the scale folded into each product. */
function scaledScores(a: T3, b: T3, alpha: number): T3 {
  return product<T3>(
    (a, b) => run("AceBmmNT", { a, b }, { keys: b.shape[1], alpha }) as T3,
    (dy, a, b) => [run("AceBmm", { a: dy, b }, { alpha }), bmmTN(dy, a, alpha)],
  )(a, b);
}

/** Differentiable causal softmax of scaled scores [n, t, t] (t > 1) on the native kernels: one call each way. */
const causalSoftmax = grad<(x: tf.Tensor3D) => tf.Tensor3D>((x: tf.Tensor3D, save: tf.GradSaveFunc) => {
  const p = run("AceCausalSoftmax", { x }) as tf.Tensor3D;
  save([p]);
  return {
    value: p,
    gradFunc: (dp: tf.Tensor, [ps]: tf.Tensor[]) => [run("AceCausalSoftmaxGrad", { p: ps, dp })],
  };
});

/** Differentiable head split of qkv [b*t, 3D] part `which` (0 q, 1 k, 2 v) → [b*h, t, hd]. */
function splitHeads(qkv: tf.Tensor2D, b: number, heads: number, which: number): tf.Tensor3D {
  const width = qkv.shape[1], d = width / 3, hd = d / heads;
  return grad<(x: tf.Tensor2D) => tf.Tensor3D>((x: tf.Tensor2D) => ({
    value: split(x, b, heads, hd, which * d),
    gradFunc: (dy: tf.Tensor) => [merge(dy as tf.Tensor3D, b, width, which * d)],
  }))(qkv);
}

/** Differentiable head merge y [b*h, t, hd] → rows [b*t, h*hd]. */
function mergeHeads(y: tf.Tensor3D, b: number): tf.Tensor2D {
  const [bh, , hd] = y.shape, heads = bh / b;
  return grad<(x: tf.Tensor3D) => tf.Tensor2D>((x: tf.Tensor3D) => ({
    value: merge(x, b, heads * hd, 0),
    gradFunc: (dy: tf.Tensor) => [split(dy as tf.Tensor2D, b, heads, hd, 0)],
  }))(y);
}

const masks = new Map<string, tf.Tensor2D>();

/** Additive causal mask [t, s] for t new queries after s - t earlier positions (-1e9 where j > i + s - t). */
function causalMask(t: number, s: number): tf.Tensor2D {
  const key = `${t},${s},${tf.getBackend()}`;
  let m = masks.get(key);
  if (!m) {
    const past = s - t, data = new Float32Array(t * s);
    for (let i = 0; i < t; i++) for (let j = past + i + 1; j < s; j++) data[i * s + j] = -1e9;
    m = tf.keep(tf.tensor2d(data, [t, s]));
    masks.set(key, m);
  }
  return m;
}

/** softmax(q kᵀ / √hd + causal mask) v for heads [n, t, hd] against `keys` key rows. */
function attend(q: tf.Tensor3D, scores: tf.Tensor3D, keys: number): tf.Tensor3D {
  const t = q.shape[1], scaled = tf.mul(scores, 1 / Math.sqrt(q.shape[2]));
  return tf.softmax(t > 1 ? tf.add(scaled, causalMask(t, keys)) : scaled) as tf.Tensor3D;
}

/** Differentiable causal self-attention of qkv [b*t, 3D] (q, k, v column blocks) → [b*t, D] before the output projection. */
export function selfAttention(qkv: tf.Tensor2D, b: number, heads: number): tf.Tensor2D {
  const q = splitHeads(qkv, b, heads, 0), k = splitHeads(qkv, b, heads, 1), v = splitHeads(qkv, b, heads, 2);
  const t = q.shape[1], scale = 1 / Math.sqrt(q.shape[2]);
  // On the BLAS the 1/√hd scale rides in the products (no separate multiply forward or backward).
  const p = own(q.shape[2]) && blasActive() && nativeKernels() && t > 1
    ? causalSoftmax(scaledScores(q, k, scale))
    : own(q.shape[2]) && blasActive()
    ? tf.softmax(
      t > 1 ? tf.add(scaledScores(q, k, scale), causalMask(t, t)) : scaledScores(q, k, scale),
    ) as tf.Tensor3D
    : attend(q, matMulABt(q, k), k.shape[1]);
  return mergeHeads(matMulAB(p, v), b);
}

/** Keys and values of the positions seen so far, per layer, as [b*h, positions, hd]. */
export type KvCache = ReturnType<typeof createKvCache>;

/**
 * An empty cache for `layers` layers of `heads` heads of width hd, up to `capacity` positions; `inPlace`: its
 * buffers are preallocated and written in place (wasm kernels) rather than grown by concat.
 */
export function createKvCache(layers: number, b: number, heads: number, hd: number, capacity: number) {
  const inPlace = own(hd);
  const buffers = () =>
    Array.from({ length: layers }, () => tf.keep(tf.zeros([b * heads, capacity, hd])) as tf.Tensor3D);
  return { b, heads, length: 0, k: inPlace ? buffers() : [], v: inPlace ? buffers() : [], inPlace };
}

/** Free a cache's tensors. */
export function disposeKvCache(cache: KvCache): void {
  tf.dispose([...cache.k, ...cache.v]);
}

/**
 * Keep only cache rows `rows` (ascending indices into the current rows), in that order: a sampler drops the
 * rows that have finished so later steps compute only the live ones. Each row's keys and values are unchanged.
 */
export function compactKvCache(cache: KvCache, rows: Int32Array): void {
  const { heads, length } = cache;
  const pick = (xs: tf.Tensor3D[]) =>
    xs.map((x) => {
      const kept = tf.keep(
        cache.inPlace
          ? run("AceKeepRows", { x }, { rows: Array.from(rows), heads, length })
          : tf.tidy(() => tf.gather(x, tf.tensor1d(headRows(rows, heads), "int32"), 0)),
      ) as tf.Tensor3D;
      x.dispose();
      return kept;
    });
  cache.k = pick(cache.k);
  cache.v = pick(cache.v);
  cache.b = rows.length;
}

/** Indices into [b*heads, …] of the heads of `rows`. */
function headRows(rows: Int32Array, heads: number): Int32Array {
  return Int32Array.from(
    { length: rows.length * heads },
    (_, i) => rows[Math.floor(i / heads)] * heads + i % heads,
  );
}

/** Throw unless `t` more positions fit layer l's cache buffers. */
function checkCapacity(cache: KvCache, l: number, t: number): void {
  const cap = cache.k[l].shape[1];
  if (cache.length + t > cap) {
    throw new Error(`kv cache: ${cache.length + t} positions exceed capacity ${cap}`);
  }
}

/** Write heads of qkv's column block `which` into the cache buffer at positions length..length+t-1. */
function writeInPlace(cache: KvCache, buffer: tf.Tensor3D, qkv: tf.Tensor2D, which: number): void {
  const be = tf.backend() as unknown as WasmBackend, [bh, cap, hd] = buffer.shape, t = qkv.shape[0] / cache.b;
  const [b, width, at] = [cache.b, qkv.shape[1], cache.length];
  wasmKernels!.heads(addr(be, qkv), addr(be, buffer), b, t, bh / b, hd, width, which * width / 3, cap, at, 1);
}

/**
 * Causal attention of a chunk qkv [b*t, 3D] at positions cache.length.. against the cached positions and
 * itself; stores the chunk's keys/values in layer `l` of the cache (call `advance` after the last layer).
 */
export function cachedAttention(cache: KvCache, l: number, qkv: tf.Tensor2D): tf.Tensor2D {
  const { b, heads } = cache, hd = qkv.shape[1] / 3 / heads, t = qkv.shape[0] / b, keys = cache.length + t;
  if (cache.inPlace) checkCapacity(cache, l, t);
  if (cache.inPlace && t === 1 && nativeKernels()) {
    const inputs = { qkv, k: cache.k[l], v: cache.v[l] };
    return run("AceDecodeAttention", inputs, { heads, length: cache.length }) as tf.Tensor2D;
  }
  const q = split(qkv, b, heads, hd, 0);
  if (cache.inPlace) {
    writeInPlace(cache, cache.k[l], qkv, 1);
    writeInPlace(cache, cache.v[l], qkv, 2);
  } else {
    const k = split(qkv, b, heads, hd, qkv.shape[1] / 3),
      v = split(qkv, b, heads, hd, (2 * qkv.shape[1]) / 3);
    const [oldK, oldV] = [cache.k[l], cache.v[l]];
    cache.k[l] = tf.keep(oldK ? tf.concat([oldK, k], 1) : k);
    cache.v[l] = tf.keep(oldV ? tf.concat([oldV, v], 1) : v);
    tf.dispose([oldK, oldV].filter((x) => x));
  }
  const p = attend(q, bmmNT(q, cache.k[l], keys), keys);
  return merge(bmm(p, cache.v[l]), b, heads * hd, 0);
}

/**
 * A decode step (one new position per row, tokens [b, 1]) as one native call: embedding, every layer (writing
 * the position's keys and values), final LayerNorm and tied head → logits [b, V], and the cache advanced; `head`
 * is wte, wpe and the final LayerNorm's gain and bias, `layers` each layer's eight weights (kernels.c's order).
 * Null where it does not apply (not the in-place cache, native steps off), and the caller runs the tfjs ops.
 */
export function cachedStep(cache: KvCache, tokens: tf.Tensor2D, head: tf.Tensor[], layers: tf.Tensor[][]) {
  if (!cache.inPlace || tokens.shape[0] !== cache.b || !nativeSteps() || !blasActive()) return null;
  layers.forEach((_, l) => checkCapacity(cache, l, 1));
  const w = [tokens, ...head, ...layers.flatMap((lw, l) => [...lw, cache.k[l], cache.v[l]])];
  const attrs = { heads: cache.heads, length: cache.length++, layers: layers.length };
  return run("AceDecodeStep", Object.fromEntries(w.map((t, i) => [`w${i}`, t])), attrs) as tf.Tensor2D;
}

/** Whether `generate` runs here, for heads of width hd (where the in-place cache and whole native steps do). */
export function generatesNatively(hd: number): boolean {
  return own(hd) && nativeSteps() && blasActive();
}

/**
 * A whole sampling run in one native call: prompts [b, p] (int32) of a model of `heads` heads, then each row
 * draws up to maxNew tokens with its uniforms u [b, maxNew] (row r's s-th token: u[r·maxNew + s]) at temperature
 * 1 without truncation, stopping at eos (−1: none); `head` and `layers` as cachedStep's (the cache is the
 * kernel's own). Tokens and log-probs [b, maxNew] (valid up to each row's length, log-probs 0 after), lengths
 * [b]; only where `generatesNatively`.
 */
export function generate(
  prompts: tf.Tensor2D,
  heads: number,
  u: Float64Array,
  maxNew: number,
  eos: number,
  head: tf.Tensor[],
  layers: tf.Tensor[][],
) {
  // Named by their index in kernels.c's address table (step_args), where a layer's ten entries start at 6 + 10l.
  const inputs: tf.NamedTensorMap = { w1: prompts };
  head.forEach((t, i) => inputs[`w${2 + i}`] = t);
  layers.forEach((lw, l) => lw.forEach((t, i) => inputs[`w${6 + 10 * l + i}`] = t));
  const attrs = { heads, layers: layers.length, maxNew, eos, u };
  const [tokens, logp, lengths] = tf.engine().runKernel("AceGenerate", inputs, attrs as never) as tf.Tensor[];
  return { tokens, logp, lengths };
}

/** Record that a chunk of t positions went through every layer. */
export function advance(cache: KvCache, t: number): void {
  cache.length += t;
}
