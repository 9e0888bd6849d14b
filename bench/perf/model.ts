// `deno task bench model`: train and sample throughput of the reference transformer beside PyTorch's, in
// alternating runs of one invocation (so both see the same machine load), with medians, ranges and load.
import * as tf from "@tensorflow/tfjs-core";
import { fileURLToPath } from "node:url";
import { parseFlags, parseNumber, UsageError } from "../../common/args.ts";
import { Rng } from "../../common/prng.ts";
import { BACKENDS, readsSync, rowInvariant, trainsDataParallel } from "../engines/tfjs/backend.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  initBackend,
  type Model,
  type ModelConfig,
  type Optimizer,
  parameterCount,
  sample,
  sampleAsync,
  tokenLogProbs,
  trainStep,
  trainStepAsync,
} from "../engines/tfjs/model.ts";
import { kernelInfo, useKernels } from "../engines/tfjs/ops/attention.ts";
import { blasInfo } from "../engines/tfjs/ops/blas.ts";
import { coreCount, DataParallelTrainer, fullBatch, SamplerPool } from "../engines/tfjs/parallel.ts";
import { kernelClasses, type OpClassTable, printProfileTable } from "./profile.ts";
import { median } from "../../evaluators/stats.ts";

/** The reference configuration of torch_reference.py beside this file (keep identical). */
export const REFERENCE: ModelConfig = { vocab: 64, dModel: 128, heads: 4, layers: 4, context: 64 };
/** The `gpu` configuration (the model of the `gpu` settings preset; torch_reference.py --config gpu). */
export const GPU: ModelConfig = { vocab: 64, dModel: 512, heads: 8, layers: 8, context: 256 };
const TRAIN_B = 32, SAMPLE_B = 256, PROMPT = 16;
let NEW = 48, CFG = REFERENCE;
const TORCH_SCRIPT = fileURLToPath(new URL("./torch_reference.py", import.meta.url));

/** Usage text for `deno task bench model`. */
export const usage =
  `usage: deno task bench model [--runs N] [--backend NAME] [--steps N] [--reps N] [--no-torch] [--no-kernels]
                              [--profile] [--train-workers N] [--sample-workers N] [--config reference|gpu]

Times the reference transformer (vocab 64, width 128, 4 heads, 4 layers, context 64) on tfjs:
  train   tokens/s: batch ${TRAIN_B}x64, next-token cross-entropy, Adam(lr 1e-3); median of --steps steps after 2 warm-ups
  sample  tokens/s: batch ${SAMPLE_B}, ${PROMPT}-token prompt, ${NEW} new tokens, temperature 1, KV cache; median of --reps
and, after each tfjs run, the PyTorch CPU reference (bench/perf/torch_reference.py via /usr/bin/python3, best of
1 and 2 threads). Prints every run with the load average, then medians and ranges of figures and ratios.

  --runs N        alternating tfjs/PyTorch runs (default 3)
  --config NAME   reference (default) or gpu: width 512, 8 heads, 8 layers, context 256, 240 new tokens
  --backend NAME  ${BACKENDS.join(" | ")} (default auto)
  --steps N       timed train steps per run (default 5)
  --reps N        timed sampling runs per run (default 3)
  --no-torch      skip the PyTorch reference
  --no-kernels    attention through plain tfjs ops instead of the wasm SIMD kernels (to measure them)
  --profile       instead of the runs: ms per op class for one train step and one sampling run, tfjs and
                  PyTorch (torch.profiler)
  --train-workers N   data-parallel train step over N Deno Workers (default: cores, ${coreCount()} here; at least 8
                  for --config gpu, whose activations outgrow one worker's 4 GB wasm heap otherwise); 1 = one process
  --sample-workers N  data-parallel sampling over N Deno Workers (default 1 = one process; measured slower
                  than one process on a loaded machine, docs/tfjs-model.md)
GPU backends and --no-kernels always use one process.`;

function randomTokens(rng: Rng, n: number, vocab: number): Int32Array {
  return Int32Array.from({ length: n }, () => rng.int(vocab));
}

/** The 1-minute load average, or NaN where the OS does not report it. */
function load1(): number {
  try {
    return Deno.loadavg()[0];
  } catch {
    return NaN;
  }
}

/** What one tfjs run needs: the model, its optimizer, a batch, and the worker pools (null = one process). */
interface Rig {
  model: Model;
  opt: Optimizer;
  batch: tf.Tensor2D;
  trainer: DataParallelTrainer | null;
  sampler: SamplerPool | null;
  rng: Rng;
}

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

