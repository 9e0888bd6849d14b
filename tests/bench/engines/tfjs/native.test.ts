// The native kernels (ops/kernels.c through ops/native.ts): each equals tfjs-wasm's path within float tolerance
// (the Adam update bit for bit), gives the same bits on 1, 2 and 7 threads, and a machine without the compiler
// falls back to tfjs-wasm's path with one line.
import * as tf from "@tensorflow/tfjs-core";
import { assert, assertEquals, ok } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import { randomTensor as rand } from "./fixtures.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  drawScored,
  getWeightsAsync,
  initBackend,
  sample,
  tokenLogProbs,
  trainStep,
} from "../../../../bench/engines/tfjs/model.ts";
import {
  advance,
  cachedAttention,
  createKvCache,
  disposeKvCache,
  selfAttention,
} from "../../../../bench/engines/tfjs/ops/attention.ts";
import { layerNorm, tokenScores } from "../../../../bench/engines/tfjs/model/ops.ts";
import { blasError, blasInfo } from "../../../../bench/engines/tfjs/ops/blas.ts";
import {
  nativeDraws,
  nativeError,
  nativeInfo,
  nativeKernels,
  setNativeThreads,
  useNative,
} from "../../../../bench/engines/tfjs/ops/native.ts";
import { skipping } from "../../../external_inputs.ts";
import { tempDir } from "../../../temp.ts";
import { runCli } from "../../../run_cli.ts";
import { join } from "node:path";

await initBackend("blas").catch(() => initBackend("wasm"));
/** Whether the compiler the library is built with runs here (`ACEBENCH_CC`, else `cc`). */
async function compilerRuns(): Promise<boolean> {
  try {
    return (await new Deno.Command(Deno.env.get("ACEBENCH_CC") || "cc", { args: ["--version"] }).output())
      .success;
  } catch {
    return false;
  }
}
// Skipped only where the native kernels cannot exist (no BLAS, no compiler); a compiler that fails on
// kernels.c, or a library that does not load, fails the first test instead.
const why = blasInfo() === null
  ? blasError()
  : nativeInfo() === null && !(await compilerRuns())
  ? `${nativeError()} (install a C compiler, e.g. apt-get install gcc, or set ACEBENCH_CC)`
  : null;
const available = !skipping("the native kernel tests", why);
const test = (name: string, fn: () => void | Promise<void>) => Deno.test({ name, ignore: !available, fn });

test("native kernels: built and loaded where a compiler runs", () => {
  assertEquals(nativeError(), "", "the library did not build or load");
  assert(nativeInfo() !== null);
});

/** `f` with the native kernels on (`threads` threads) or off; back to on, one thread, after. */
function withNative<T>(on: boolean, threads: number, f: () => T): T {
  useNative(on);
  setNativeThreads(threads);
  try {
    return f();
  } finally {
    useNative(true);
    setNativeThreads(1);
  }
}

/** |a − b| ≤ tol · max(1, |b|) elementwise (a relative tolerance for sums such as a loss). */
function assertClose(a: Float32Array, b: Float32Array, tol: number, what: string): void {
  assertEquals(a.length, b.length, what);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  }
  ok(worst <= tol, `${what}: largest difference ${worst} > ${tol}`);
}

/**
 * A prompt chunk of 5 positions (tfjs path either way), then 6 decode steps of 9 rows × 4 heads of width hd
 * into a 16-position cache: every step's attention output, and the cache contents, concatenated.
 */
function decodeRun(hd = 32): Float32Array {
  const b = 9, heads = 4, d = heads * hd, layers = 2;
  const cache = createKvCache(layers, b, heads, hd, 16);
  const outs: Float32Array[] = [];
  try {
    const step = (t: number, seed: number) => {
      for (let l = 0; l < layers; l++) {
        outs.push(tf.tidy(() =>
          cachedAttention(cache, l, rand([b * t, 3 * d], seed + l) as tf.Tensor2D)
            .dataSync() as Float32Array
        ));
      }
      advance(cache, t);
    };
    step(5, 100);
    for (let s = 0; s < 6; s++) step(1, 200 + 10 * s);
    for (const x of [...cache.k, ...cache.v]) outs.push(x.dataSync() as Float32Array);
  } finally {
    disposeKvCache(cache);
  }
  return Float32Array.from(outs.flatMap((x) => Array.from(x)));
}

