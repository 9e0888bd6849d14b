import * as tf from "@tensorflow/tfjs-core";
import { assert, assertClose, assertEquals, rejects } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import { randomTensor as rand } from "./fixtures.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  getWeightsAsync,
  initBackend,
  type Model,
  tokenLogProbs,
  trainStep,
} from "../../../../bench/engines/tfjs/model.ts";
import { backendInUse } from "../../../../bench/engines/tfjs/backend.ts";
import {
  DataParallelTrainer,
  fullBatch,
  maskedNll,
  SamplerPool,
} from "../../../../bench/engines/tfjs/parallel.ts";
import { selfAttention, useKernels } from "../../../../bench/engines/tfjs/ops/attention.ts";
import { blasError, blasInfo } from "../../../../bench/engines/tfjs/ops/blas.ts";
import { skipping } from "../../../external_inputs.ts";

await initBackend("wasm");
const available = blasInfo() !== null;
skipping("the blas tests", available ? null : blasError());
const test = (name: string, fn: () => void | Promise<void>) => Deno.test({ name, ignore: !available, fn });

const CFG = { vocab: 11, dModel: 32, heads: 4, layers: 2, context: 12 };

/** float64 op(a) @ op(b) of float32 [.., r, c] data, batch by batch (b broadcast when 2-D). */
function reference(
  a: tf.Tensor,
  b: tf.Tensor,
  ta: boolean,
  tb: boolean,
): { data: Float64Array; shape: number[] } {
  const A = a.dataSync(), B = b.dataSync(), [ar, ac] = a.shape.slice(-2), [br, bc] = b.shape.slice(-2);
  const [m, k] = ta ? [ac, ar] : [ar, ac],
    n = tb ? br : bc,
    batch = a.shape.slice(0, -2).reduce((x, y) => x * y, 1);
  const bStride = b.rank === 2 ? 0 : br * bc, out = new Float64Array(batch * m * n);
  for (let i = 0; i < batch; i++) {
    for (let r = 0; r < m; r++) {
      for (let c = 0; c < n; c++) {
        let s = 0;
        for (let j = 0; j < k; j++) {
          s += A[i * ar * ac + (ta ? j * ac + r : r * ac + j)] *
            B[i * bStride + (tb ? c * bc + j : j * bc + c)];
        }
        out[(i * m + r) * n + c] = s;
      }
    }
  }
  return { data: out, shape: [...a.shape.slice(0, -2), m, n] };
}

function assertNear(got: tf.Tensor, want: ArrayLike<number>, tol: number, what: string): void {
  const g = got.dataSync();
  assertEquals(g.length, want.length, `${what}: size`);
  for (let i = 0; i < g.length; i++) {
    assertClose(g[i], want[i], tol * (1 + Math.abs(want[i])), `${what}[${i}]`);
  }
}

test("blas: BatchMatMul equals a float64 product for every transpose flag, batched, broadcast, odd and empty sizes", async () => {
  assertEquals(await initBackend("blas"), "blas");
  const cases: [number[], number[]][] = [
    [[7, 5], [5, 3]],
    [[64, 128], [128, 96]],
    [[3, 9, 4], [3, 4, 6]],
    [[2, 2, 5, 3], [2, 2, 3, 4]],
    [[4, 6, 5], [5, 7]],
    [[3, 0], [0, 4]],
  ];
  for (const [sa, sb] of cases) {
    for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]]) {
      const flip = (s: number[], t: boolean) => t ? [...s.slice(0, -2), s.at(-1)!, s.at(-2)!] : s;
      const a = rand(flip(sa, ta), 1), b = rand(flip(sb, tb), 2);
      const want = reference(a, b, ta, tb), got = tf.matMul(a, b, ta, tb);
      assertEquals(got.shape, want.shape, `shape of [${sa}]x[${sb}] flags ${ta},${tb}`);
      assertNear(got, want.data, 1e-5, `[${sa}]x[${sb}] flags ${ta},${tb}`);
    }
  }
});

test("blas: a broadcast batch shape goes to tfjs-wasm's own kernel", async () => {
  await initBackend("blas");
  const a = rand([1, 3, 4], 3), b = rand([2, 4, 5], 4);
  const got = tf.matMul(a, b), want = reference(tf.tile(a, [2, 1, 1]), b, false, false);
  assertNear(got, want.data, 1e-5, "broadcast a");
});

test("blas: one thread per product, and a worker's gradient is the main thread's, bit for bit", async () => {
  await initBackend("blas");
  assertEquals(blasInfo()!.threads, 1);
  // A one-worker trainer computes the whole batch's gradient in a worker that loads the library itself.
  const model = createModel(CFG, Rng.seeded(5)), opt = createOptimizer(model, { lr: 1e-2, clipNorm: 1 });
  const rng = Rng.seeded(6), b = fullBatch(Int32Array.from({ length: 6 * 12 }, () => rng.int(11)), 6, 12);
  const vars = [...model.params.values()];
  const here = tf.variableGrads(() => maskedNll(model, { ...b, denom: 6 * 11 }), vars).grads;
  const trainer = await DataParallelTrainer.create(model, opt, 1);
  try {
    const { grads } = await trainer.gradients(b);
    vars.forEach((v, i) =>
      assert.ok(grads[i].every((x, j) => Object.is(x, here[v.name].dataSync()[j])), v.name)
    );
  } finally {
    trainer.close();
    disposeModel(model);
  }
  assertEquals(blasInfo()!.threads, 1);
});

