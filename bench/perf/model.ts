// `deno task bench model`: train and sample throughput of the reference transformer beside PyTorch's, in
// alternating runs of one invocation (so both see the same machine load), with medians, ranges and load, and
// each engine's achieved GFLOP/s against its own measured matmul peak (how far from the machine's limit it is).
import * as tf from "@tensorflow/tfjs-core";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";
import {
  bool,
  flagLines,
  type FlagTable,
  type FlagValues,
  num,
  parseTable,
  str,
  UsageError,
} from "../../common/args.ts";
import { Rng } from "../../common/prng.ts";
import { BACKENDS, readsSync, rowInvariant, trainsDataParallel } from "../engines/tfjs/backend.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  initBackend,
  type ModelConfig,
  parameterCount,
  sample,
  sampleAsync,
  tokenLogProbs,
  trainStep,
  trainStepAsync,
} from "../engines/tfjs/model.ts";
import { kernelInfo, useKernels } from "../engines/tfjs/ops/attention.ts";
import { blasInfo, setThreads, threadsInUse } from "../engines/tfjs/ops/blas.ts";
import { nativeError, nativeInfo, useNative } from "../engines/tfjs/ops/native.ts";
import { coreCount, DataParallelTrainer, fullBatch, SamplerPool } from "../engines/tfjs/parallel.ts";
import { kernelClasses, type OpClassTable, printProfileTable, splitStep } from "./profile.ts";
import { gemmFlops, sampleFlopsPerToken, trainFlopsPerToken } from "./flops.ts";
import { median } from "../../evaluators/stats.ts";

/** The reference configuration of torch_reference.py beside this file (keep identical). */
export const REFERENCE: ModelConfig = { vocab: 64, dModel: 128, heads: 4, layers: 4, context: 64 };
/** The `gpu` configuration (the model of the `gpu` settings preset; torch_reference.py --config gpu). */
export const GPU: ModelConfig = { vocab: 64, dModel: 512, heads: 8, layers: 8, context: 256 };
/** The `tiny` configuration: a seconds-long smoke run for tests (torch_reference.py --config tiny, same shapes). */
export const TINY: ModelConfig = { vocab: 16, dModel: 32, heads: 2, layers: 1, context: 32 };
let TRAIN_B = 32, SAMPLE_B = 256;
const PROMPT = 16;
let NEW = 48, CFG = REFERENCE;
const TORCH_SCRIPT = fileURLToPath(new URL("./torch_reference.py", import.meta.url));
/** Debian's python3 (its python3-torch is 1.13). */
const SYSTEM_PYTHON = "/usr/bin/python3";
/** Where a current PyTorch is installed with pip (outside the repository). */
const DEFAULT_VENV_PYTHON = "~/.cache/acebench/torch-venv/bin/python";

/** The Pythons to time torch under: `--python` as given, else Debian's and the torch venv's where present. */
export function torchPythons(list: string | undefined, home = homedir()): string[] {
  const expand = (p: string) => p.replace(/^~(?=\/)/, home);
  if (list !== undefined) {
    const items = list.split(",").map((p) => p.trim()).filter((p) => p.length > 0);
    if (items.length === 0) throw new UsageError(`--python: expected interpreter paths, got '${list}'`);
    return items.map(expand);
  }
  const venv = expand(DEFAULT_VENV_PYTHON);
  return existsSync(venv) ? [SYSTEM_PYTHON, venv] : [SYSTEM_PYTHON];
}