test("native decode attention: equals tfjs-wasm's kernels within 1e-5; the same bits on 1, 2 and 7 threads", async () => {
  assert(nativeKernels() !== null);
  const tfjs = withNative(false, 1, decodeRun), one = withNative(true, 1, decodeRun);
  assertClose(one, tfjs, 1e-5, "native against tfjs-wasm");
  const ran = async (on: boolean) => (await withNative(on, 1, () => tf.profile(decodeRun))).kernelNames;
  ok((await ran(true)).includes("AceDecodeAttention"), "the decode steps ran natively");
  ok(!(await ran(false)).includes("AceDecodeAttention"), "off: tfjs-wasm's kernels");
  for (const threads of [2, 7]) assertEquals(withNative(true, threads, decodeRun), one, `${threads} threads`);
  // Heads 12 wide: the weighted sum's last 4 columns outside its 8-column blocks.
  const narrow = () => decodeRun(12);
  assertClose(withNative(true, 1, narrow), withNative(false, 1, narrow), 1e-5, "heads of width 12");
});

/** Training attention of 3 rows × 20 positions × 4 heads of width 32: its output and gradient, concatenated. */
function attentionRun(): Float32Array {
  const qkv = rand([3 * 20, 3 * 128], 7) as tf.Tensor2D, w = rand([3 * 20, 128], 8);
  try {
    const f = (x: tf.Tensor2D) => tf.sum(tf.mul(selfAttention(x, 3, 4), w)) as tf.Scalar;
    const { value, grad } = tf.valueAndGrad(f)(qkv);
    const y = tf.tidy(() => selfAttention(qkv, 3, 4));
    const out = Float32Array.from([...y.dataSync(), ...grad.dataSync(), ...value.dataSync()]);
    tf.dispose([value, grad, y]);
    return out;
  } finally {
    tf.dispose([qkv, w]);
  }
}

test("native causal softmax (training attention): values and gradient within 1e-5 of tfjs's; same bits on 1, 2, 7 threads", async () => {
  const tfjs = withNative(false, 1, attentionRun), one = withNative(true, 1, attentionRun);
  assertClose(one, tfjs, 1e-5, "native against tfjs-wasm");
  const ran = async (on: boolean) => (await withNative(on, 1, () => tf.profile(attentionRun))).kernelNames;
  ok((await ran(true)).includes("AceCausalSoftmaxGrad"), "the gradient ran natively");
  ok(!(await ran(false)).includes("AceCausalSoftmax"), "off: tfjs-wasm's kernels");
  for (const threads of [2, 7]) {
    assertEquals(withNative(true, threads, attentionRun), one, `${threads} threads`);
  }
});

/** LayerNorm of 300 rows × 128 (rows and columns split among threads): y and the gradients of x, g and b. */
function layerNormRun(): Float32Array {
  const [x, g, b, w] = [[300, 128], [128], [128], [300, 128]].map((s, i) => rand(s, 20 + i));
  try {
    const f = (x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) =>
      tf.sum(tf.mul(layerNorm(x as tf.Tensor2D, g as tf.Tensor1D, b as tf.Tensor1D), w)) as tf.Scalar;
    const { value, grads } = tf.valueAndGrads(f)([x, g, b]);
    const out = Float32Array.from([value, ...grads].flatMap((t) => [...t.dataSync()]));
    tf.dispose([value, ...grads]);
    return out;
  } finally {
    tf.dispose([x, g, b, w]);
  }
}

test("native LayerNorm forward: the bits of layernorm.wat (value and gradient), on 1, 2 and 7 threads", () => {
  const wasm = withNative(false, 1, layerNormRun), lib = nativeKernels() as Record<string, unknown>;
  let calls = 0;
  const f = lib.ace_layer_norm as (...a: unknown[]) => void;
  lib.ace_layer_norm = (...a: unknown[]) => (calls++, f(...a));
  withNative(true, 1, layerNormRun);
  assertEquals(calls, 1, "the forward ran natively");
  for (const threads of [1, 2, 7]) {
    assertEquals(withNative(true, threads, layerNormRun), wasm, `${threads} threads`);
  }
});

