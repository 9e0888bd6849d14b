// What a VERL run will cost before it runs: GPU memory per GPU (training and rollout phases), the memory settings
// (parameter/optimizer offload, Ulysses sequence parallelism) chosen so the run fits, generations, GPU-hours at a
// stated throughput, and checkpoint storage. Estimates from the model's shape, not measurements.
import type { Recipe, VerlSettings } from "./recipes.ts";

/** The shape of a causal LM, enough for memory arithmetic. */
export interface ModelShape {
  /** Parameters (embeddings included). */
  params: number;
  layers: number;
  hidden: number;
  vocab: number;
  kvHeads: number;
  headDim: number;
}

/** Published shapes (config.json of each model) of the models the shipped sweeps train, by Hugging Face id. */
export const MODEL_SHAPES: Readonly<Record<string, ModelShape>> = {
  "Qwen/Qwen2.5-Math-7B": {
    params: 7.62e9,
    layers: 28,
    hidden: 3584,
    vocab: 152064,
    kvHeads: 4,
    headDim: 128,
  },
  "Qwen/Qwen3-8B-Base": { params: 8.19e9, layers: 36, hidden: 4096, vocab: 151936, kvHeads: 8, headDim: 128 },
  "meta-llama/Llama-3.1-8B-Instruct": {
    params: 8.03e9,
    layers: 32,
    hidden: 4096,
    vocab: 128256,
    kvHeads: 8,
    headDim: 128,
  },
};

/** GPU memory assumed per device (80 GB cards), in GB (1e9 bytes), and the share a plan may fill. */
const GPU_GB = 80;
const HEADROOM = 0.9;
/** Assumed end-to-end throughput (generation + log-probs + update) in generated tokens per GPU-second. */
const ASSUMED_TOKENS_PER_GPU_SECOND = 1000;
/** Assumed mean response length as a share of the maximum (DAPO's 7B responses average about half of it). */
const MEAN_RESPONSE_SHARE = 0.5;
/** Validation set sizes (problems) of the datasets a VERL sweep exports. */
const VAL_PROBLEMS: Readonly<Record<string, number>> = {
  math500: 500,
  aime2025: 30,
  "dapo-math-17k": 17917,
};

/** Memory settings of the FSDP actor and reference (VERL keys in overrides.ts). */
export interface MemorySettings {
  paramOffload: boolean;
  optimizerOffload: boolean;
  sequenceParallel: number;
}

/** Memory settings as a run's settings give them (null or absent: the plan chooses). */
export type MemoryChoice = { [K in keyof MemorySettings]?: MemorySettings[K] | null };

const GB = 1e9;

/**
 * Per-GPU memory of one VERL run: FSDP shards fp32 master weights (4 B/param), fp32 grads (4) and Adam moments
 * (8) over all GPUs, the bf16 reference (2) too; offloaded parts live in host memory. Training adds gradient-
 * checkpointed activations (2 B × hidden × (layers + 16) per token) and fp32 logits with their log-softmax
 * (8 B × vocab per token) for `ppo_max_token_len_per_gpu / sequenceParallel` tokens. Rollout gives vLLM
 * `gpuMemoryUtilization` of the card beside whatever training state stays resident; its KV cache holds what
 * remains after the bf16 weights (split over tensor parallelism) and 2 GB of runtime.
 */