/** The flags of `deno task bench model`, declared once for parsing, --help and validation. */
export const FLAGS = {
  runs: num("alternating tfjs/PyTorch runs", { default: 3, min: 1, max: 100 }),
  config: str(
    "NAME",
    "gpu: width 512, 8 heads, 8 layers, context 256, 240 new tokens; tiny: width 32, 1 layer, batches 4 " +
      "and 8, 8 new tokens (a smoke test, not a benchmark)",
    { default: "reference", choices: ["reference", "gpu", "tiny"] },
  ),
  backend: str("NAME", "the tfjs backend", { default: "auto", choices: BACKENDS }),
  steps: num("timed train steps per run", { default: 5, min: 1, max: 1000 }),
  reps: num("timed sampling runs per run", { default: 3, min: 1, max: 100 }),
  "no-torch": bool("skip the PyTorch reference"),
  "peak-n": num(
    "side of the square matrix product that measures each engine's peak",
    { default: 1024, min: 16, max: 8192 },
  ),
  python: str(
    "LIST",
    `comma-separated Python interpreters with torch (default: ${SYSTEM_PYTHON}, Debian's torch 1.13, then ` +
      `${DEFAULT_VENV_PYTHON} where present: a current torch, "python3 -m venv ~/.cache/acebench/torch-venv && ` +
      `~/.cache/acebench/torch-venv/bin/pip install torch")`,
  ),
  "no-kernels": bool("attention through plain tfjs ops instead of the wasm SIMD kernels (to measure them)"),
  "no-native": bool(
    "blas backend: tfjs-wasm's kernels instead of the native ones (ops/kernels.c), to measure them",
  ),
  "native-ab": bool(
    "blas backend: in each run also time sampling with the native kernels off, in the same process " +
      "(their side-by-side; training runs in workers, so use --no-native in another invocation for it)",
  ),
  profile: bool(
    "instead of the runs: ms per op class for one train step and one sampling run, tfjs and PyTorch " +
      "(torch.profiler)",
  ),
  "train-workers": num(
    `data-parallel train step over N Deno Workers (default: cores, ${coreCount()} here; at least 8 for ` +
      "--config gpu, whose activations outgrow one worker's 4 GB wasm heap otherwise); 1 = one process",
    { min: 1, max: 64 },
  ),
  "sample-workers": num(
    "data-parallel sampling over N Deno Workers (1 = one process; measured slower than one process on a " +
      "loaded machine, docs/tfjs-model.md)",
    { default: 1, min: 1, max: 64 },
  ),
  "blas-threads": num(
    `threads of this process that run its BLAS products (blas backend; default: cores, ${coreCount()} ` +
      "here): sampling, and training when --train-workers is 1, use them; the bits are the same for every N " +
      "above 1 (ops/blas_threads.ts)",
    { min: 1, max: 64 },
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task bench model`. */
export const usage = `usage: deno task bench model [flags]

Times the reference transformer (vocab 64, width 128, 4 heads, 4 layers, context 64) on tfjs:
  train   tokens/s: batch ${TRAIN_B}x64, next-token cross-entropy, Adam(lr 1e-3); median of --steps steps after 2 warm-ups
  sample  tokens/s: batch ${SAMPLE_B}, ${PROMPT}-token prompt, ${NEW} new tokens, temperature 1, KV cache; median of --reps
and, after each tfjs run, the PyTorch CPU reference (bench/perf/torch_reference.py, best of 1 and 2 threads) under
each Python of --python, each line naming its torch version. Prints every run with the load average, then
medians and ranges of figures and ratios per PyTorch, and for each engine its achieved GFLOP/s (FLOPs counted
from the model's shapes, attention included: bench/perf/flops.ts) and their share of its own measured peak: the
best of a few --peak-n square float32 products (tf.matMul on the backend in use, one thread per product, times
the threads the engine trains or samples on; torch.mm in the torch process at the thread count of its figure).

${flagLines(FLAGS)}
GPU backends and --no-kernels always use one process.`;

function randomTokens(rng: Rng, n: number, vocab: number): Int32Array {
  return Int32Array.from({ length: n }, () => rng.int(vocab));
}

/** The 1-minute load average (0 where the OS does not report it: Windows). */
const load1 = () => Deno.loadavg()[0];

/** What one tfjs run needs: the model, its optimizer, a batch, and the worker pools (null = one process). */
type Rig = ReturnType<typeof makeRig>;

/** One Adam step on next-token cross-entropy over a [TRAIN_B, context+1] batch; returns seconds. */
async function timeTrainStep(rig: Rig, single = false): Promise<number> {
  const t0 = performance.now();
  if (rig.trainer && !single) {
    await rig.trainer.step(fullBatch(rig.batch.dataSync() as Int32Array, TRAIN_B, CFG.context + 1));
  } else {
    const loss = () => tf.neg(tf.mean(tokenLogProbs(rig.model, rig.batch).logp)) as tf.Scalar;
    // webgpu under Deno cannot read GPU data synchronously; the other backends time the sync forms.
    if (readsSync()) trainStep(rig.model, rig.opt, loss);
    else await trainStepAsync(rig.model, rig.opt, loss);
  }
  return (performance.now() - t0) / 1000;
}

/** One sampling run of SAMPLE_B rows (through the sampler pool when there is one); returns seconds. */
async function timeSample(rig: Rig): Promise<number> {
  const prompts = randomTokens(rig.rng, SAMPLE_B * PROMPT, CFG.vocab);
  const opts = { maxNew: NEW, temperature: 1, topP: 1, rng: rig.rng };
  const t0 = performance.now();
  if (readsSync() && !rig.sampler) sample(rig.model, prompts, SAMPLE_B, opts);
  else await sampleAsync(rig.model, prompts, SAMPLE_B, opts);
  return (performance.now() - t0) / 1000;
}

/**
 * GFLOP/s of one n×n by n×n float32 tf.matMul on the active backend in one thread (blas: cblas_sgemm; wasm:
 * XNNPACK), best of `reps` after a warm-up: the engine's peak per thread. Best-of because load only ever slows it.
 */
export async function matmulPeak(n: number, reps = 4): Promise<number> {
  const { threads } = threadsInUse();
  if (threads > 1) await setThreads(1);
  const rng = Rng.seeded(1);
  const [a, b] = [0, 1].map(() =>
    tf.tensor2d(Float32Array.from({ length: n * n }, () => rng.normal()), [n, n])
  );
  let best = Infinity;
  try {
    for (let i = 0; i <= reps; i++) {
      const t0 = performance.now();
      const c = tf.matMul(a, b);
      await c.data(); // forces the product on every backend (webgpu runs asynchronously)
      const s = (performance.now() - t0) / 1000;
      c.dispose();
      if (i > 0) best = Math.min(best, s);
    }
  } finally {
    tf.dispose([a, b]);
    if (threads > 1) await setThreads(threads);
  }
  return gemmFlops(n) / best / 1e9;
}

/** Run torch_reference.py under `python` with `args`; its last stdout line as JSON, or why it could not run. */
async function runTorch(python: string, args: string[]) {
  try {
    const probe = await new Deno.Command(python, { args: ["-c", "import torch"], stderr: "null" }).output();
    if (!probe.success) {
      const hint = python === SYSTEM_PYTHON
        ? "apt-get install -y python3-torch libopenblas0-pthread"
        : `pip install torch into ${python}'s environment`;
      return { missing: `PyTorch missing under ${python} (${hint})` };
    }
    const out = await new Deno.Command(python, { args: [TORCH_SCRIPT, ...args] }).output();
    if (!out.success) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1);
      return { missing: `torch_reference.py under ${python} failed: ${err}` };
    }
    const last = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!;
    return { result: JSON.parse(last) as Record<string, unknown> };
  } catch (e) {
    return { missing: `${python} not runnable: ${(e as Error).message}` };
  }
}

