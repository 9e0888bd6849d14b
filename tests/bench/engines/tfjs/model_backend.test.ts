import * as tf from "@tensorflow/tfjs-core";
import { assertClose, assertEquals, rejects } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  createModel,
  disposeModel,
  initBackend,
  tokenLogProbs,
} from "../../../../bench/engines/tfjs/model.ts";
import { blasInfo } from "../../../../bench/engines/tfjs/ops/blas.ts";

Deno.test("backend: unknown or missing backends are one-line errors saying how to get them", async () => {
  await rejects(
    initBackend("bogus"),
    /unknown backend 'bogus' \(expected one of auto, blas, wasm, cpu, webgpu, tensorflow\)/,
  );
  await rejects(
    initBackend("tensorflow"),
    /@tensorflow\/tfjs-node is not installed; install it on a machine with internet/,
  );
});

Deno.test("backend: auto picks blas where it loads, else wasm; wasm (SIMD kernels) and cpu (plain ops) agree", async () => {
  assertEquals(await initBackend("auto"), blasInfo() ? "blas" : "wasm");
  await initBackend("wasm");
  const m = createModel({ vocab: 9, dModel: 16, heads: 4, layers: 2, context: 10 }, Rng.seeded(1));
  const rng = Rng.seeded(2);
  const rows = Array.from({ length: 3 }, () => Array.from({ length: 10 }, () => rng.int(9)));
  const logp = () => tf.tidy(() => tokenLogProbs(m, tf.tensor2d(rows, undefined, "int32")).logp.arraySync());
  const onWasm = logp();
  try {
    assertEquals(await initBackend("cpu"), "cpu");
    const onCpu = logp();
    onCpu.forEach((r, b) => r.forEach((v, t) => assertClose(v, onWasm[b][t], 1e-5, `logp[${b}][${t}]`)));
  } finally {
    await initBackend("wasm");
    disposeModel(m);
  }
});
