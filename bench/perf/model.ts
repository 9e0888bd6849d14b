// `deno task bench model`: train and sample throughput of the reference transformer beside PyTorch's, in
// alternating runs of one invocation (so both see the same machine load), with medians, ranges and load.
import * as tf from "@tensorflow/tfjs-core";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
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

/** Usage text for `deno task bench model`. */
export const usage =
  `usage: deno task bench model [--runs N] [--backend NAME] [--steps N] [--reps N] [--no-torch] [--no-kernels]
                              [--profile] [--train-workers N] [--sample-workers N] [--config reference|gpu]
                              [--python LIST]

Times the reference transformer (vocab 64, width 128, 4 heads, 4 layers, context 64) on tfjs:
  train   tokens/s: batch ${TRAIN_B}x64, next-token cross-entropy, Adam(lr 1e-3); median of --steps steps after 2 warm-ups
  sample  tokens/s: batch ${SAMPLE_B}, ${PROMPT}-token prompt, ${NEW} new tokens, temperature 1, KV cache; median of --reps
and, after each tfjs run, the PyTorch CPU reference (bench/perf/torch_reference.py, best of 1 and 2 threads) under
each Python of --python, each line naming its torch version. Prints every run with the load average, then
medians and ranges of figures and ratios per PyTorch.

  --runs N        alternating tfjs/PyTorch runs (default 3)
  --config NAME   reference (default) or gpu: width 512, 8 heads, 8 layers, context 256, 240 new tokens
  --backend NAME  ${BACKENDS.join(" | ")} (default auto)
  --steps N       timed train steps per run (default 5)
  --reps N        timed sampling runs per run (default 3)
  --no-torch      skip the PyTorch reference
  --python LIST   comma-separated Python interpreters with torch (default: /usr/bin/python3, Debian's torch
                  1.13, then ${DEFAULT_VENV_PYTHON}
                  where present: a current torch, "python3 -m venv ~/.cache/acebench/torch-venv &&
                  ~/.cache/acebench/torch-venv/bin/pip install torch")
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

/** Run torch_reference.py under `python` with `args`; its last stdout line as JSON, or why it could not run. */
async function runTorch(
  python: string,
  args: string[],
): Promise<{ result?: Record<string, unknown>; missing?: string }> {
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
    return { result: JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!) };
  } catch (e) {
    return { missing: `${python} not runnable: ${(e as Error).message}` };
  }
}

/** One PyTorch timing of a run: its version string, interpreter, tokens/s and the tfjs/torch ratios. */
interface TorchRow {
  engine: string;
  python: string;
  train: number;
  sample: number;
  ratio_train: number;
  ratio_sample: number;
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
async function profile(rig: Rig, pythons: string[], torchArgs: string[]): Promise<Record<string, unknown>> {
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
  for (const python of pythons) {
    const r = await runTorch(python, ["--profile", "--threads", "2", ...torchArgs]);
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
      out[String(r.result.engine)] = torchTables;
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
    python: { type: "string" },
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
  let pythons = values["no-torch"] ? [] : torchPythons(values.python as string | undefined);
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
      Object.assign(result, await profile(rig, pythons, torchArgs));
      console.log(JSON.stringify(result));
      return 0;
    }
    const rows: {
      run: number;
      load_before: number;
      load_after?: number;
      tfjs_train?: number;
      tfjs_sample?: number;
      torch: TorchRow[];
    }[] = [];
    for (let run = 1; run <= runs; run++) {
      const row: (typeof rows)[number] = { run, load_before: load1(), torch: [] };
      const t = await tfjsRun(rig, steps, reps);
      Object.assign(row, { tfjs_train: Math.round(t.train), tfjs_sample: Math.round(t.sample) });
      const torch: TorchRow[] = [];
      for (const python of pythons) {
        const r = await runTorch(python, torchArgs);
        if (!r.result) {
          console.log(`torch:       not run: ${r.missing}`);
          result.torch_missing = [...(result.torch_missing as string[] | undefined ?? []), r.missing];
          pythons = pythons.filter((p) => p !== python);
          continue;
        }
        const train = Number(r.result.train_tokens_per_s), sample = Number(r.result.sample_tokens_per_s);
        torch.push({
          engine: String(r.result.engine),
          python,
          train,
          sample,
          ratio_train: +(t.train / train).toFixed(3),
          ratio_sample: +(t.sample / sample).toFixed(3),
        });
      }
      row.load_after = load1();
      console.log(
        `run ${run}: load ${Number(row.load_before).toFixed(2)} → ${Number(row.load_after).toFixed(2)}; ` +
          `tfjs train ${row.tfjs_train}, sample ${row.tfjs_sample} tokens/s`,
      );
      for (const r of torch) {
        console.log(
          `       ${r.engine} (${r.python}): train ${r.train}, sample ${r.sample}; ratio tfjs/torch train ` +
            `${r.ratio_train}, sample ${r.ratio_sample}`,
        );
      }
      row.torch = torch;
      rows.push(row);
    }
    const col = (k: "load_before" | "tfjs_train" | "tfjs_sample") => rows.map((r) => r[k] as number);
    console.log(`\nmedian (range) over ${runs} run(s); 1-min load ${spread(col("load_before"), 2)}:`);
    console.log(`  tfjs  train ${spread(col("tfjs_train"))}  sample ${spread(col("tfjs_sample"))} tokens/s`);
    result.runs = rows;
    result.median_tfjs_train = median(col("tfjs_train"));
    result.median_tfjs_sample = median(col("tfjs_sample"));
    const engines = [...new Set(rows.flatMap((r) => r.torch.map((t) => t.engine)))];
    result.torch = engines.map((engine) => {
      const of = rows.flatMap((r) => r.torch.filter((t) => t.engine === engine));
      const tcol = (k: "train" | "sample" | "ratio_train" | "ratio_sample") => of.map((t) => t[k]);
      console.log(
        `  ${engine} (${of[0].python}): train ${spread(tcol("train"))}  sample ${
          spread(tcol("sample"))
        } tokens/s`,
      );
      console.log(
        `    ratio tfjs/torch (per run): train ${spread(tcol("ratio_train"), 2)}  sample ${
          spread(tcol("ratio_sample"), 2)
        }  (targets: train >= 0.8, goal 1.0; sample >= 1.5)`,
      );
      return {
        engine,
        python: of[0].python,
        median_train: median(tcol("train")),
        median_sample: median(tcol("sample")),
        median_ratio_train: median(tcol("ratio_train")),
        median_ratio_sample: median(tcol("ratio_sample")),
      };
    });
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    rig.trainer?.close();
    rig.sampler?.close();
    batch.dispose();
    disposeModel(model);
  }
}