/**
 * Achieved GFLOP/s (model FLOPs, flops.ts) of train and sample tokens/s and their % of the engine's own peaks
 * (GFLOP/s, thread counts included), to 3 significant figures (a tiny config's 0.04 GFLOP/s stays positive).
 */
function efficiency(train: number, sample: number, trainPeak: number, samplePeak: number) {
  const trainG = train * trainFlopsPerToken(CFG) / 1e9;
  const sampleG = sample * sampleFlopsPerToken(CFG, PROMPT, NEW) / 1e9;
  return {
    train_gflops: sig3(trainG),
    train_pct_peak: sig3(100 * trainG / trainPeak),
    sample_gflops: sig3(sampleG),
    sample_pct_peak: sig3(100 * sampleG / samplePeak),
    train_peak_gflops: sig3(trainPeak),
    sample_peak_gflops: sig3(samplePeak),
  };
}

/** `x` to 3 significant figures (a positive figure stays positive). */
const sig3 = (x: number) => Number(x.toPrecision(3));

/** " (G GFLOP/s, P% of peak)" of one figure. */
function effNote(gflops: number, pct: number): string {
  return ` (${gflops.toFixed(1)} GFLOP/s, ${pct.toFixed(0)}% of peak)`;
}

/** One PyTorch timing of a run (torch_reference.py's `result` under `python`), its ratios and efficiency. */
function torchRow(result: Record<string, unknown>, python: string, tfjs: { train: number; sample: number }) {
  const train = Number(result.train_tokens_per_s), sample = Number(result.sample_tokens_per_s);
  const peaks = (result.peak_gflops ?? {}) as Record<string, number>;
  const trainT = Number(result.train_threads), sampleT = Number(result.sample_threads);
  return {
    engine: String(result.engine),
    python,
    train,
    sample,
    ratio_train: +(tfjs.train / train).toFixed(3),
    ratio_sample: +(tfjs.sample / sample).toFixed(3),
    train_threads: trainT,
    sample_threads: sampleT,
    peak_gflops: peaks,
    ...efficiency(train, sample, peaks[String(trainT)] ?? NaN, peaks[String(sampleT)] ?? NaN),
  };
}

