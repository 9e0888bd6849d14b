// Hydra overrides for VERL's trainer (verl.trainer.main_ppo, or DAPO's recipe entry for dynamic sampling),
// derived from the run's resolved algorithm (the RL core's AlgoConfig) and the recipe knobs. They are written
// once under v0.7.0's key names and rewritten for the target release by versions.ts.
import type { AlgoConfig } from "../../core/presets.ts";
import type { MemorySettings } from "./cost.ts";
import type { Recipe, VerlSettings } from "./recipes.ts";
import {
  checkNotLegacy,
  forVersion,
  MAIN_DAPO,
  MAIN_PPO,
  type VerlRelease,
  verlRelease,
} from "./versions.ts";

/** Everything the overrides depend on besides the algorithm. */
export interface OverrideInput {
  runId: string;
  seed: number;
  steps: number;
  eval: { n: number; every: number };
  settings: VerlSettings;
  recipe: Recipe;
  /** Where the run's files live as the cluster sees them; aceDir (<runDir>/verl) holds its ace_verl.py. */
  paths: { trainFiles: string[]; valFiles: string[]; runDir: string; aceDir: string };
  /** FSDP offload and sequence parallelism (cost.ts planMemory); absent: VERL's defaults. */
  memory?: MemorySettings;
}

/**
 * The RL core's estimators VERL has under the same name (algorithm.adv_estimator); w_reinforce is registered by
 * ace_verl.py (VERL has none built in), and ACE runs use ace_verl's GRPO-based `ace`.
 */
const VERL_ESTIMATORS = ["grpo", "rloo", "grpo_passk", "w_reinforce"];

/** VERL's algorithm.adv_estimator for the run; throws naming the method when VERL cannot run it. */
export function advEstimator(algo: AlgoConfig): string {
  if (algo.ace.enabled) {
    if (algo.advEstimator !== "grpo") {
      throw new RangeError(
        `algo.advEstimator is '${algo.advEstimator}' with ACE on; ace_verl's ace estimator is GRPO-based, so ` +
          `ACE over ${algo.advEstimator} is not mapped to VERL`,
      );
    }
    return "ace"; // as ace_verl.py registers it
  }
  if (!VERL_ESTIMATORS.includes(algo.advEstimator)) {
    throw new RangeError(`algo.advEstimator '${algo.advEstimator}' has no VERL estimator mapped`);
  }
  return algo.advEstimator;
}

/** Ray calls this in every worker process so the `ace` estimator and the call-site patch exist there. */
export const ACE_SETUP_HOOK = "ace_verl.install";
/** The reward module (bench/engines/verl/reward.py) as copied into each run's verl/ folder. */
export const REWARD_MODULE = "reward.py";
/** reward.py's function per reward scheme: ±1 (math_dapo's scale) or 1/0, both from acebench's strict grade. */
export const REWARD_FUNCTIONS: Record<AlgoConfig["rewardScheme"], string> = {
  pm1: "compute_score",
  binary: "compute_score_binary",
};

/** The Python module to run for this algorithm on the target release (settings.entrypoint wins). */
export function entrypointFor(algo: AlgoConfig, settings: VerlSettings): string {
  const release = verlRelease(settings.verlVersion);
  return settings.entrypoint ?? (algo.dynamicSampling.enabled ? release.dapoEntry : MAIN_PPO);
}

/** Where ace_verl.py appends per-step diagnostics, relative to the run folder; ingest turns it into metrics.jsonl. */
export const ACE_METRICS_FILE = "ace_metrics.jsonl";

/**
 * The environment ace_verl.py reads (strings, as Ray's env_vars require): ACE options; DAPO's generation budget
 * where the release's trainer has no round cap (0.9.0's Sync DAPO: ace_verl stops the run after maxRounds ×
 * genBatchSize prompts in one step; maxRounds ≤ 0: no cap); the diagnostics file when settings.aceDiagnostics.
 */