test("native draw: drawScored's tokens and log-probs (to 1e-12) at temperature 1, rows without a uniform skipped; same bits on 1, 2, 7 threads", () => {
  const rng = Rng.seeded(5), rows = 3000, vocab = 64;
  const logits = Float32Array.from({ length: rows * vocab }, () => 4 * rng.normal());
  const u = Float64Array.from({ length: rows }, (_, i) => i % 7 === 3 ? NaN : rng.float());
  const one = withNative(true, 1, () => nativeDraws(logits, u, vocab))!;
  for (let i = 0; i < rows; i++) {
    if (Number.isNaN(u[i])) continue;
    const [tok, lp] = drawScored(logits.subarray(i * vocab, (i + 1) * vocab), 1, 1, u[i]);
    assertEquals(one.tokens[i], tok, `row ${i}`);
    ok(Math.abs(one.logp[i] - lp) <= 1e-12 * Math.abs(lp), `row ${i}: ${one.logp[i]} against ${lp}`);
  }
  for (const threads of [2, 7]) {
    assertEquals(withNative(true, threads, () => nativeDraws(logits, u, vocab)), one);
  }
  assertEquals(withNative(false, 1, () => nativeDraws(logits, u, vocab)), null, "off: none");
});

/**
 * Target log-probs and entropies of 300 rows of 64 logits, weighted per token (as the RL loss weights them), by
 * `tokenScores` where it applies, else by tf ops: the scores and the gradient of their weighted sum.
 */
function scoresRun(): Float32Array {
  const x = rand([300, 64], 30), w = rand([300, 2], 31), rng = Rng.seeded(4);
  const targets = tf.tensor1d(Int32Array.from({ length: 300 }, () => rng.int(64)), "int32");
  const scores = (x: tf.Tensor) =>
    tokenScores(x as tf.Tensor2D, targets) ?? tf.tidy(() => {
      const l = tf.logSoftmax(x);
      const logp = tf.sum(tf.mul(l, tf.oneHot(targets, 64).toFloat()), 1, true);
      return tf.concat([logp, tf.neg(tf.sum(tf.mul(tf.exp(l), l), 1, true))], 1);
    });
  try {
    const { value, grad } = tf.valueAndGrad((x: tf.Tensor) => tf.sum(tf.mul(scores(x), w)) as tf.Scalar)(x);
    const s = tf.tidy(() => scores(x));
    const out = Float32Array.from([s, value, grad].flatMap((t) => [...t.dataSync()]));
    tf.dispose([s, value, grad]);
    return out;
  } finally {
    tf.dispose([x, w, targets]);
  }
}

test("native token scores (log-prob and entropy, weighted): within 1e-5 of tf ops, gradient included; same bits on 1, 2, 7 threads", () => {
  const tfjs = withNative(false, 1, scoresRun), lib = nativeKernels() as Record<string, unknown>;
  let calls = 0;
  for (const name of ["ace_token_scores", "ace_token_scores_grad"]) {
    const f = lib[name] as (...a: unknown[]) => void;
    lib[name] = (...a: unknown[]) => (calls++, f(...a));
  }
  const one = withNative(true, 1, scoresRun);
  ok(calls >= 3, "scores and their gradient ran natively");
  assertClose(one, tfjs, 1e-5, "native against tf ops");
  for (const threads of [2, 7]) assertEquals(withNative(true, threads, scoresRun), one, `${threads} threads`);
});

/** Adam moments after a few updates of a parameter shared among threads (≥ 2^18 floats) with a partial block. */
function adamRun(): Float32Array[] {
  const rng = Rng.seeded(3), n = 64 * 4096 + 5;
  const w = tf.variable(tf.tensor1d(Float32Array.from({ length: n }, () => rng.normal())));
  const x = tf.tensor1d(Float32Array.from({ length: n }, () => rng.normal()));
  const model = { params: new Map([["w", w]]) };
  const opt = createOptimizer(model as never, { lr: 1e-2, clipNorm: 0.5 });
  try {
    for (let s = 0; s < 3; s++) {
      trainStep(model as never, opt, () => tf.sum(tf.square(tf.sub(w, x))) as tf.Scalar);
    }
    return [w, ...opt.m.values(), ...opt.v.values()].map((t) => t.dataSync() as Float32Array);
  } finally {
    tf.dispose([w, x, ...opt.m.values(), ...opt.v.values()]);
  }
}

test("native Adam: the bits of tfjs-wasm's fused kernel, on 1, 2 and 7 threads", () => {
  const wasm = withNative(false, 1, adamRun);
  for (const threads of [1, 2, 7]) {
    assertEquals(withNative(true, threads, adamRun), wasm, `${threads} threads`);
  }
});