/** Sampling tokens/s: a warm-up run, then the median of `reps` runs. */
async function sampleRate(rig: Rig, reps: number): Promise<number> {
  await timeSample(rig);
  return (SAMPLE_B * NEW) / median(await Array.fromAsync({ length: reps }, () => timeSample(rig)));
}

/** "median (min–max)" of xs with `digits` decimals. */
function spread(xs: number[], digits = 0): string {
  const f = (x: number) => x.toFixed(digits);
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

/** The op-class profile of tfjs (one train step, one sampling run) and of PyTorch. */
async function profile(rig: Rig, pythons: string[], torchArgs: string[]): Promise<Record<string, unknown>> {
  // Kernels of a single-process train step; the data-parallel phases are timed separately below.
  await timeTrainStep(rig, true);
  const trainStep = await kernelClasses(() => timeTrainStep(rig, true));
  const trainTable = { title: "tfjs train step, one process", ...trainStep };
  const tables: OpClassTable[] = [trainTable, splitStep(trainTable)];
  if (rig.trainer) {
    const t = rig.trainer.times, before = { ...t }, steps = 3;
    const wall0 = performance.now();
    for (let i = 0; i < steps; i++) await timeTrainStep(rig);
    const wall = (performance.now() - wall0) / steps;
    const d = (k: keyof typeof t) => (t[k] - before[k]) / steps;
    const messaging = d("wait") - d("load") - d("compute") - d("read");
    tables.push({
      title: `tfjs train step, data-parallel over ${rig.trainer.workers} workers (phases, ms per step)`,
      wallMs: wall,
      classes: {
        "worker forward+backward (per worker)": d("compute"),
        "data movement: weights into worker tensors": d("load"),
        "data movement: gradients out of worker": d("read"),
        "data movement: messages and waiting": messaging,
        "gradient sum (main)": d("sum"),
        "clip + Adam (main, incl. gradient tensors)": d("apply"),
        "data movement: weights to shared buffer": d("publish"),
      },
    });
  }
  const sampler = rig.sampler;
  rig.sampler = null; // kernel profile of a single-process run
  try {
    tables.push({ title: "tfjs sampling run, one process", ...(await kernelClasses(() => timeSample(rig))) });
  } finally {
    rig.sampler = sampler;
  }
  for (const t of tables) printProfileTable(t);
  const out: Record<string, unknown> = { tfjs: tables };
  for (const python of pythons) {
    const { result, missing } = await runTorch(python, ["--profile", "--threads", "2", ...torchArgs]);
    if (!result) {
      console.log(`torch profile not run: ${missing}`);
      continue;
    }
    const p = (result.profiles as Record<string, { wall_ms: number; classes: Record<string, number> }>[])[0];
    const table = (what: string, t: { wall_ms: number; classes: Record<string, number> }) => ({
      title: `${result.engine}, 2 threads: ${what}`,
      wallMs: t.wall_ms,
      classes: t.classes,
    });
    const train = table("train step", p.train_step);
    const torchTables = [train, splitStep(train), table("sampling run", p.sampling_run)];
    for (const t of torchTables) printProfileTable(t);
    out[String(result.engine)] = torchTables;
  }
  return out;
}

/** What every run of one invocation shares: the rig, the flags, the thread counts, the Pythons still working. */
interface Bench {
  rig: Rig;
  values: FlagValues<typeof FLAGS>;
  trainThreads: number;
  sampleThreads: number;
  torchArgs: string[];
  pythons: string[];
  result: Record<string, unknown>;
}

/** Entry point for `deno task bench model`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  const config = values.config;
  const { backend, trainWorkers, sampleWorkers, blasThreads } = await configure(values);
  const rig = makeRig();
  const blas = backend === "blas" ? blasInfo() : null;
  const blasNote = blas
    ? `, BLAS ${blas.library} (${blas.core} kernels, one thread per call, ${blasThreads} thread(s))`
    : "";
  console.log(
    `tfjs ${tf.version_core} backend ${backend}${blasNote} (attention: ${kernelInfo()}); ${
      parameterCount(rig.model)
    } parameters; train workers ${trainWorkers}, sample workers ${sampleWorkers}`,
  );
  const result: Record<string, unknown> = {
    backend,
    ...(blas ? { blas, native: nativeInfo()?.library ?? "off" } : {}),
    attention: kernelInfo(),
    config,
    train_workers: trainWorkers,
    sample_workers: sampleWorkers,
    blas_threads: blasThreads,
  };
  const torchArgs = ["--config", config, "--peak-n", String(values["peak-n"])];
  const pythons = values["no-torch"] ? [] : torchPythons(values.python);
  try {
    if (trainWorkers > 1) rig.trainer = await DataParallelTrainer.create(rig.model, rig.opt, trainWorkers);
    if (sampleWorkers > 1) rig.sampler = await SamplerPool.start(rig.model, sampleWorkers);
    if (values.profile) Object.assign(result, await profile(rig, pythons, torchArgs));
    else {
      // Each BLAS call runs on one thread (wasm is single-threaded), so the engine's peak on N threads (train
      // workers, sample workers or BLAS threads) is N times the peak of one, an upper bound (threads can only contend).
      const threads = (workers: number) => Math.min(workers > 1 ? workers : blasThreads, coreCount());
      const trainThreads = threads(trainWorkers), sampleThreads = threads(sampleWorkers);
      const bench: Bench = { rig, values, trainThreads, sampleThreads, torchArgs, pythons, result };
      const rows = await Array.fromAsync({ length: values.runs }, (_, i) => measureRun(bench, i + 1));
      summarise(rows, bench, backend);
    }
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    rig.trainer?.close();
    rig.sampler?.close();
    rig.batch.dispose();
    disposeModel(rig.model);
  }
}

/** Configuration, backend, kernels, workers and BLAS threads as the flags ask and the backend allows. */
async function configure(values: FlagValues<typeof FLAGS>) {
  const config = values.config;
  // The gpu configuration's saved activations for 32 rows x 256 tokens outgrow the 4 GB wasm heap of a worker
  // holding more than 4 rows (measured: 2 workers abort), so CPU backends spread it over at least 8 workers.
  let trainWorkers = values["train-workers"] ?? (config === "gpu" ? Math.max(8, coreCount()) : coreCount());
  let sampleWorkers = values["sample-workers"];
  if (config === "gpu") [CFG, NEW] = [GPU, 240];
  if (config === "tiny") [CFG, NEW, TRAIN_B, SAMPLE_B] = [TINY, 8, 4, 8];
  const backend = await initBackend(values.backend);
  if (values["no-kernels"]) useKernels(false);
  if (values["no-native"]) useNative(false);
  if (values["native-ab"] && (values["no-native"] || !nativeInfo())) {
    throw new UsageError(
      `--native-ab: the native kernels are not in use (backend ${backend}${
        values["no-native"] ? ", --no-native" : ""
      }${nativeError() ? `: ${nativeError()}` : ""})`,
    );
  }
  // Data-parallel workers are for the CPU backends with the kernels on: GPU backends and --no-kernels use one.
  if (!trainsDataParallel() || values["no-kernels"]) trainWorkers = sampleWorkers = 1;
  if (!rowInvariant()) sampleWorkers = 1; // the pool's samples equal one process's only where rows are invariant
  if (values["blas-threads"] !== undefined && backend !== "blas") {
    throw new UsageError(`--blas-threads: only the blas backend has BLAS threads (backend is ${backend})`);
  }
  const blasThreads = backend === "blas" ? values["blas-threads"] ?? coreCount() : 1;
  if (backend === "blas") await setThreads(blasThreads);
  return { backend, trainWorkers, sampleWorkers, blasThreads };
}

/** The model of the configuration in use (seeded), its optimizer and one random training batch; no pools yet. */
function makeRig() {
  const rng = Rng.seeded(0);
  const model = createModel(CFG, rng.split());
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 0 });
  const shape: [number, number] = [TRAIN_B, CFG.context + 1];
  const batch = tf.tensor2d(randomTokens(rng, shape[0] * shape[1], CFG.vocab), shape, "int32");
  return {
    model,
    opt,
    batch,
    trainer: null as DataParallelTrainer | null,
    sampler: null as SamplerPool | null,
    rng,
  };
}