export function verlEnv(
  algo: AlgoConfig,
  settings: VerlSettings,
  runDir: string,
  recipe: Pick<Recipe, "genBatchSize">,
): Record<string, string> {
  const env: Record<string, string> = {};
  const { enabled, maxRounds } = algo.dynamicSampling;
  if (enabled && maxRounds > 0 && verlRelease(settings.verlVersion).dapoEntry !== MAIN_DAPO) {
    env.ACE_VERL_DAPO_MAX_ROUNDS = String(maxRounds);
    env.ACE_VERL_DAPO_GEN_BATCH = String(recipe.genBatchSize);
  }
  if (algo.ace.enabled) {
    env.ACE_VERL_ALPHA = String(algo.ace.alpha);
    env.ACE_VERL_PHI = algo.ace.phi;
    env.ACE_VERL_AGGREGATION = algo.ace.aggregation;
    env.ACE_VERL_CLIP = algo.ace.clip === null ? "none" : String(algo.ace.clip);
  }
  if (algo.advEstimator === "w_reinforce") env.ACE_VERL_W_REINFORCE_LAMBDA = String(algo.wReinforceLambda);
  if (settings.aceDiagnostics) env.ACE_VERL_METRICS_FILE = `${runDir}/${ACE_METRICS_FILE}`;
  return env;
}

/**
 * The Hydra overrides for settings.verlVersion, grouped as data / algorithm / actor / rollout / trainer, then
 * settings.extraOverrides (passed as written). Throws (naming the field) for algorithm options VERL cannot
 * express. `dropped`: neutral overrides the release has no key for, each "key=value: reason" (launch.sh prints
 * them); a key the release only keeps for backward compatibility (legacy) throws naming it.
 */
export function versionedOverrides(algo: AlgoConfig, input: OverrideInput) {
  checkExpressible(algo, input.recipe);
  const release = verlRelease(input.settings.verlVersion);
  const neutral = [
    ...dataOverrides(input),
    ...algorithmOverrides(algo, input, release),
    ...actorOverrides(algo, input),
    ...rolloutOverrides(input),
    ...rewardOverrides(algo, input),
    ...rayOverrides(verlEnv(algo, input.settings, input.paths.runDir, input.recipe)),
    ...trainerOverrides(input),
    ...(input.memory ? memoryOverrides(input.memory) : []),
  ];
  const { overrides, dropped } = forVersion(neutral, release);
  input.settings.extraOverrides.forEach((o, i) =>
    checkNotLegacy(o, release, `settings.extraOverrides[${i}]`)
  );
  return { overrides: [...overrides, ...input.settings.extraOverrides], dropped };
}

/** The override putting `path` (colon-separated; quoted for Hydra: no single quote) on every Ray worker's path. */
export function workerPythonPath(path: string): string {
  return `++ray_kwargs.ray_init.runtime_env.env_vars.PYTHONPATH='${path}'`;
}

/** Policy losses VERL 0.7.0 has under the RL core's names (actor.policy_loss.loss_mode). */
const VERL_POLICY_LOSSES = ["vanilla", "clip_cov", "kl_cov"];

/** VERL's actor.policy_loss overrides of a covariance loss (Cui et al.); none for vanilla. */
function policyLossOverrides(algo: AlgoConfig): string[] {
  if (algo.policyLoss === "vanilla") return [];
  const cov = algo.cov;
  if (!cov) throw new RangeError(`algo.cov is missing; policyLoss '${algo.policyLoss}' needs it`);
  const key = "actor_rollout_ref.actor.policy_loss";
  return [
    `${key}.loss_mode=${algo.policyLoss}`,
    `${key}.clip_cov_ratio=${cov.clipRatio}`,
    `${key}.clip_cov_lb=${cov.clipLb}`,
    `${key}.clip_cov_ub=${cov.clipUb}`,
    `${key}.kl_cov_ratio=${cov.klRatio}`,
    `${key}.ppo_kl_coef=${cov.klCoef}`,
  ];
}

