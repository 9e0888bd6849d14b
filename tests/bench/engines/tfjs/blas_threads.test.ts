// The blas backend's threads (ops/blas_threads.ts, ops/blas.ts planGemm/setThreads): how products are cut, that
// the bits depend only on the cut (never on the threads that ran it), and that helpers start, fail and stop cleanly.
import * as tf from "@tensorflow/tfjs-core";
import { assert, assertEquals, ok, rejects } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  getWeightsAsync,
  initBackend,
  sample,
  tokenLogProbs,
  trainStep,
} from "../../../../bench/engines/tfjs/model.ts";
import {
  blasError,
  blasInfo,
  planGemm,
  setThreads,
  SPLIT_FLOPS,
  stopThreads,
  threadsInUse,
} from "../../../../bench/engines/tfjs/ops/blas.ts";
import { MAX_CALLS, setBlasThreads, waitChange } from "../../../../bench/engines/tfjs/ops/blas_threads.ts";
import { baseKey, presetSettings, threadsAsked } from "../../../../bench/engines/tfjs/settings.ts";
import { join } from "node:path";
import { runCli } from "../../../run_cli.ts";
import { tempDir } from "../../../temp.ts";
import { skipping } from "../../../external_inputs.ts";

const G = { m: 100, n: 384, k: 128, transA: false, transB: false, lda: 128, ldb: 384 };

Deno.test("planGemm: one call per product unless splitting; a large single product in two row blocks", () => {
  assertEquals(planGemm(G, 1, [0, 0, 0], [0, 0, 0], false).length, 1);
  // A batch keeps one call per product (each unchanged), split or not.
  const batch = planGemm({ ...G, m: 64 }, 3, [1000, 2000, 3000], [64 * 128, 0, 64 * 384], true);
  assertEquals(batch.map((c) => [c.m, c.a, c.b, c.c]), [
    [64, 1000, 2000, 3000],
    [64, 1000 + 4 * 64 * 128, 2000, 3000 + 4 * 64 * 384],
    [64, 1000 + 2 * 4 * 64 * 128, 2000, 3000 + 2 * 4 * 64 * 384],
  ]);
  // 100 rows: blocks of 64 (a multiple of 16 rows) and 36; A's and C's lower block start 64 rows in.
  const [top, bottom] = planGemm(G, 1, [1000, 2000, 3000], [0, 0, 0], true);
  assertEquals([top.m, bottom.m, top.a, bottom.a, bottom.b, bottom.c], [
    64,
    36,
    1000,
    1000 + 4 * 64 * 128,
    2000,
    3000 + 4 * 64 * 384,
  ]);
  // With A transposed (stored k × m), the lower block starts 64 columns in.
  const [, lowT] = planGemm({ ...G, transA: true, lda: 100 }, 1, [1000, 2000, 3000], [0, 0, 0], true);
  assertEquals(lowT.a, 1000 + 4 * 64);
  // Below SPLIT_FLOPS, or too few rows for two tiles, a product stays whole.
  const small = { ...G, m: 16, n: 16, k: 16, lda: 16, ldb: 16 };
  assert(2 * 16 ** 3 < SPLIT_FLOPS);
  assertEquals(planGemm(small, 1, [0, 0, 0], [0, 0, 0], true).length, 1);
  assertEquals(planGemm({ ...G, m: 31, n: 4096, ldb: 4096 }, 1, [0, 0, 0], [0, 0, 0], true).length, 1);
});

Deno.test("blasThreads setting: absent = 1, 0 = one per core (at least 2); only 1 against not-1 moves the base key", () => {
  const s = presetSettings("tiny");
  assertEquals(threadsAsked(s.blasThreads), 1);
  assert(threadsAsked(0) >= 2);
  const key = (n?: number) => baseKey({ ...s, blasThreads: n });
  assertEquals(key(1), key(undefined));
  assert(key(2) !== key(1), "cutting products changes the base model's bits, so its key");
  assertEquals(key(2), key(3));
  assertEquals(key(2), key(0));
});