export function estimateMemory(
  shape: ModelShape,
  recipe: Recipe,
  gpus: number,
  mem: MemorySettings,
) {
  const p = shape.params;
  const weights = mem.paramOffload ? 0 : 4 * p / gpus / GB;
  const grads = mem.paramOffload ? 0 : 4 * p / gpus / GB;
  const optimizer = mem.optimizerOffload ? 0 : 8 * p / gpus / GB;
  const reference = mem.paramOffload ? 0 : 2 * p / gpus / GB;
  const tokens = (recipe.maxPromptLength + recipe.maxResponseLength) / mem.sequenceParallel;
  const activations = tokens * 2 * shape.hidden * (shape.layers + 16) / GB;
  const logits = tokens * 8 * shape.vocab / GB;
  const layer = 2 * 2 * p / shape.layers / GB; // two unsharded bf16 layers in flight (FSDP prefetch)
  const train = weights + grads + optimizer + reference + activations + logits + layer;
  const rollout = recipe.gpuMemoryUtilization * GPU_GB + weights + optimizer + reference;
  const kvBytesPerToken = 2 * shape.layers * shape.kvHeads * shape.headDim * 2;
  const kvGb = recipe.gpuMemoryUtilization * GPU_GB - 2 * p / recipe.tensorParallel / GB - 2;
  const peak = Math.max(train, rollout);
  return {
    weights,
    grads,
    optimizer,
    reference,
    activations,
    logits,
    rollout,
    kvTokens: Math.max(0, Math.floor(kvGb * GB / kvBytesPerToken)),
    train,
    peak,
    fits: peak <= HEADROOM * GPU_GB,
  };
}

/** Per-GPU memory in GB by component; `peak` = max(training phase, rollout phase). */
export type MemoryEstimate = ReturnType<typeof estimateMemory>;

/** Candidate memory settings, cheapest first (offload costs host transfers; sequence parallelism costs all-to-all). */
const CANDIDATES: MemorySettings[] = [1, 2, 4, 8].flatMap((sp) => [
  { paramOffload: false, optimizerOffload: false, sequenceParallel: sp },
  { paramOffload: false, optimizerOffload: true, sequenceParallel: sp },
  { paramOffload: true, optimizerOffload: true, sequenceParallel: sp },
]);

/**
 * The memory settings of a run: the ones set in `settings` (paramOffload, optimizerOffload, sequenceParallel), the
 * rest chosen as the first candidate that fits (sequence parallelism must divide the GPUs per node); with no
 * known shape, VERL's own defaults (no offload, no sequence parallelism) and no estimate.
 */
export function planMemory(
  settings: Pick<VerlSettings, "model" | "nodes" | "gpusPerNode"> & MemoryChoice,
  recipe: Recipe,
): { memory: MemorySettings; estimate: MemoryEstimate | null } {
  const shape = MODEL_SHAPES[settings.model] ?? null;
  const gpus = settings.nodes * settings.gpusPerNode;
  const fixed = (m: MemorySettings): MemorySettings => ({
    paramOffload: settings.paramOffload ?? m.paramOffload,
    optimizerOffload: settings.optimizerOffload ?? m.optimizerOffload,
    sequenceParallel: settings.sequenceParallel ?? m.sequenceParallel,
  });
  if (shape === null) return { memory: fixed(CANDIDATES[0]), estimate: null };
  const options = CANDIDATES.map(fixed).filter((m) => settings.gpusPerNode % m.sequenceParallel === 0);
  for (const memory of options) {
    const estimate = estimateMemory(shape, recipe, gpus, memory);
    if (estimate.fits) return { memory, estimate };
  }
  const memory = options.at(-1) ?? fixed(CANDIDATES[0]);
  return { memory, estimate: estimateMemory(shape, recipe, gpus, memory) };
}