async function repeat(n: number, f: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

/** Run torch_reference.py with `args`; its last stdout line as JSON, or why it could not run. */
async function runTorch(args: string[]): Promise<{ result?: Record<string, unknown>; missing?: string }> {
  try {
    const probe = await new Deno.Command("/usr/bin/python3", { args: ["-c", "import torch"], stderr: "null" })
      .output();
    if (!probe.success) {
      return { missing: "PyTorch missing (apt-get install -y python3-torch libopenblas0-pthread)" };
    }
    const out = await new Deno.Command("/usr/bin/python3", { args: [TORCH_SCRIPT, ...args] }).output();
    if (!out.success) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1);
      return { missing: `torch_reference.py failed: ${err}` };
    }
    return { result: JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!) };
  } catch (e) {
    return { missing: `/usr/bin/python3 not runnable: ${(e as Error).message}` };
  }
}

/** tfjs train and sample tokens/s of one run. */
async function tfjsRun(rig: Rig, steps: number, reps: number): Promise<{ train: number; sample: number }> {
  const trainTimes = (await repeat(steps + 2, () => timeTrainStep(rig))).slice(2);
  await timeSample(rig); // warm-up
  const sampleTimes = await repeat(reps, () => timeSample(rig));
  return {
    train: (TRAIN_B * CFG.context) / median(trainTimes),
    sample: (SAMPLE_B * NEW) / median(sampleTimes),
  };
}