/** One run: tfjs train and sample tokens/s, its matmul peak, then each working torch; printed as it goes. */
async function measureRun(b: Bench, run: number) {
  const load_before = load1();
  const trainTimes = (await Array.fromAsync({ length: b.values.steps + 2 }, () => timeTrainStep(b.rig)))
    .slice(2);
  const t = {
    train: (TRAIN_B * CFG.context) / median(trainTimes),
    sample: await sampleRate(b.rig, b.values.reps),
  };
  // With --native-ab: sampling tokens/s with the native kernels off, in the same run (back on after).
  let noNative: number | undefined;
  if (b.values["native-ab"]) {
    useNative(false);
    try {
      noNative = Math.round(await sampleRate(b.rig, b.values.reps));
    } finally {
      useNative(true);
    }
  }
  // Measured each run, beside its figures, so both see the same load.
  const peak = await matmulPeak(b.values["peak-n"]);
  const eff = efficiency(t.train, t.sample, peak * b.trainThreads, peak * b.sampleThreads);
  const torch: ReturnType<typeof torchRow>[] = [];
  for (const python of [...b.pythons]) {
    const r = await runTorch(python, b.torchArgs);
    if (!r.result) {
      console.log(`torch:       not run: ${r.missing}`);
      b.result.torch_missing = [...(b.result.torch_missing as string[] | undefined ?? []), r.missing];
      b.pythons.splice(b.pythons.indexOf(python), 1);
      continue;
    }
    torch.push(torchRow(r.result, python, t));
  }
  const row = {
    run,
    load_before,
    torch,
    tfjs_sample_no_native: noNative,
    tfjs_train: Math.round(t.train),
    tfjs_sample: Math.round(t.sample),
    tfjs_peak_gflops_per_thread: sig3(peak),
    tfjs_train_threads: b.trainThreads,
    tfjs_sample_threads: b.sampleThreads,
    ...Object.fromEntries(Object.entries(eff).map(([k, v]) => [`tfjs_${k}`, v])),
    load_after: load1(),
  };
  const peakN = b.values["peak-n"];
  const offNote = noNative ? ` (native kernels off: ${noNative})` : "";
  console.log(
    `run ${run}: load ${row.load_before.toFixed(2)} → ${row.load_after.toFixed(2)}; tfjs train ` +
      `${row.tfjs_train}${effNote(eff.train_gflops, eff.train_pct_peak)}, sample ${row.tfjs_sample}` +
      `${effNote(eff.sample_gflops, eff.sample_pct_peak)}${offNote} tokens/s; peak ${peak.toFixed(1)} ` +
      `GFLOP/s per thread (${peakN}² tf.matMul) × ${b.trainThreads} train, ${b.sampleThreads} sample thread(s)`,
  );
  for (const r of row.torch) {
    const peaks = Object.entries(r.peak_gflops).map(([th, g]) => `${g} GFLOP/s at ${th} thread(s)`);
    console.log(
      `       ${r.engine} (${r.python}): train ${r.train}${effNote(r.train_gflops, r.train_pct_peak)}, ` +
        `sample ${r.sample}${effNote(r.sample_gflops, r.sample_pct_peak)}; ratio tfjs/torch train ` +
        `${r.ratio_train}, sample ${r.ratio_sample}; peak ${peaks.join(", ")} (${peakN}² torch.mm)`,
    );
  }
  return row;
}

