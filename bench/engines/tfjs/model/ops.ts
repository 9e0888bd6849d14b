// Differentiable building blocks with hand-written gradients, shaped for tfjs-wasm's fast paths.
//
// Measured on wasm (see docs/tfjs-model.md): a 2-D matMul without transpose flags goes to XNNPACK (~25 GFLOP/s),
// any transpose flag or batch dimension falls to a naive loop (~1.8 GFLOP/s), while an explicit 2-D transpose
// costs a few ms. So every gradient here transposes explicitly and multiplies without flags, except on the
// BLAS (ops/blas.ts), which takes transpose flags at full speed.
import * as tf from "@tensorflow/tfjs-core";
import { grad, product, swapLast } from "../ops/attention.ts";
import { blasActive } from "../ops/blas.ts";
import { addr, compileWat, type Fn, type KernelArgs, nativeAddr, type WasmBackend } from "../ops/wasm.ts";
import { nativeKernels, nativeThreads } from "../ops/native.ts";

type T2 = tf.Tensor2D;

/** x [N, K] @ w [K, M] → [N, M]; gradients dx = dy wᵀ, dw = xᵀ dy (explicit transposes unless on the BLAS). */
export const linear = product<T2>(
  (x, w) => tf.matMul(x, w),
  (g, x, w) =>
    blasActive()
      ? [tf.matMul(g, w, false, true), tf.matMul(x, g, true, false)]
      : [tf.matMul(g, swapLast(w)), tf.matMul(swapLast(x), g)],
);

let lnKernels: { forward: Fn; backward: Fn } | null = null;
let fusedLn = true;

/** Switch the fused wasm LayerNorm kernels off (plain tf ops) or back on: for side-by-side tests. */
export function useFusedLayerNorm(on: boolean): void {
  fusedLn = on;
}

const lnOwn = (d: number) => fusedLn && lnKernels !== null && d % 4 === 0 && tf.getBackend() === "wasm";

/** Forward kernel: x [n, d], g, b → y, xhat [n, d], rstd [n] (the native kernels' threads: the same bits). */
function lnForwardKernel({ inputs: { x, g, b }, backend }: KernelArgs): tf.TensorInfo[] {
  const be = backend as WasmBackend, [n, d] = x.shape, native = nativeKernels();
  const outs = [[n, d], [n, d], [n, 1]].map((shape) => be.makeOutput(shape, "float32")),
    at = [x, g, b, ...outs];
  if (native) native.ace_layer_norm(...at.map((t) => nativeAddr(be, t)), n, d, nativeThreads());
  else lnKernels!.forward(...at.map((t) => addr(be, t)), n, d, 1e-5);
  return outs;
}

/** Backward kernel: dy, xhat [n, d], rstd [n], g → dx [n, d], dg [d], db [d]. */
function lnBackwardKernel({ inputs: { dy, xhat, rstd, g }, backend }: KernelArgs): tf.TensorInfo[] {
  const be = backend as WasmBackend, [n, d] = dy.shape;
  const outs = [[n, d], [d], [d]].map((shape) => be.makeOutput(shape, "float32"));
  for (const o of outs.slice(1)) be.wasm.HEAPF32.fill(0, addr(be, o) / 4, addr(be, o) / 4 + d); // accumulated
  lnKernels!.backward(...[dy, xhat, rstd, g, ...outs].map((t) => addr(be, t)), n, d);
  return outs;
}

/** Token scores kernel (native): x [n, V], targets [n] → scores [n, 2] (log-prob, entropy), log-softmax [n, V]. */
function scoresKernel({ inputs: { x, targets }, backend }: KernelArgs): tf.TensorInfo[] {
  const be = backend as WasmBackend, [n, v] = x.shape;
  const outs = [[n, 2], [n, v]].map((shape) => be.makeOutput(shape, "float32")), at = [x, targets, ...outs];
  nativeKernels()!.ace_token_scores(...at.map((t) => nativeAddr(be, t)), n, v, nativeThreads());
  return outs;
}

/** Its gradient: log-softmax [n, V], scores [n, 2], targets [n], dy [n, 2] → dx [n, V]. */
function scoresGradKernel({ inputs: { logsm, scores, targets, dy }, backend }: KernelArgs): tf.TensorInfo {
  const be = backend as WasmBackend, [n, v] = logsm.shape, out = be.makeOutput([n, v], "float32");
  const at = [logsm, scores, targets, dy, out].map((t) => nativeAddr(be, t));
  nativeKernels()!.ace_token_scores_grad(...at, n, v, nativeThreads());
  return out;
}

