// `deno task bench model`: train and sample throughput of the reference transformer, beside PyTorch's.
import * as tf from "@tensorflow/tfjs-core";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { parseFlags, parseNumber, UsageError } from "../../../common/args.ts";
import { Rng } from "../../../common/prng.ts";
import { BACKENDS, readsSync, trainsDataParallel } from "./backend.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  initBackend,
  type Model,
  type ModelConfig,
  parameterCount,
  sample,
  sampleAsync,
  tokenLogProbs,
  trainStep,
  trainStepAsync,
} from "./model.ts";
import { kernelInfo, useKernels } from "./ops/attention.ts";
import { coreCount, DataParallelTrainer, fullBatch } from "./parallel.ts";

/** The reference configuration of ../shared/bench/torch_reference.py (keep identical). */
export const REFERENCE: ModelConfig = { vocab: 64, dModel: 128, heads: 4, layers: 4, context: 64 };
const TRAIN_B = 32, SAMPLE_B = 256, PROMPT = 16, NEW = 48;

/** Usage text for `deno task bench model`. */
export const usage =
  `usage: deno task bench model [--backend NAME] [--steps N] [--reps N] [--no-torch] [--no-kernels] [--profile]
                              [--train-workers N]

Times the reference transformer (vocab 64, width 128, 4 heads, 4 layers, context 64) on tfjs:
  train   tokens/s: batch ${TRAIN_B}x64, next-token cross-entropy, Adam(lr 1e-3); median of --steps steps after 2 warm-ups
  sample  tokens/s: batch ${SAMPLE_B}, ${PROMPT}-token prompt, ${NEW} new tokens, temperature 1, KV cache; median of --reps
and, in the same invocation, the PyTorch CPU reference (../shared/bench/torch_reference.py via /usr/bin/python3).

  --backend NAME  ${BACKENDS.join(" | ")} (default auto)
  --steps N       timed train steps (default 5)
  --reps N        timed sampling runs (default 3)
  --no-torch      skip the PyTorch reference
  --no-kernels    attention through plain tfjs ops instead of the wasm SIMD kernels (to measure them)
  --profile       also print time per kernel for one train step and one sampling run
  --train-workers N  data-parallel train step over N Deno Workers (parallel.ts; default: number of cores,
                  ${coreCount()} here); 1 = the single-process trainStep; GPU backends and --no-kernels always use 1`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function randomTokens(rng: Rng, n: number, vocab: number): Int32Array {
  return Int32Array.from({ length: n }, () => rng.int(vocab));
}

/** One Adam step on next-token cross-entropy over a [TRAIN_B, context+1] batch; returns seconds. */
async function timeTrainStep(
  model: Model,
  opt: ReturnType<typeof createOptimizer>,
  batch: tf.Tensor2D,
): Promise<number> {
  const t0 = performance.now();
  const loss = () => tf.neg(tf.mean(tokenLogProbs(model, batch).logp)) as tf.Scalar;
  // webgpu under Deno cannot read GPU data synchronously; the other backends time the sync forms.
  if (readsSync()) trainStep(model, opt, loss);
  else await trainStepAsync(model, opt, loss);
  return (performance.now() - t0) / 1000;
}

async function timeSample(model: Model, rng: Rng): Promise<number> {
  const prompts = randomTokens(rng, SAMPLE_B * PROMPT, model.config.vocab);
  const opts = { maxNew: NEW, temperature: 1, topP: 1, rng };
  const t0 = performance.now();
  if (readsSync()) sample(model, prompts, SAMPLE_B, opts);
  else await sampleAsync(model, prompts, SAMPLE_B, opts);
  return (performance.now() - t0) / 1000;
}

async function repeat(n: number, f: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}

/** Total kernel time by kernel name while `f` runs, largest first. */
async function profileKernels(f: () => Promise<unknown>): Promise<[string, number, number][]> {
  const info = await tf.profile(async () => {
    await f();
    return [];
  });
  const byName = new Map<string, [number, number]>();
  for (const k of info.kernels) {
    const ms = typeof k.kernelTimeMs === "number" ? k.kernelTimeMs : 0;
    const [t, n] = byName.get(k.name) ?? [0, 0];
    byName.set(k.name, [t + ms, n + 1]);
  }
  return [...byName].map(([n, [t, c]]) => [n, t, c] as [string, number, number]).sort((a, b) => b[1] - a[1]);
}

function printProfile(title: string, rows: [string, number, number][]): void {
  const total = rows.reduce((a, r) => a + r[1], 0);
  console.log(`\n${title}: ${total.toFixed(0)} ms in kernels`);
  for (const [name, ms, count] of rows.slice(0, 15)) {
    console.log(`  ${name.padEnd(22)} ${ms.toFixed(1).padStart(8)} ms ${String(count).padStart(6)} calls`);
  }
}