/** Cost of a run from its resolved recipe and plan facts (no I/O). */
export function runCost(input: {
  runId: string;
  settings:
    & Pick<VerlSettings, "model" | "nodes" | "gpusPerNode" | "valDatasets" | "maxCheckpointsToKeep">
    & MemoryChoice;
  recipe: Recipe;
  steps: number;
  eval: { n: number; every: number };
  saveFreq: number;
  dynamicSampling: boolean;
}) {
  const { recipe, steps, settings } = input;
  const gpus = settings.nodes * settings.gpusPerNode;
  const prompts = input.dynamicSampling ? recipe.genBatchSize : recipe.trainBatchSize;
  const generationsPerStep = prompts * recipe.rolloutN;
  const every = Math.min(input.eval.every, steps);
  const validations = 1 + Math.floor(steps / every) + (steps % every === 0 ? 0 : 1);
  const valProblems = settings.valDatasets.reduce((s, d) => s + (VAL_PROBLEMS[d] ?? 0), 0);
  const valGenerations = validations * valProblems * input.eval.n;
  const trainGenerations = steps * generationsPerStep;
  const generatedTokens = (trainGenerations + valGenerations) * recipe.maxResponseLength *
    MEAN_RESPONSE_SHARE;
  const shape = MODEL_SHAPES[settings.model];
  const checkpointBytes = shape ? 12 * shape.params : 0;
  const saves = input.saveFreq > 0 ? Math.ceil(steps / input.saveFreq) : 0;
  const kept = Math.min(saves, settings.maxCheckpointsToKeep ?? saves);
  const { memory, estimate } = planMemory(settings, recipe);
  return {
    runId: input.runId,
    gpus,
    // per training step (DAPO: per generation round; dynamic sampling may need more rounds)
    generationsPerStep,
    trainGenerations,
    validations,
    valGenerations,
    generatedTokens,
    gpuHours: generatedTokens / ASSUMED_TOKENS_PER_GPU_SECOND / 3600,
    // one actor checkpoint: fp32 weights + Adam moments
    checkpointBytes,
    // a new checkpoint is written before the oldest kept one is deleted
    checkpointPeakBytes: checkpointBytes * Math.min(saves, kept + 1),
    memory,
    estimate,
    // DAPO's dynamic sampling: generation counts are lower bounds
    atLeast: input.dynamicSampling,
  };
}

/** The cost of one run: generations, tokens, GPU-hours at the assumed throughput, checkpoint storage. */
export type RunCost = ReturnType<typeof runCost>;

const fmt = (x: number) =>
  x >= 1e6 ? `${(x / 1e6).toFixed(1)}M` : x >= 1e4 ? `${(x / 1e3).toFixed(0)}k` : `${x}`;

/** The dry-run table: one line per run, a total, and the assumptions it rests on. */
export function costTable(costs: readonly RunCost[]): string {
  if (costs.length === 0) return "VERL cost and memory plan: no runs";
  const head = `${"run".padEnd(28)} ${"gens/step".padStart(10)} ${"train gens".padStart(11)} ${
    "val gens".padStart(9)
  } ${"GPU-h".padStart(8)} ${"ckpt GB".padStart(8)} ${"GB/GPU".padStart(7)}  memory settings`;
  const lines = ["VERL cost and memory plan (estimates, not measurements):", head];
  for (const c of costs) {
    const ge = c.atLeast ? "≥" : "";
    const mem = c.estimate ? `${c.estimate.peak.toFixed(0)}${c.estimate.fits ? "" : "!"}` : "n/a";
    lines.push(
      `${c.runId.padEnd(28)} ${(ge + fmt(c.generationsPerStep)).padStart(10)} ${
        (ge + fmt(c.trainGenerations)).padStart(11)
      } ${fmt(c.valGenerations).padStart(9)} ${c.gpuHours.toFixed(0).padStart(8)} ${
        (c.checkpointPeakBytes / GB).toFixed(0).padStart(8)
      } ${mem.padStart(7)}  offload ${
        c.memory.paramOffload ? "params+optim" : c.memory.optimizerOffload ? "optim" : "none"
      }, sp ${c.memory.sequenceParallel}`,
    );
  }
  const sum = (f: (c: RunCost) => number) => costs.reduce((s, c) => s + f(c), 0);
  lines.push(
    `total: ${costs.length} runs, ${fmt(sum((c) => c.trainGenerations))}${
      costs.some((c) => c.atLeast) ? "+" : ""
    } training and ${fmt(sum((c) => c.valGenerations))} validation generations, ${
      sum((c) => c.gpuHours).toFixed(0)
    } GPU-hours, ${(sum((c) => c.checkpointPeakBytes) / 1e12).toFixed(2)} TB of checkpoints at peak`,
    `assumed: ${ASSUMED_TOKENS_PER_GPU_SECOND} generated tokens per GPU-second end to end, mean response ` +
      `${MEAN_RESPONSE_SHARE * 100}% of the maximum, ${GPU_GB} GB cards filled to ${HEADROOM * 100}%; ` +
      `GB/GPU is the peak of training and rollout ("!": does not fit); a checkpoint is fp32 weights + Adam ` +
      `(12 B/param). --verbose prints each run's overrides and launch script.`,
  );
  return lines.join("\n");
}