/** "median (min–max)" of xs with `digits` decimals. */
function spread(xs: number[], digits = 0): string {
  const f = (x: number) => x.toFixed(digits);
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

/** The op-class profile of tfjs (one train step, one sampling run) and of PyTorch. */
async function profile(rig: Rig, torch: boolean, torchArgs: string[]): Promise<Record<string, unknown>> {
  // Kernels of a single-process train step; the data-parallel phases are timed separately below.
  await timeTrainStep(rig, true);
  const trainStep = await kernelClasses(() => timeTrainStep(rig, true));
  const tables: OpClassTable[] = [{ title: "tfjs train step, one process", ...trainStep }];
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
  if (torch) {
    const r = await runTorch(["--profile", "--threads", "2", ...torchArgs]);
    if (r.result) {
      const p =
        (r.result.profiles as Record<string, { wall_ms: number; classes: Record<string, number> }>[])[0];
      const torchTables: OpClassTable[] = [
        {
          title: `${r.result.engine}, 2 threads: train step`,
          wallMs: p.train_step.wall_ms,
          classes: p.train_step.classes,
        },
        {
          title: `${r.result.engine}, 2 threads: sampling run`,
          wallMs: p.sampling_run.wall_ms,
          classes: p.sampling_run.classes,
        },
      ];
      for (const t of torchTables) printProfileTable(t);
      out.torch = torchTables;
    } else console.log(`torch profile not run: ${r.missing}`);
  }
  return out;
}

/** Entry point for `deno task bench model`. */
export async function main(args: string[]): Promise<number> {
  const values = parseFlags(args, {
    backend: { type: "string" },
    runs: { type: "string" },
    steps: { type: "string" },
    reps: { type: "string" },
    "no-torch": { type: "boolean" },
    profile: { type: "boolean" },
    "no-kernels": { type: "boolean" },
    "train-workers": { type: "string" },
    "sample-workers": { type: "string" },
    config: { type: "string" },
  }, false).values as Record<string, string | boolean | undefined>;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const backendName = (values.backend as string | undefined) ?? "auto";
  if (!(BACKENDS as readonly string[]).includes(backendName)) {
    throw new UsageError(`--backend: expected one of ${BACKENDS.join(", ")}, got '${backendName}'`);
  }
  const num = (k: string, def: number, lo: number, hi: number) =>
    parseNumber(values[k] as string | undefined, k, def, lo, hi);
  const runs = num("runs", 3, 1, 100), steps = num("steps", 5, 1, 1000), reps = num("reps", 3, 1, 100);
  const config = (values.config as string | undefined) ?? "reference";
  if (config !== "reference" && config !== "gpu") {
    throw new UsageError(`--config: expected reference or gpu, got '${config}'`);
  }
  // The gpu configuration's saved activations for 32 rows x 256 tokens outgrow the 4 GB wasm heap of a worker
  // holding more than 4 rows (measured: 2 workers abort), so CPU backends spread it over at least 8 workers.
  let trainWorkers = num("train-workers", config === "gpu" ? Math.max(8, coreCount()) : coreCount(), 1, 64);
  let sampleWorkers = num("sample-workers", 1, 1, 64);
  if (config === "gpu") [CFG, NEW] = [GPU, 240];
  const torchArgs = ["--config", config];
  const backend = await initBackend(backendName);
  if (values["no-kernels"]) useKernels(false);
  // Data-parallel workers are for the CPU backends with the kernels on: GPU backends and --no-kernels use one.
  if (!trainsDataParallel() || values["no-kernels"]) trainWorkers = sampleWorkers = 1;
  if (!rowInvariant()) sampleWorkers = 1; // the pool's samples equal one process's only where rows are invariant
  const rng = Rng.seeded(0);
  const model = createModel(CFG, rng.split());
  const blas = backend === "blas" ? blasInfo() : null;
  const blasNote = blas
    ? `, BLAS ${blas.library} (${blas.core} kernels, ${blas.threads} thread per product)`
    : "";
  console.log(
    `tfjs ${tf.version_core} backend ${backend}${blasNote} (attention: ${kernelInfo()}); ${
      parameterCount(model)
    } parameters; train workers ${trainWorkers}, sample workers ${sampleWorkers}`,
  );
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 0 });
  const batch = tf.tensor2d(randomTokens(rng, TRAIN_B * (CFG.context + 1), CFG.vocab), [
    TRAIN_B,
    CFG.context + 1,
  ], "int32");
  const rig: Rig = { model, opt, batch, trainer: null, sampler: null, rng };
  const result: Record<string, unknown> = {
    backend,
    ...(blas ? { blas } : {}),
    attention: kernelInfo(),
    config,
    train_workers: trainWorkers,
    sample_workers: sampleWorkers,
  };
  try {
    if (trainWorkers > 1) rig.trainer = await DataParallelTrainer.create(model, opt, trainWorkers);
    if (sampleWorkers > 1) rig.sampler = await SamplerPool.start(model, sampleWorkers);
    if (values.profile) {
      Object.assign(result, await profile(rig, !values["no-torch"], torchArgs));
      console.log(JSON.stringify(result));
      return 0;
    }
    const rows: Record<string, number | string>[] = [];
    for (let run = 1; run <= runs; run++) {
      const row: Record<string, number | string> = { run, load_before: load1() };
      const t = await tfjsRun(rig, steps, reps);
      Object.assign(row, { tfjs_train: Math.round(t.train), tfjs_sample: Math.round(t.sample) });
      if (!values["no-torch"]) {
        const torch = await runTorch(torchArgs);
        if (!torch.result) {
          console.log(`torch:       not run: ${torch.missing}`);
          result.torch_missing = torch.missing;
          values["no-torch"] = true;
        } else {
          const r = torch.result;
          result.torch_engine = r.engine;
          Object.assign(row, {
            torch_train: Number(r.train_tokens_per_s),
            torch_sample: Number(r.sample_tokens_per_s),
          });
          row.ratio_train = +(t.train / Number(r.train_tokens_per_s)).toFixed(3);
          row.ratio_sample = +(t.sample / Number(r.sample_tokens_per_s)).toFixed(3);
        }
      }
      row.load_after = load1();
      console.log(
        `run ${run}: load ${Number(row.load_before).toFixed(2)} → ${Number(row.load_after).toFixed(2)}; ` +
          `tfjs train ${row.tfjs_train}, sample ${row.tfjs_sample} tokens/s` +
          (row.torch_train
            ? `; torch train ${row.torch_train}, sample ${row.torch_sample}; ratio train ${row.ratio_train}, ` +
              `sample ${row.ratio_sample}`
            : ""),
      );
      rows.push(row);
    }
    const col = (k: string) => rows.map((r) => r[k]).filter((x) => typeof x === "number") as number[];
    console.log(`\nmedian (range) over ${runs} run(s); 1-min load ${spread(col("load_before"), 2)}:`);
    console.log(`  tfjs  train ${spread(col("tfjs_train"))}  sample ${spread(col("tfjs_sample"))} tokens/s`);
    if (col("torch_train").length) {
      console.log(
        `  torch train ${spread(col("torch_train"))}  sample ${spread(col("torch_sample"))} tokens/s`,
      );
      console.log(
        `  ratio tfjs/torch (per run): train ${spread(col("ratio_train"), 2)}  sample ${
          spread(col("ratio_sample"), 2)
        }  (targets: train >= 0.8, goal 1.0; sample >= 1.5)`,
      );
    }
    result.runs = rows;
    for (
      const k of ["tfjs_train", "tfjs_sample", "torch_train", "torch_sample", "ratio_train", "ratio_sample"]
    ) {
      if (col(k).length) result[`median_${k}`] = median(col(k));
    }
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    rig.trainer?.close();
    rig.sampler?.close();
    batch.dispose();
    disposeModel(model);
  }
}