test("native kernels in a model (whole sampling runs, decode steps): sampling and a training step, same bits on 1, 2, 7 threads", async () => {
  const cfg = { vocab: 64, dModel: 64, heads: 4, layers: 2, context: 24 };
  // 150 rows: whole runs go in row blocks of 32 (kernels.c GEN_ROWS, the last of 22), the loop's decode steps in
  // blocks of 64, 64 and 22 (DECODE_ROWS); eos 3 ends some rows early, so blocks shrink as they go.
  const rows = 150, prompts = Int32Array.from({ length: rows * 8 }, (_, i) => (i * 7) % 64);
  const tokens = Int32Array.from({ length: 8 * 24 }, (_, i) => (i * 13) % 64);
  const run = async (on: boolean, threads: number) => {
    useNative(on);
    setNativeThreads(threads);
    const model = createModel(cfg, Rng.seeded(1));
    const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 1 });
    const batch = tf.tensor2d(tokens, [8, 24], "int32");
    try {
      const opts = { maxNew: 12, temperature: 1, topP: 1, rng: Rng.seeded(2), eos: 3 };
      const s = sample(model, prompts, rows, opts),
        loop = sample(model, prompts, rows, { ...opts, compact: false });
      const step = trainStep(
        model,
        opt,
        () => tf.neg(tf.mean(tokenLogProbs(model, batch).logp)) as tf.Scalar,
      );
      return { s, loop, step, weights: await getWeightsAsync(model) };
    } finally {
      useNative(true);
      setNativeThreads(1);
      batch.dispose();
      disposeModel(model);
      opt.m.forEach((v) => v.dispose());
      opt.v.forEach((v) => v.dispose());
    }
  };
  const one = await run(true, 1), off = await run(false, 1);
  const ended = one.s.lengths.filter((n) => n < 12).length;
  ok(ended >= 10 && ended < rows, `${ended} of ${rows} rows drew eos early: too few to shrink the blocks`);
  // The whole run draws as the loop does, its prefill's attention summing in another order.
  assertEquals(
    [one.s.tokens, one.s.lengths],
    [one.loop.tokens, one.loop.lengths],
    "whole runs against the loop",
  );
  assertClose(one.s.logp, one.loop.logp, 1e-5, "whole runs' log-probs against the loop's");
  assertClose(one.s.logp, off.s.logp, 1e-4, "sampled log-probs against tfjs-wasm's kernels");
  const kernels = (await tf.profile(async () => (await run(true, 1), []))).kernelNames;
  ok(
    kernels.includes("AceGenerate") && kernels.includes("AceDecodeStep"),
    "whole runs and decode steps ran natively",
  );
  for (const threads of [2, 7]) {
    const other = await run(true, threads);
    assertEquals(other.s, one.s, `samples on ${threads} threads`);
    assertEquals(other.loop, one.loop, `the loop's samples on ${threads} threads`);
    assertEquals(other.step, one.step, `train step on ${threads} threads`);
    assertEquals(other.weights, one.weights, `weights on ${threads} threads`);
  }
});

test("native sampling runs: blocks of fewer rows where a block's cache would pass 64 MB; as the loop, any thread count", () => {
  // 2 · 8 layers · 599 positions · 64 floats · 4 bytes = 2.45 MB of cache per row: blocks of 26 rows, not 32.
  const model = createModel({ vocab: 64, dModel: 64, heads: 2, layers: 8, context: 600 }, Rng.seeded(3));
  const rows = 40, prompts = Int32Array.from({ length: rows * 4 }, (_, i) => (i * 11) % 64);
  const opts = { maxNew: 596, temperature: 1, topP: 1, rng: Rng.seeded(4), eos: 5 };
  try {
    const one = withNative(true, 1, () => sample(model, prompts, rows, opts));
    const loop = withNative(true, 1, () => sample(model, prompts, rows, { ...opts, compact: false }));
    assertEquals([one.tokens, one.lengths], [loop.tokens, loop.lengths], "whole runs against the loop");
    assertClose(one.logp, loop.logp, 1e-5, "log-probs against the loop's");
    assertEquals(withNative(true, 2, () => sample(model, prompts, rows, opts)), one, "2 threads");
  } finally {
    disposeModel(model);
  }
});