function checkExpressible(algo: AlgoConfig, recipe: Recipe): void {
  if (algo.oracle) {
    throw new RangeError("algo.oracle (the oracle control) needs the tfjs engine's known methods");
  }
  advEstimator(algo);
  if (!VERL_POLICY_LOSSES.includes(algo.policyLoss)) {
    throw new RangeError(
      `algo.policyLoss '${algo.policyLoss}' is not mapped to VERL (${VERL_POLICY_LOSSES.join(", ")})`,
    );
  }
  if (algo.ace.allWrong) {
    throw new RangeError(
      "algo.ace.allWrong (the ace-allwrong ablation) is not mapped to VERL: ace_verl has no such term",
    );
  }
  if (algo.ace.enabled && algo.ace.phi === "batch-mean") {
    throw new RangeError("algo.ace.phi 'batch-mean' (the ace-uniform control) is not mapped to VERL");
  }
  if (algo.trainOn !== "all") {
    throw new RangeError(
      `algo.trainOn is '${algo.trainOn}' (nsr, psr); VERL's trainer updates on the whole batch, so training on a ` +
        "subset is not mapped (Zhu et al.'s fork subsets it in ray_trainer.py)",
    );
  }
  if (algo.stdEps !== 1e-6) throw new RangeError(`algo.stdEps is ${algo.stdEps}; VERL fixes it at 1e-6`);
  if (algo.logRatioClamp !== 20) {
    throw new RangeError(`algo.logRatioClamp is ${algo.logRatioClamp}; VERL fixes the log-ratio clamp at 20`);
  }
  if (algo.clipC === null) {
    throw new RangeError("algo.clipC is null; VERL always applies the dual clip (set a value > 1)");
  }
  if (algo.dynamicSampling.enabled && algo.dynamicSampling.onExhausted !== "error") {
    throw new RangeError(
      "algo.dynamicSampling.onExhausted is 'partial'; DAPO's VERL trainer only raises ('error')",
    );
  }
  if (algo.overlong.enabled && algo.overlong.buffer > recipe.maxResponseLength) {
    throw new RangeError(
      `algo.overlong.buffer is ${algo.overlong.buffer}; expected ≤ maxResponseLength (${recipe.maxResponseLength})`,
    );
  }
}

/** A Hydra list of quoted strings, e.g. ["a.parquet","b.parquet"]. */
function hydraList(items: string[]): string {
  return `[${items.map((s) => JSON.stringify(s)).join(",")}]`;
}

function dataOverrides({ paths, recipe, seed }: OverrideInput): string[] {
  return [
    `data.train_files=${hydraList(paths.trainFiles)}`,
    `data.val_files=${hydraList(paths.valFiles)}`,
    "data.prompt_key=prompt",
    // v0.7.0's agent loop ignores data.truncation: a prompt over max_prompt_length must be dropped up front.
    "data.filter_overlong_prompts=True",
    `data.max_prompt_length=${recipe.maxPromptLength}`,
    `data.max_response_length=${recipe.maxResponseLength}`,
    `data.train_batch_size=${recipe.trainBatchSize}`,
    `++data.seed=${seed}`,
  ];
}

function algorithmOverrides(algo: AlgoConfig, { recipe }: OverrideInput, release: VerlRelease): string[] {
  const out = [
    `algorithm.adv_estimator=${advEstimator(algo)}`,
    `algorithm.norm_adv_by_std_in_grpo=${py(algo.normByStd)}`,
    // KL lives in the loss (as the core applies it), never in the reward.
    "algorithm.use_kl_in_reward=False",
    "algorithm.kl_ctrl.kl_coef=0.0",
  ];
  if (algo.dynamicSampling.enabled) {
    out.push(
      "algorithm.filter_groups.enable=True",
      "algorithm.filter_groups.metric=acc",
      `algorithm.filter_groups.max_num_gen_batches=${algo.dynamicSampling.maxRounds}`,
    );
    // VERL's own Sync DAPO (V1 trainer) keeps up to this many train batches of prompts in flight: the gen batch.
    const inflight = Math.ceil(recipe.genBatchSize / recipe.trainBatchSize);
    if (release.dapoEntry !== MAIN_DAPO) {
      out.push(`algorithm.filter_groups.max_inflight_gen_batches=${inflight}`);
    }
  }
  return out;
}