/** Run the PyTorch reference script; null with a reason when python3/torch or the script is missing. */
async function torchReference(): Promise<{ result?: Record<string, number | string>; missing?: string }> {
  const script = fileURLToPath(new URL("../../../../shared/bench/torch_reference.py", import.meta.url));
  if (!existsSync(script)) return { missing: `${script} not found` };
  try {
    const probe = await new Deno.Command("/usr/bin/python3", { args: ["-c", "import torch"], stderr: "null" })
      .output();
    if (!probe.success) {
      return { missing: "PyTorch missing (apt-get install -y python3-torch libopenblas0-pthread)" };
    }
    const out = await new Deno.Command("/usr/bin/python3", { args: [script] }).output();
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    if (!out.success) {
      return {
        missing: `torch_reference.py failed: ${
          new TextDecoder().decode(out.stderr).trim().split("\n").at(-1)
        }`,
      };
    }
    return { result: JSON.parse(lines.at(-1)!) };
  } catch (e) {
    return { missing: `/usr/bin/python3 not runnable: ${(e as Error).message}` };
  }
}

/** Entry point for `deno task bench model`. */
export async function main(args: string[]): Promise<number> {
  const values = parseFlags(args, {
    backend: { type: "string" },
    steps: { type: "string" },
    reps: { type: "string" },
    "no-torch": { type: "boolean" },
    profile: { type: "boolean" },
    "no-kernels": { type: "boolean" },
    "train-workers": { type: "string" },
  }, false).values as {
    help?: boolean;
    backend?: string;
    steps?: string;
    reps?: string;
    "no-torch"?: boolean;
    profile?: boolean;
    "no-kernels"?: boolean;
    "train-workers"?: string;
  };
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const backendName = values.backend ?? "auto";
  if (!(BACKENDS as readonly string[]).includes(backendName)) {
    throw new UsageError(`--backend: expected one of ${BACKENDS.join(", ")}, got '${backendName}'`);
  }
  const steps = parseNumber(values.steps, "steps", 5, 1, 1000);
  const reps = parseNumber(values.reps, "reps", 3, 1, 100);
  let trainWorkers = parseNumber(values["train-workers"], "train-workers", coreCount(), 1, 64);
  const backend = await initBackend(backendName);
  if (values["no-kernels"]) useKernels(false);
  // Data-parallel workers are for the CPU backends with the kernels on: GPU backends and --no-kernels use one.
  if (!trainsDataParallel() || values["no-kernels"]) trainWorkers = 1;
  const rng = Rng.seeded(0);
  const model = createModel(REFERENCE, rng.split());
  console.log(
    `tfjs ${tf.version_core} backend ${backend} (attention: ${kernelInfo()}); ${
      parameterCount(model)
    } parameters`,
  );

  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 0 });
  const batch = tf.tensor2d(randomTokens(rng, TRAIN_B * (REFERENCE.context + 1), REFERENCE.vocab), [
    TRAIN_B,
    REFERENCE.context + 1,
  ], "int32");
  let trainer: DataParallelTrainer | null = null;
  if (trainWorkers > 1) {
    trainer = await DataParallelTrainer.create(model, opt, trainWorkers);
  }
  const rows = fullBatch(batch.dataSync() as Int32Array, TRAIN_B, REFERENCE.context + 1);
  let trainTimes: number[];
  try {
    trainTimes = (await repeat(steps + 2, async () => {
      if (!trainer) return await timeTrainStep(model, opt, batch);
      const t0 = performance.now();
      await trainer.step(rows);
      return (performance.now() - t0) / 1000;
    })).slice(2);
  } finally {
    trainer?.close();
  }
  const trainRate = (TRAIN_B * REFERENCE.context) / median(trainTimes);
  console.log(
    `tfjs train:  ${trainRate.toFixed(0)} tokens/s (median ${
      (median(trainTimes) * 1000).toFixed(0)
    } ms/step, ${trainer ? `data-parallel over ${trainWorkers} workers` : "single process"})`,
  );
  await timeSample(model, rng); // warm-up
  const sampleTimes = await repeat(reps, () => timeSample(model, rng));
  const sampleRate = (SAMPLE_B * NEW) / median(sampleTimes);
  console.log(
    `tfjs sample: ${sampleRate.toFixed(0)} tokens/s (median ${
      (median(sampleTimes) * 1000).toFixed(0)
    } ms/run)`,
  );
  if (values.profile) {
    printProfile("one train step", await profileKernels(() => timeTrainStep(model, opt, batch)));
    printProfile("one sampling run", await profileKernels(() => timeSample(model, rng)));
  }
  batch.dispose();
  disposeModel(model);

  const result: Record<string, unknown> = {
    backend,
    attention: kernelInfo(),
    train_workers: trainWorkers,
    train_tokens_per_s: Math.round(trainRate),
    sample_tokens_per_s: Math.round(sampleRate),
  };
  if (!values["no-torch"]) {
    const torch = await torchReference();
    if (torch.result) {
      const t = torch.result;
      console.log(
        `torch:       train ${t.train_tokens_per_s} tokens/s, sample ${t.sample_tokens_per_s} tokens/s (${t.engine})`,
      );
      const rt = trainRate / Number(t.train_tokens_per_s), rs = sampleRate / Number(t.sample_tokens_per_s);
      console.log(
        `ratio tfjs/torch: train ${rt.toFixed(2)}, sample ${rs.toFixed(2)} (target >= 0.5 on both)`,
      );
      Object.assign(result, { torch: t, ratio_train: +rt.toFixed(3), ratio_sample: +rs.toFixed(3) });
    } else {
      console.log(`torch:       not run: ${torch.missing}`);
      result.torch_missing = torch.missing;
    }
  }
  console.log(JSON.stringify(result));
  return 0;
}