test("native kernels: a Deno Worker's working memory is freed when the Worker ends (a sweep runs a Worker per job)", async () => {
  // A sampling run's memory on the calling thread is about 10 MB (its block's cache and activations); kept past
  // the thread's end, a sweep's process would grow by that much per job.
  const script = new URL("./native_workers_probe.ts", import.meta.url).pathname;
  const flags = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-ffi", "--allow-run"];
  const r = await new Deno.Command(Deno.execPath(), { args: ["run", ...flags, script] }).output();
  const out = new TextDecoder().decode(r.stdout).trim();
  ok(r.success, `probe failed: ${new TextDecoder().decode(r.stderr).trim()}`);
  // Per Worker: buffers alive while it ran / after its thread ended.
  assertEquals(out, Array(8).fill("1/0").join(" "), "per-thread buffers alive during / after each Worker");
});

/** initBackend("blas") in a fresh process with `env`: its stdout line and its stderr. */
async function probe(env: Record<string, string>): Promise<{ out: string; err: string }> {
  const script = new URL("./native_probe.ts", import.meta.url).pathname;
  const flags = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-ffi", "--allow-run"];
  const r = await new Deno.Command(Deno.execPath(), { args: ["run", ...flags, script], env }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { out: text(r.stdout), err: text(r.stderr) };
}

test("native kernels: built into an empty cache on first use, found there next time; no compiler: one line, old path", async () => {
  const cache = tempDir("acebench-native-");
  const first = await probe({ ACEBENCH_CACHE: cache });
  assertEquals(first.out, "backend blas native built by cc");
  const again = await probe({ ACEBENCH_CACHE: cache });
  assertEquals(again.out, "backend blas native cached");
  const files = [...Deno.readDirSync(`${cache}/kernels`)].flatMap((d) =>
    [...Deno.readDirSync(`${cache}/kernels/${d.name}`)].map((f) => f.name)
  );
  assertEquals(files, ["libacekernels.so"], "one library, no temporary files left");
  const none = await probe({ ACEBENCH_CACHE: tempDir("acebench-native-"), ACEBENCH_CC: "/nonexistent/cc" });
  assertEquals(none.out, "backend blas native off");
  const lines = none.err.split("\n").filter((l) => l.startsWith("native kernels:"));
  assertEquals(lines.length, 1, none.err);
  ok(
    /^native kernels: off \(\/nonexistent\/cc did not start \(.*\)\); decoding, attention, LayerNorm and Adam stay on tfjs-wasm's thread$/
      .test(lines[0]),
    lines[0],
  );
});

test("deno task sweep on blas without a compiler: one line for the whole sweep, the old path, recorded", async () => {
  const dir = tempDir("acebench-native-sweep-");
  const config = JSON.parse(
    Deno.readTextFileSync(new URL("../../../../bench/configs/ci-tfjs.json", import.meta.url)),
  );
  config.name = "native-off";
  config.seeds = [0, 1];
  config.settings = { ...config.settings, backend: "blas" };
  Deno.writeTextFileSync(join(dir, "config.json"), JSON.stringify(config));
  const out = join(dir, "sweep"),
    env = { ACEBENCH_CC: "/nonexistent/cc", ACEBENCH_CACHE: join(dir, "cache") };
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, Deno.env.get(k)]));
  Object.entries(env).forEach(([k, v]) => Deno.env.set(k, v)); // runCli's process inherits them
  let r;
  try {
    r = await runCli(["sweep", "--config", join(dir, "config.json"), "--smoke", "--out", out, "--no-report"]);
  } finally {
    Object.entries(before).forEach(([k, v]) => v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v));
  }
  assertEquals(r.code, 0, `sweep exited ${r.code}:\n${(r.stdout + r.stderr).slice(-3000)}`);
  const said = (r.stdout + r.stderr).split("\n").filter((l) => l.includes("native kernels: off"));
  assertEquals(said.length, 1, said.join("\n"));
  const runs = [...Deno.readDirSync(join(out, "runs"))].map((e) => e.name);
  assert(runs.length > 1, "several runs (each in its own Worker)");
  for (const run of runs) {
    const decision = JSON.parse(Deno.readTextFileSync(join(out, "runs", run, "config.json"))).backendDecision;
    assertEquals(decision.backend, "blas", run);
    ok(decision.native.startsWith("off: /nonexistent/cc did not start"), `${run}: ${decision.native}`);
  }
});