/**
 * Per row of logits [N, V]: the log-prob of its target (int32 [N]) and the entropy (nats), as [N, 2], fused on
 * the native kernels (one pass per row, the gradient from the saved log-softmax); null while they are off.
 */
export function tokenScores(logits: T2, targets: tf.Tensor1D): T2 | null {
  if (!nativeKernels()) return null;
  return grad<(x: T2) => T2>((x: T2, save: tf.GradSaveFunc) => {
    const [value, logsm] = tf.engine().runKernel("AceTokenScores", { x, targets }, {}) as tf.Tensor[];
    save([logsm, value]);
    return {
      value,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], [logsm, scores]: tf.Tensor[]) =>
        tf.engine().runKernel("AceTokenScoresGrad", { logsm, scores, targets, dy: dy as tf.Tensor }, {}),
    };
  })(logits);
}

/**
 * Compile layernorm.wat and register the fused LayerNorm kernels on tfjs-wasm, and the token scores
 * (idempotent; not on other backends).
 */
export async function loadLayerNormKernels(): Promise<void> {
  const kernels = {
    AceLayerNorm: lnForwardKernel,
    AceLayerNormGrad: lnBackwardKernel,
    AceTokenScores: scoresKernel,
    AceTokenScoresGrad: scoresGradKernel,
  };
  lnKernels ??= await compileWat(new URL("./layernorm.wat", import.meta.url), kernels) as typeof lnKernels;
}

/** xhat = (x - mean) * rstd and rstd = 1/sqrt(var + 1e-5) per row, in plain tf ops. */
function normalize(x: tf.Tensor): [tf.Tensor, tf.Tensor] {
  const mean = tf.mean(x, -1, true);
  const xc = tf.sub(x, mean);
  const rstd = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), 1e-5));
  return [tf.mul(xc, rstd), rstd];
}

/** The standard LayerNorm backward in plain tf ops: dx, dg, db. */
function layerNormGrad(gy: tf.Tensor, xh: tf.Tensor, rs: tf.Tensor, gs: tf.Tensor): tf.Tensor[] {
  const d = gy.shape[gy.shape.length - 1], rows = gy.size / d;
  const dxhat = tf.mul(gy, gs);
  // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
  const m1 = tf.mean(dxhat, -1, true);
  const m2 = tf.mean(tf.mul(dxhat, xh), -1, true);
  const dx = tf.mul(rs, tf.sub(tf.sub(dxhat, m1), tf.mul(xh, m2)));
  return [dx, tf.sum(tf.reshape(tf.mul(gy, xh), [rows, d]), 0), tf.sum(tf.reshape(gy, [rows, d]), 0)];
}

/** LayerNorm over the last axis of x [N, D] with gain g [D] and bias b [D] (eps 1e-5, as torch). */
export const layerNorm = grad<(x: T2, g: tf.Tensor1D, b: tf.Tensor1D) => T2>(
  (x: tf.Tensor, g: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
    const own = lnOwn(x.shape[x.shape.length - 1]) && x.rank === 2;
    let value: tf.Tensor, xhat: tf.Tensor, rstd: tf.Tensor;
    if (own) [value, xhat, rstd] = tf.engine().runKernel("AceLayerNorm", { x, g, b }, {}) as tf.Tensor[];
    else {
      [xhat, rstd] = normalize(x);
      value = tf.add(tf.mul(xhat, g), b);
    }
    save([xhat, rstd, g]);
    return {
      value,
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [xhat, rstd, g] = saved, gy = dy as tf.Tensor;
        if (!own) return layerNormGrad(gy, xhat, rstd, g);
        return tf.engine().runKernel("AceLayerNormGrad", { dy: gy, xhat, rstd, g }, {}) as tf.Tensor[];
      },
    };
  },
);

/** One-hot rows of int32 ids [N] as float32 [N, depth]; an embedding lookup is oneHot(ids) @ table. */
export function oneHotF(ids: tf.Tensor1D, depth: number): tf.Tensor2D {
  return tf.cast(tf.oneHot(ids, depth), "float32") as tf.Tensor2D;
}
