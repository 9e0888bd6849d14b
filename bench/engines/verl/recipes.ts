// VERL engine settings: the schema-validated knobs plus the published recipe defaults they fall back to.
import { loadSchema, validate } from "../../../common/config.ts";
import type { VerlVersion } from "./versions.ts";

/** Datasets the VERL export can write. */
export type VerlDataset = "dapo-math-17k" | "math500" | "aime2025";

/** Validated settings of a VERL run (schema defaults filled in; null recipe knobs resolved by `resolveRecipe`). */
export interface VerlSettings extends Partial<Record<keyof Recipe, number | null>> {
  model: string;
  rayAddress: string | null;
  nodes: number;
  gpusPerNode: number;
  clusterSweepDir: string | null;
  python: string;
  /** The VERL release the plan targets (versions.ts). */
  verlVersion: VerlVersion;
  deno: string;
  acebenchRoot: string | null;
  /** FSDP offload and Ulysses sequence parallelism; null: chosen by cost.ts so the run fits. */
  paramOffload: boolean | null;
  optimizerOffload: boolean | null;
  sequenceParallel: number | null;
  verlRoot: string | null;
  entrypoint: string | null;
  launch: "none" | "local" | "ray-job";
  /** launch ray-job (ray_jobs.ts): runs in flight (null: what the cluster holds), Ctrl-C, retries, upload, polling. */
  maxConcurrentJobs: number | null;
  onInterrupt: "stop" | "detach";
  jobRetries: number;
  verlInstall: "upload" | "image";
  maxUploadMB: number;
  jobPollSeconds: number;
  trainDatasets: VerlDataset[];
  valDatasets: VerlDataset[];
  template: string;
  datasetCacheDir: string | null;
  datasetMirror: string | null;
  dataSources: Record<string, string>;
  saveFreq: number;
  maxCheckpointsToKeep: number | null;
  aceDiagnostics: boolean;
  projectName: string;
  extraOverrides: string[];
}

/**
 * DAPO: verl-recipe `dapo/test_dapo_7b_math.sh`, the 7B-scale script of the published recipe (arXiv
 * 2503.14476; prompt batch 512, gen batch 3x, mini-batch 32, n 16, lr 1e-6 with 10 warmup steps, wd 0.1, grad
 * clip 1.0, max response 8192, rollout temp/top_p 1.0/1.0, validation temp/top_p 1.0/0.7).
 */
export const DAPO_RECIPE = {
  trainBatchSize: 512,
  /** Prompts generated per round of dynamic sampling (DAPO's gen batch); GRPO generates the train batch. */
  genBatchSize: 1536,
  ppoMiniBatchSize: 32,
  rolloutN: 16,
  maxPromptLength: 2048,
  maxResponseLength: 8192,
  lr: 1e-6,
  lrWarmupSteps: 10,
  weightDecay: 0.1,
  gradClip: 1.0,
  rolloutTemperature: 1.0,
  rolloutTopP: 1.0,
  valTemperature: 1.0,
  valTopP: 0.7,
  tensorParallel: 4,
  gpuMemoryUtilization: 0.8,
};

/** The recipe knobs a null setting falls back to. */
export type Recipe = typeof DAPO_RECIPE;

/**
 * GRPO: VERL's GRPO example (`examples/grpo_trainer`, Qwen2-7B on math): prompt batch 1024, mini-batch 256, n 5,
 * lengths 1024/1024, lr 1e-6, actor.yaml's wd 0.01 and grad clip 1.0, no warmup. The algorithm knobs (clip, KL,
 * loss aggregation) come from the RL core's preset, not from here. Validation sampling follows DAPO's settings
 * so the two recipes are evaluated alike.
 */
const GRPO_RECIPE: Recipe = {
  trainBatchSize: 1024,
  genBatchSize: 1024,
  ppoMiniBatchSize: 256,
  rolloutN: 5,
  maxPromptLength: 1024,
  maxResponseLength: 1024,
  lr: 1e-6,
  lrWarmupSteps: 0,
  weightDecay: 0.01,
  gradClip: 1.0,
  rolloutTemperature: 1.0,
  rolloutTopP: 1.0,
  valTemperature: 1.0,
  valTopP: 0.7,
  tensorParallel: 2,
  gpuMemoryUtilization: 0.6,
};

/** Validate raw engine settings against settings.schema.json (fills defaults); the error names `source` and the field. */
export function validateVerlSettings(raw: unknown, source = "settings"): VerlSettings {
  const schema = loadSchema(new URL("./settings.schema.json", import.meta.url));
  const settings = validate<VerlSettings>(schema, structuredClone(raw ?? {}), source);
  // the bundled grader carries its own Deno: a Deno named without a checkout to run would be ignored
  if (settings.acebenchRoot === null && settings.deno !== "deno") {
    throw new RangeError(
      `${source}.deno is '${settings.deno}', but the grader is bundled into the sweep with its own Deno ` +
        `(${source}.acebenchRoot is null): set acebenchRoot to a checkout to run its grader with that Deno, or drop deno`,
    );
  }
  if (settings.genBatchSize && settings.trainBatchSize && settings.genBatchSize < settings.trainBatchSize) {
    throw new RangeError(
      `${source}.genBatchSize is ${settings.genBatchSize}; expected ≥ trainBatchSize (${settings.trainBatchSize})`,
    );
  }
  return settings;
}

/** The recipe for a preset family (dapo-like presets use DAPO's) with the non-null settings laid over it. */
export function resolveRecipe(family: "grpo" | "dapo", settings: VerlSettings): Recipe {
  const recipe = { ...(family === "dapo" ? DAPO_RECIPE : GRPO_RECIPE) };
  for (const key of Object.keys(recipe) as (keyof Recipe)[]) {
    const value = settings[key];
    if (typeof value === "number") recipe[key] = value;
  }
  if (recipe.genBatchSize < recipe.trainBatchSize) recipe.genBatchSize = recipe.trainBatchSize;
  return recipe;
}