Deno.test("waitChange: the new value once it changes; the old one after its timeout, without hanging", () => {
  const ctrl = new Int32Array(new SharedArrayBuffer(8));
  const t0 = performance.now();
  assertEquals(waitChange(ctrl, 0, 0, 20), 0);
  ok(performance.now() - t0 >= 15, "slept for its timeout");
  Atomics.store(ctrl, 1, 7);
  assertEquals(waitChange(ctrl, 1, 0, 20), 7);
});

await initBackend("blas").catch(() => initBackend("wasm"));
const available = blasInfo() !== null;
skipping("the blas thread tests", available ? null : blasError());
const test = (name: string, fn: () => void | Promise<void>) =>
  Deno.test({ name, ignore: !available, sanitizeOps: false, sanitizeResources: false, fn });

/** Run `f` with the products on `threads` threads, at most `cores` started; always back to one thread after. */
async function withThreads<T>(threads: number, cores: number, f: () => T | Promise<T>): Promise<T> {
  await setThreads(threads, cores);
  assertEquals(threadsInUse(), { threads: Math.min(threads, cores), split: threads > 1 });
  try {
    return await f();
  } finally {
    stopThreads();
  }
}

test("blas threads: a cut product has the same bits on 1 and 2 threads, and is a correct product", async () => {
  const rng = Rng.seeded(5);
  const a = tf.tensor2d(Float32Array.from({ length: 300 * 128 }, () => rng.normal()), [300, 128]);
  const b = tf.tensor2d(Float32Array.from({ length: 128 * 384 }, () => rng.normal()), [128, 384]);
  try {
    const product = () => tf.tidy(() => tf.matMul(a, b).dataSync() as Float32Array);
    const two = await withThreads(2, 2, product), oneCut = await withThreads(2, 1, product);
    assertEquals(threadsInUse(), { threads: 1, split: false });
    assertEquals(two, oneCut, "the threads that ran the blocks must not change a bit");
    const whole = product(); // one call: may differ in the last bits (a row's sum depends on its call's rows)
    const A = a.dataSync(), B = b.dataSync();
    for (const [r, c] of [[0, 0], [63, 383], [64, 7], [299, 200]]) {
      let ref = 0;
      for (let j = 0; j < 128; j++) ref += A[r * 128 + j] * B[j * 384 + c];
      ok(Math.abs(two[r * 384 + c] - ref) < 1e-4, `C[${r}, ${c}] = ${two[r * 384 + c]}, float64 ${ref}`);
      ok(Math.abs(whole[r * 384 + c] - ref) < 1e-4, `one call: C[${r}, ${c}]`);
    }
  } finally {
    tf.dispose([a, b]);
  }
});

test("blas threads: more products than one hand-off holds (chunks) equal the same products in one thread", async () => {
  const n = MAX_CALLS + 37, rng = Rng.seeded(6);
  const a = tf.tensor3d(Float32Array.from({ length: n * 8 * 8 }, () => rng.normal()), [n, 8, 8]);
  const b = tf.tensor3d(Float32Array.from({ length: n * 8 * 8 }, () => rng.normal()), [n, 8, 8]);
  try {
    const product = () => tf.tidy(() => tf.matMul(a, b).dataSync() as Float32Array);
    const alone = product(); // a batch is one call per product either way, so the bits match too
    assertEquals(await withThreads(2, 2, product), alone);
  } finally {
    tf.dispose([a, b]);
  }
});