test("blas: pooled sampling is refused (rows are not batch-invariant there)", async () => {
  await initBackend("blas");
  const model = createModel(CFG, Rng.seeded(5));
  try {
    await rejects(SamplerPool.start(model, 2), /SamplerPool: on blas a row's logits depend on its batch/);
  } finally {
    disposeModel(model);
  }
});

test("blas: self-attention values and gradients equal the plain-ops path", async () => {
  await initBackend("blas");
  for (const t of [5, 9]) {
    const b = 3, heads = 2, d = 8, qkv = rand([b * t, 3 * d], 8) as tf.Tensor2D, dy = rand([b * t, d], 9);
    const f = (x: tf.Tensor) => tf.sum(tf.mul(selfAttention(x as tf.Tensor2D, b, heads), dy));
    const blas = [selfAttention(qkv, b, heads), tf.grad(f)(qkv)];
    useKernels(false);
    try {
      const plain = [selfAttention(qkv, b, heads), tf.grad(f)(qkv)];
      assertNear(blas[0], plain[0].dataSync(), 1e-5, `attention output, t ${t}`);
      assertNear(blas[1], plain[1].dataSync(), 1e-4, `gradient wrt qkv, t ${t}`);
    } finally {
      useKernels(true);
    }
  }
});

/** Weights after `steps` Adam steps from seed 1 on the backend in use, and the log-probs before them. */
async function trained(steps: number): Promise<{ logp: number[][]; weights: Record<string, Float32Array> }> {
  const model: Model = createModel(CFG, Rng.seeded(1)),
    opt = createOptimizer(model, { lr: 1e-2, clipNorm: 1 });
  const rng = Rng.seeded(2);
  const batch = tf.tensor2d(
    Array.from({ length: 6 }, () => Array.from({ length: 12 }, () => rng.int(11))),
    undefined,
    "int32",
  );
  const logp = tf.tidy(() => tokenLogProbs(model, batch).logp.arraySync());
  for (let i = 0; i < steps; i++) {
    trainStep(model, opt, () => tf.neg(tf.mean(tokenLogProbs(model, batch).logp)) as tf.Scalar);
  }
  const weights = Object.fromEntries(
    Object.entries(await getWeightsAsync(model)).map(([k, v]) => [k, v.data]),
  );
  disposeModel(model);
  return { logp, weights };
}

test("blas: the model agrees with wasm (XNNPACK) and trains deterministically", async () => {
  await initBackend("wasm");
  const onWasm = await trained(3);
  await initBackend("blas");
  const [first, second] = [await trained(3), await trained(3)];
  onWasm.logp.forEach((r, b) =>
    r.forEach((v, t) => assertClose(first.logp[b][t], v, 1e-5, `logp[${b}][${t}]`))
  );
  for (const [name, w] of Object.entries(onWasm.weights)) {
    assertNear(tf.tensor(first.weights[name]), w, 1e-3, `weights ${name} after 3 steps`);
    assert.deepStrictEqual(
      second.weights[name],
      first.weights[name],
      `blas run repeats bit for bit: ${name}`,
    );
  }
});

test("blas: data-parallel workers train on the BLAS", async () => {
  await initBackend("blas");
  const model = createModel(CFG, Rng.seeded(3));
  const opt = createOptimizer(model, { lr: 1e-2, clipNorm: 1 });
  const trainer = await DataParallelTrainer.create(model, opt, 2);
  try {
    const rng = Rng.seeded(4), tokens = Int32Array.from({ length: 4 * 12 }, () => rng.int(11));
    const { loss } = await trainer.step(fullBatch(tokens, 4, 12));
    assert(Number.isFinite(loss) && loss > 0, `loss ${loss}`);
  } finally {
    trainer.close();
    disposeModel(model);
  }
  assertEquals(backendInUse(), "blas");
});

/** initBackend(name) in a fresh deno process with `flags`; its one output line. */
async function probe(name: string, flags: string[], env: Record<string, string> = {}): Promise<string> {
  const script = new URL("./blas_probe.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), { args: ["run", ...flags, script, name], env })
    .output();
  return new TextDecoder().decode(out.stdout).trim();
}

const BASE = ["--allow-read", "--allow-env", "--allow-sys"];

test("blas: auto uses the BLAS where it loads and wasm without --allow-ffi; blas itself says why not", async () => {
  await initBackend("blas");
  assertEquals(await probe("auto", [...BASE, "--allow-ffi"]), `backend blas core ${blasInfo()!.core}`);
  // OPENBLAS_CORETYPE set before the process starts picks the kernels (Haswell runs on any AVX2 machine).
  if (["Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen"].includes(blasInfo()!.core)) {
    const env = { OPENBLAS_CORETYPE: "Haswell" };
    assertEquals(await probe("blas", [...BASE, "--allow-ffi"], env), "backend blas core Haswell");
  }
  assertEquals(await probe("auto", BASE), "backend wasm");
  assertEquals(
    await probe("blas", BASE),
    "error blas backend: FFI not permitted (run deno with --allow-ffi)",
  );
  assertEquals(
    await probe("blas", [...BASE, "--allow-ffi"], { ACEBENCH_BLAS: "/nonexistent/libopenblas.so" }),
    "error blas backend: ACEBENCH_BLAS did not load (/nonexistent/libopenblas.so: no such file)",
  );
});