function actorOverrides(algo: AlgoConfig, { settings, recipe, seed }: OverrideInput): string[] {
  const maxTokens = recipe.maxPromptLength + recipe.maxResponseLength;
  // ACE needs ref log-probs; VERL creates the reference worker only with a KL loss, so ACE without KL gets a 0 coef.
  const useKlLoss = algo.klCoef > 0 || algo.ace.enabled;
  return [
    `actor_rollout_ref.model.path=${JSON.stringify(settings.model)}`,
    "actor_rollout_ref.model.use_remove_padding=True",
    "actor_rollout_ref.model.enable_gradient_checkpointing=True",
    `actor_rollout_ref.actor.optim.lr=${recipe.lr}`,
    `actor_rollout_ref.actor.optim.lr_warmup_steps=${recipe.lrWarmupSteps}`,
    `actor_rollout_ref.actor.optim.weight_decay=${recipe.weightDecay}`,
    `actor_rollout_ref.actor.grad_clip=${recipe.gradClip}`,
    `actor_rollout_ref.actor.ppo_mini_batch_size=${recipe.ppoMiniBatchSize}`,
    "actor_rollout_ref.actor.ppo_epochs=1",
    "actor_rollout_ref.actor.use_dynamic_bsz=True",
    `actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${maxTokens}`,
    `actor_rollout_ref.actor.clip_ratio_low=${algo.clipLow}`,
    `actor_rollout_ref.actor.clip_ratio_high=${algo.clipHigh}`,
    `actor_rollout_ref.actor.clip_ratio_c=${algo.clipC}`,
    `actor_rollout_ref.actor.loss_agg_mode=${algo.lossAgg}`,
    `actor_rollout_ref.actor.entropy_coeff=${algo.entropyCoef}`,
    `actor_rollout_ref.actor.use_kl_loss=${py(useKlLoss)}`,
    `actor_rollout_ref.actor.kl_loss_coef=${algo.klCoef}`,
    `actor_rollout_ref.actor.kl_loss_type=${algo.klType}`,
    ...policyLossOverrides(algo),
    `++actor_rollout_ref.actor.data_loader_seed=${seed}`,
    "actor_rollout_ref.ref.log_prob_use_dynamic_bsz=True",
    `actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=${maxTokens}`,
  ];
}

function rolloutOverrides({ recipe, eval: ev, seed }: OverrideInput): string[] {
  const maxTokens = recipe.maxPromptLength + recipe.maxResponseLength;
  return [
    "actor_rollout_ref.rollout.name=vllm",
    `actor_rollout_ref.rollout.n=${recipe.rolloutN}`,
    `actor_rollout_ref.rollout.tensor_model_parallel_size=${recipe.tensorParallel}`,
    `actor_rollout_ref.rollout.gpu_memory_utilization=${recipe.gpuMemoryUtilization}`,
    "actor_rollout_ref.rollout.enable_chunked_prefill=True",
    `actor_rollout_ref.rollout.max_num_batched_tokens=${maxTokens}`,
    "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=True",
    `actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=${maxTokens}`,
    `actor_rollout_ref.rollout.temperature=${recipe.rolloutTemperature}`,
    `actor_rollout_ref.rollout.top_p=${recipe.rolloutTopP}`,
    "actor_rollout_ref.rollout.top_k=-1",
    // RolloutConfig has no `seed`; vLLM's engine args take it from engine_kwargs.vllm (vllm_async_server.py).
    `++actor_rollout_ref.rollout.engine_kwargs.vllm.seed=${seed}`,
    // Validation draws n samples per problem so acebench can compute unbiased pass@k from the dumps.
    "actor_rollout_ref.rollout.val_kwargs.do_sample=True",
    `actor_rollout_ref.rollout.val_kwargs.n=${ev.n}`,
    `actor_rollout_ref.rollout.val_kwargs.temperature=${recipe.valTemperature}`,
    `actor_rollout_ref.rollout.val_kwargs.top_p=${recipe.valTopP}`,
    "actor_rollout_ref.rollout.val_kwargs.top_k=-1",
  ];
}