test("blas threads: sampling and a training step give the same bits on 2 threads as cut on one", async () => {
  const cfg = { vocab: 64, dModel: 128, heads: 4, layers: 2, context: 24 };
  const prompts = Int32Array.from({ length: 64 * 8 }, (_, i) => (i * 7) % 64);
  const tokens = Int32Array.from({ length: 32 * 24 }, (_, i) => (i * 13) % 64);
  const run = async () => {
    const model = createModel(cfg, Rng.seeded(1));
    const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 1 });
    const batch = tf.tensor2d(tokens, [32, 24], "int32");
    try {
      const s = sample(model, prompts, 64, { maxNew: 12, temperature: 1, topP: 1, rng: Rng.seeded(2) });
      const loss = () => tf.neg(tf.mean(tokenLogProbs(model, batch).logp)) as tf.Scalar;
      const step = trainStep(model, opt, loss);
      return { s, step, weights: await getWeightsAsync(model) };
    } finally {
      batch.dispose();
      disposeModel(model);
      opt.m.forEach((v) => v.dispose());
      opt.v.forEach((v) => v.dispose());
    }
  };
  const two = await withThreads(2, 2, run), cut = await withThreads(2, 1, run);
  assertEquals(two.s, cut.s);
  assertEquals(two.step, cut.step);
  assertEquals(two.weights, cut.weights);
  const again = await withThreads(2, 2, run);
  assertEquals(again.s, two.s, "run to run");
});

test("blas threads: a helper that cannot load the library is a one-line error naming it; stop leaves one thread", async () => {
  await rejects(setBlasThreads(2, "/nonexistent/libopenblas.so"), (e: Error) => {
    ok(/blas thread: \/nonexistent\/libopenblas\.so: /.test(e.message), e.message);
    ok(!e.message.includes("\n"), e.message);
    return true;
  });
  assertEquals(threadsInUse().threads, 1);
  await rejects(setThreads(0), /positive integer/);
});

test("deno task sweep with blasThreads 2 (deno.json's permissions): runs, records the setting, exits", async () => {
  const dir = tempDir("acebench-blas-threads-");
  const config = JSON.parse(
    Deno.readTextFileSync(new URL("../../../../bench/configs/ci-tfjs.json", import.meta.url)),
  );
  config.name = "blas-threads";
  config.seeds = [0];
  config.settings = { ...config.settings, backend: "blas", blasThreads: 2 };
  Deno.writeTextFileSync(join(dir, "config.json"), JSON.stringify(config));
  const out = join(dir, "sweep");
  const r = await runCli([
    "sweep",
    "--config",
    join(dir, "config.json"),
    "--smoke",
    "--out",
    out,
    "--no-report",
  ]);
  assertEquals(r.code, 0, `sweep exited ${r.code}:\n${(r.stdout + r.stderr).slice(-3000)}`);
  const runs = [...Deno.readDirSync(join(out, "runs"))].map((e) => e.name);
  assert(runs.length > 0, "no run");
  for (const run of runs) {
    const cfg = JSON.parse(Deno.readTextFileSync(join(out, "runs", run, "config.json")));
    assertEquals(cfg.settings.blasThreads, 2, `${run}: the setting is recorded with the run`);
    const threads = Math.min(2, navigator.hardwareConcurrency ?? 1);
    assertEquals(cfg.backendDecision.blasThreads, { threads, split: true }, `${run}: the threads it ran on`);
  }
});

Deno.test("deno task sweep with blasThreads 2 on wasm: said on stderr and recorded as one thread, not dropped", async () => {
  const dir = tempDir("acebench-blas-threads-wasm-");
  const config = JSON.parse(
    Deno.readTextFileSync(new URL("../../../../bench/configs/ci-tfjs.json", import.meta.url)),
  );
  config.name = "blas-threads-wasm";
  config.seeds = [0];
  config.settings = { ...config.settings, backend: "wasm", blasThreads: 2 };
  Deno.writeTextFileSync(join(dir, "config.json"), JSON.stringify(config));
  const out = join(dir, "sweep");
  const r = await runCli([
    "sweep",
    "--config",
    join(dir, "config.json"),
    "--smoke",
    "--out",
    out,
    "--no-report",
  ]);
  assertEquals(r.code, 0, `sweep exited ${r.code}:\n${(r.stdout + r.stderr).slice(-3000)}`);
  ok(r.stderr.includes("blasThreads 2 ignored: backend wasm has no BLAS"), r.stderr.slice(-3000));
  for (const run of [...Deno.readDirSync(join(out, "runs"))].map((e) => e.name)) {
    const cfg = JSON.parse(Deno.readTextFileSync(join(out, "runs", run, "config.json")));
    assertEquals(cfg.backendDecision.blasThreads, { threads: 1, split: false }, run);
  }
});
