import * as tf from "@tensorflow/tfjs-core";
import { assert, assertClose } from "../../../assert.ts";
import { randomTensor as rand } from "./fixtures.ts";
import { initBackend } from "../../../../bench/engines/tfjs/model.ts";
import {
  advance,
  bmm,
  bmmNT,
  cachedAttention,
  createKvCache,
  disposeKvCache,
  kernelInfo,
  selfAttention,
  swapLast,
  useKernels,
} from "../../../../bench/engines/tfjs/ops/attention.ts";

await initBackend("wasm");

function assertAllClose(got: tf.Tensor, want: tf.Tensor, tol: number, what: string): void {
  assert.deepStrictEqual(got.shape, want.shape, `${what}: shape`);
  const g = got.dataSync(), w = want.dataSync();
  for (let i = 0; i < g.length; i++) assertClose(g[i], w[i], tol, `${what}[${i}]`);
}

/** Run f with the SIMD kernels and with plain tfjs ops. */
function bothPaths<T>(f: () => T): { kernels: T; plain: T } {
  useKernels(true);
  assert.match(kernelInfo(), /wasm SIMD/);
  const kernels = f();
  useKernels(false);
  try {
    return { kernels, plain: f() };
  } finally {
    useKernels(true);
  }
}

Deno.test("attention kernels: batched products match tf.matMul, including odd sizes and partial key ranges", () => {
  for (const [n, m, k, p] of [[3, 5, 8, 7], [4, 64, 32, 64], [2, 1, 4, 33]]) {
    const a = rand([n, m, k], 1) as tf.Tensor3D,
      b = rand([n, k, p], 2) as tf.Tensor3D,
      bt = rand([n, p, k], 3) as tf.Tensor3D;
    const r = bothPaths(() => [bmm(a, b), bmmNT(a, bt), bmmNT(a, bt, p - 1)]);
    r.kernels.forEach((t, i) => assertAllClose(t, r.plain[i], 1e-4, `product ${i} of [${n},${m},${k},${p}]`));
    // bmm reads only the first k rows of a taller b (a key/value buffer)
    const tall = tf.concat([b, rand([n, 3, p], 4)], 1) as tf.Tensor3D;
    assertAllClose(bmm(a, tall), bmm(a, b), 1e-5, "bmm on a taller buffer");
  }
});

Deno.test("attention kernels: self-attention values and gradients match the plain-ops path", () => {
  // head width 4 runs the kernels; head width 6 (not a multiple of 4) must fall back to plain ops
  for (const d of [8, 12]) checkSelfAttention(d);
});

function checkSelfAttention(d: number): void {
  const b = 3, t = 5, heads = 2;
  const qkv = rand([b * t, 3 * d], 5) as tf.Tensor2D, dy = rand([b * t, d], 6);
  const r = bothPaths(() => {
    const f = (x: tf.Tensor) => tf.sum(tf.mul(selfAttention(x as tf.Tensor2D, b, heads), dy));
    return [selfAttention(qkv, b, heads), tf.grad(f)(qkv)];
  });
  assertAllClose(r.kernels[0], r.plain[0], 1e-5, "attention output");
  assertAllClose(r.kernels[1], r.plain[1], 1e-4, "gradient wrt qkv");
}

Deno.test("attention kernels: cached attention chunk by chunk equals full causal attention", () => {
  const b = 2, heads = 2, d = 8, t = 6;
  const qkv = rand([b, t, 3 * d], 7);
  const full = selfAttention(tf.reshape(qkv, [b * t, 3 * d]) as tf.Tensor2D, b, heads);
  for (const on of [true, false]) {
    useKernels(on);
    const cache = createKvCache(1, b, heads, d / heads, 8);
    const chunks: tf.Tensor[] = [];
    for (const [start, len] of [[0, 3], [3, 1], [4, 2]]) {
      const part = tf.reshape(tf.slice(qkv, [0, start, 0], [b, len, 3 * d]), [b * len, 3 * d]) as tf.Tensor2D;
      chunks.push(tf.reshape(cachedAttention(cache, 0, part), [b, len, d]));
      advance(cache, len);
    }
    disposeKvCache(cache);
    assertAllClose(tf.reshape(tf.concat(chunks, 1), [b * t, d]), full, 1e-5, `cached (kernels ${on})`);
  }
  useKernels(true);
});

Deno.test("attention kernels: the SIMD transpose of the last two axes equals tf.transpose", () => {
  for (const shape of [[4, 8], [2048, 128], [3, 12, 4], [2, 3, 8, 16], [5, 6], [2, 7, 4]]) {
    const x = rand(shape, 8), n = shape.length;
    const r = bothPaths(() => swapLast(x));
    const want = tf.transpose(x, [...shape.slice(0, -2).map((_, i) => i), n - 1, n - 2]);
    assertAllClose(r.kernels, want, 0, `swapLast [${shape}]`);
    assertAllClose(r.plain, want, 0, `plain swapLast [${shape}]`);
    const w = rand([...shape.slice(0, -2), shape[n - 1], shape[n - 2]], 9);
    const g = bothPaths(() => tf.grad((a: tf.Tensor) => tf.sum(tf.mul(swapLast(a), w)))(x));
    assertAllClose(g.kernels, g.plain, 0, `gradient of swapLast [${shape}]`);
  }
});
