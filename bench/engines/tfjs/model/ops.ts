// Differentiable building blocks with hand-written gradients, shaped for tfjs-wasm's fast paths.
//
// Measured on wasm (see docs/tfjs-model.md): a 2-D matMul without transpose flags goes to XNNPACK (~25 GFLOP/s),
// any transpose flag or batch dimension falls to a naive loop (~1.8 GFLOP/s), while an explicit 2-D transpose
// costs a few ms. So every gradient here transposes explicitly and multiplies without flags.
import * as tf from "@tensorflow/tfjs-core";

type T2 = tf.Tensor2D;
// tfjs types a custom-gradient body as variadic (Tensor | save)[]; ours take fixed positional arguments.
type Body = Parameters<typeof tf.customGrad>[0];

/** x [N, K] @ w [K, M] → [N, M]; gradients dx = dy wᵀ, dw = xᵀ dy through explicit transposes. */
export const linear = tf.customGrad(((x: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
  save([x, w]);
  return {
    value: tf.matMul(x as T2, w as T2),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const [xs, ws] = saved as T2[];
      const g = dy as T2;
      return [tf.matMul(g, tf.transpose(ws)), tf.matMul(tf.transpose(xs), g)];
    },
  };
}) as unknown as Body) as unknown as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** LayerNorm over the last axis of x [N, D] with gain g [D] and bias b [D] (eps 1e-5, as torch). */
export const layerNorm = tf.customGrad(((x: tf.Tensor, g: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  const d = x.shape[x.shape.length - 1];
  const mean = tf.mean(x, -1, true);
  const xc = tf.sub(x, mean);
  const rstd = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), 1e-5));
  const xhat = tf.mul(xc, rstd);
  save([xhat, rstd, g]);
  return {
    value: tf.add(tf.mul(xhat, g), b),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const [xh, rs, gs] = saved;
      const gy = dy as tf.Tensor;
      const dxhat = tf.mul(gy, gs);
      // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), the standard LayerNorm backward.
      const m1 = tf.mean(dxhat, -1, true);
      const m2 = tf.mean(tf.mul(dxhat, xh), -1, true);
      const dx = tf.mul(rs, tf.sub(tf.sub(dxhat, m1), tf.mul(xh, m2)));
      const rows = gy.size / d;
      const dg = tf.sum(tf.reshape(tf.mul(gy, xh), [rows, d]), 0);
      const db = tf.sum(tf.reshape(gy, [rows, d]), 0);
      return [dx, dg, db];
    },
  };
}) as unknown as Body) as unknown as (x: tf.Tensor2D, g: tf.Tensor1D, b: tf.Tensor1D) => tf.Tensor2D;

/** One-hot rows of int32 ids [N] as float32 [N, depth]; an embedding lookup is oneHot(ids) @ table. */
export function oneHotF(ids: tf.Tensor1D, depth: number): tf.Tensor2D {
  return tf.cast(tf.oneHot(ids, depth), "float32") as tf.Tensor2D;
}