function rewardOverrides(algo: AlgoConfig, { recipe, settings, paths }: OverrideInput): string[] {
  const out = algo.dynamicSampling.enabled ? [`data.gen_batch_size=${recipe.genBatchSize}`] : [];
  // acebench reward: every arm scores with reward.py, i.e. acebench's strict grader (the grade the report counts).
  out.push(
    `custom_reward_function.path=${JSON.stringify(`${paths.aceDir}/${REWARD_MODULE}`)}`,
    `custom_reward_function.name=${REWARD_FUNCTIONS[algo.rewardScheme]}`,
  );
  if (!algo.overlong.enabled) return out;
  const buffer = {
    enable: "True",
    len: algo.overlong.buffer,
    penalty_factor: algo.overlong.factor,
    log: "False",
  };
  // v0.7.0's reward loop (reward_model.use_reward_loop, the default) reads reward_kwargs.overlong_buffer_cfg.
  out.push(
    "reward_model.reward_manager=dapo",
    ...Object.entries(buffer).map(([k, v]) => `+reward_model.reward_kwargs.overlong_buffer_cfg.${k}=${v}`),
    `+reward_model.reward_kwargs.max_resp_len=${recipe.maxResponseLength}`,
  );
  // main_dapo's trainer-side reward manager reads reward_model.overlong_buffer (used when the loop is off).
  if (entrypointFor(algo, settings) === MAIN_DAPO) {
    out.push(...Object.entries(buffer).map(([k, v]) => `reward_model.overlong_buffer.${k}=${v}`));
  }
  return out;
}

function rayOverrides(env: Record<string, string>): string[] {
  // Always installed: besides ACE and diagnostics, ace_verl's fit() wrapper keeps a finished run from training on.
  const vars = Object.entries(env).map(([k, v]) =>
    `++ray_kwargs.ray_init.runtime_env.env_vars.${k}=${JSON.stringify(v)}`
  );
  return [`++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=${ACE_SETUP_HOOK}`, ...vars];
}

function trainerOverrides({ runId, steps, eval: ev, settings, paths }: OverrideInput): string[] {
  return [
    `trainer.project_name=${settings.projectName}`,
    `trainer.experiment_name=${runId}`,
    // VERL's file logger: per-step metrics (entropy, clip fraction, response length) for ingest; launch.sh
    // names the file (VERL_FILE_LOGGER_PATH, one per start: the logger truncates it).
    `trainer.logger=["console","file"]`,
    `trainer.nnodes=${settings.nodes}`,
    `trainer.n_gpus_per_node=${settings.gpusPerNode}`,
    `trainer.total_training_steps=${steps}`,
    "trainer.total_epochs=1000",
    "trainer.val_before_train=True",
    `trainer.test_freq=${Math.min(ev.every, steps)}`,
    `trainer.save_freq=${settings.saveFreq}`,
    "trainer.resume_mode=auto",
    `trainer.max_actor_ckpt_to_keep=${settings.maxCheckpointsToKeep ?? "null"}`,
    `trainer.default_local_dir=${JSON.stringify(`${paths.runDir}/checkpoints`)}`,
    `trainer.validation_data_dir=${JSON.stringify(`${paths.runDir}/val_generations`)}`,
    // @hydra.main's own outputs (.hydra/config.yaml, overrides.yaml) go to the run folder, not into the checkout
    `hydra.run.dir=${JSON.stringify(`${paths.runDir}/hydra/\${now:%Y%m%d-%H%M%S}`)}`,
  ];
}

/** Memory plan (cost.ts): FSDP parameter/optimizer offload of actor and reference, Ulysses sequence parallelism. */
function memoryOverrides(memory: MemorySettings): string[] {
  return [
    `actor_rollout_ref.actor.fsdp_config.param_offload=${py(memory.paramOffload)}`,
    `actor_rollout_ref.actor.fsdp_config.optimizer_offload=${py(memory.optimizerOffload)}`,
    `actor_rollout_ref.ref.fsdp_config.param_offload=${py(memory.paramOffload)}`,
    `actor_rollout_ref.actor.ulysses_sequence_parallel_size=${memory.sequenceParallel}`,
    `actor_rollout_ref.ref.ulysses_sequence_parallel_size=${memory.sequenceParallel}`,
  ];
}

function py(value: boolean): string {
  return value ? "True" : "False";
}