/** Medians and ranges over the runs into `b.result`, printed with the limit table (each engine vs its peak). */
function summarise(rows: Awaited<ReturnType<typeof measureRun>>[], b: Bench, backend: string): void {
  const result = b.result;
  const col = (k: string) => rows.map((r) => (r as Record<string, unknown>)[k] as number);
  console.log(`\nmedian (range) over ${rows.length} run(s); 1-min load ${spread(col("load_before"), 2)}:`);
  console.log(`  tfjs  train ${spread(col("tfjs_train"))}  sample ${spread(col("tfjs_sample"))} tokens/s`);
  const off = rows.map((r) => r.tfjs_sample_no_native).filter((x): x is number => x !== undefined);
  if (off.length > 0) {
    console.log(`  tfjs  sample with the native kernels off (same runs): ${spread(off)} tokens/s`);
    result.median_tfjs_sample_no_native = median(off);
  }
  result.runs = rows;
  result.median_tfjs_train = median(col("tfjs_train"));
  result.median_tfjs_sample = median(col("tfjs_sample"));
  result.flops_per_train_token = trainFlopsPerToken(CFG);
  result.flops_per_sample_token = Math.round(sampleFlopsPerToken(CFG, PROMPT, NEW));
  result.peak_n = b.values["peak-n"];
  const header = ["engine", "train tok/s", "GFLOP/s", "% peak", "sample tok/s", "GFLOP/s", "% peak"];
  const effKeys = ["train_gflops", "train_pct_peak", "sample_gflops", "sample_pct_peak"];
  const table: string[][] = [[...header, "peak GFLOP/s train, sample"]];
  /** One engine's line of the table from its columns (`of`), and its efficiency medians (`median_<prefix><key>`). */
  const engineLine = (name: string, of: (k: string) => number[], prefix = "") => {
    const m = (k: string) => median(of(k));
    table.push([
      name,
      String(m("train")),
      ...effKeys.slice(0, 2).map((k) => m(k).toFixed(1)),
      String(m("sample")),
      ...effKeys.slice(2).map((k) => m(k).toFixed(1)),
      `${m("train_peak_gflops").toFixed(1)}, ${m("sample_peak_gflops").toFixed(1)}`,
    ]);
    return Object.fromEntries(effKeys.map((k) => [`median_${prefix}${k}`, m(k)]));
  };
  Object.assign(result, engineLine(`tfjs ${backend}`, (k) => col(`tfjs_${k}`), "tfjs_"));
  const engines = [...new Set(rows.flatMap((r) => r.torch.map((t) => t.engine)))];
  result.torch = engines.map((engine) => {
    const of = rows.flatMap((r) => r.torch.filter((t) => t.engine === engine));
    const tcol = (k: string) => of.map((t) => (t as unknown as Record<string, number>)[k]);
    const figures = `train ${spread(tcol("train"))}  sample ${spread(tcol("sample"))}`;
    console.log(`  ${engine} (${of[0].python}): ${figures} tokens/s`);
    const ratios = `train ${spread(tcol("ratio_train"), 2)}  sample ${spread(tcol("ratio_sample"), 2)}`;
    console.log(
      `    ratio tfjs/torch (per run): ${ratios}  (targets against a current torch: train >= 1.3, sample >= 2.0)`,
    );
    const eff = engineLine(engine, tcol);
    const medianOf = (k: string) => [`median_${k}`, median(tcol(k))];
    const medians = Object.fromEntries(["train", "sample", "ratio_train", "ratio_sample"].map(medianOf));
    return { engine, python: of[0].python, ...medians, ...eff };
  });
  const [trainM, sampleM] = [result.flops_per_train_token, result.flops_per_sample_token].map((f) =>
    ((f as number) / 1e6).toFixed(2)
  );
  console.log(
    `\nachieved model FLOPs (medians; ${trainM} MFLOP per trained token, ${sampleM} per sampled token: ` +
      `flops.ts) and % of each engine's own measured ${b.values["peak-n"]}² matmul peak:`,
  );
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) {
    console.log(`  ${r.map((c, i) => i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join("  ")}`);
  }
}
