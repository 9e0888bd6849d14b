// Named algorithm presets (GRPO, DAPO, their ACE variants and the baselines a reviewer of ACE asks for) and the
// merge of sweep overrides into them, validated by algo.schema.json.
import { loadSchema, validate, ValidationError } from "../../common/config.ts";
import type { AceConfig } from "./ace.ts";
import type { CovConfig } from "./cov_losses.ts";
import { ADV_ESTIMATORS, type AdvantageOptions } from "./estimators.ts";
import { POLICY_LOSSES, type PolicyLossConfig } from "./policy_loss.ts";

/** Which rollouts a step's loss trains on (AlgoConfig.trainOn). */
export type TrainOn = "all" | "correct" | "incorrect";

/** Every algorithm choice of a run; engines read only this, so all engines train the same algorithm. */
export interface AlgoConfig extends PolicyLossConfig, AdvantageOptions {
  /** Registered advantage estimator (ADV_ESTIMATORS, estimators.ts). */
  advEstimator: string;
  /** Registered policy loss (POLICY_LOSSES, policy_loss.ts). */
  policyLoss: string;
  /** Rows the loss trains on: `all`, or only the `correct` (PSR) or `incorrect` (NSR) ones (see trainingRows). */
  trainOn: TrainOn;
  /**
   * The oracle control: train on the correct method's traces of the sampled prompts instead of the policy's own
   * rollouts (SFT from the same base with the RL optimiser); only an engine that knows the correct method (tfjs).
   */
  oracle: boolean;
  /** Reward of a correct/incorrect rollout: "binary" 1/0 (VERL MATH) or "pm1" +1/−1 (DAPO). */
  rewardScheme: "binary" | "pm1";
  dynamicSampling: { enabled: boolean; maxRounds: number; onExhausted: "error" | "partial" };
  /** DAPO's overlong shaping; `buffer` is in tokens and must fit the engine's response budget. */
  overlong: { enabled: boolean; buffer: number; factor: number };
  ace: AceConfig;
}

const ACE_OFF: AceConfig = { enabled: false, alpha: 1, phi: "softplus", aggregation: "sum", clip: null };
const ACE_ON: AceConfig = { ...ACE_OFF, enabled: true };

// GRPO as VERL's GRPO examples run it: std-normalised, symmetric clip 0.2, low_var_kl loss 0.001, token-mean.
const GRPO: AlgoConfig = {
  advEstimator: "grpo",
  policyLoss: "vanilla",
  normByStd: true,
  stdEps: 1e-6,
  wReinforceLambda: 0.1,
  passK: 4,
  trainOn: "all",
  oracle: false,
  rewardScheme: "binary",
  clipLow: 0.2,
  clipHigh: 0.2,
  clipC: 3,
  logRatioClamp: 20,
  lossAgg: "token-mean",
  klCoef: 0.001,
  klType: "low_var_kl",
  entropyCoef: 0,
  dynamicSampling: { enabled: false, maxRounds: 10, onExhausted: "error" },
  overlong: { enabled: false, buffer: 4096, factor: 1 },
  ace: ACE_OFF,
};

// DAPO's published recipe (arXiv 2503.14476): clip-higher 0.2/0.28, dual clip 10, token-mean, no KL, dynamic
// sampling, ±1 rewards and overlong shaping.
const DAPO: AlgoConfig = {
  ...GRPO,
  rewardScheme: "pm1",
  clipHigh: 0.28,
  clipC: 10,
  klCoef: 0,
  dynamicSampling: { enabled: true, maxRounds: 10, onExhausted: "error" },
  overlong: { enabled: true, buffer: 4096, factor: 1 },
};

// Cui et al.'s 7B recipes (PRIME-RL/Entropy-Mechanism-of-RL recipe/dapo/7b_clip_cov.sh, 7b_kl_cov.sh): Clip-Cov
// detaches 0.02% of the tokens from the band (1, 5) with the PPO clip range at 1/1; KL-Cov penalises the top
// 0.2% (k_percent 0.2) with coefficient 1; both on the DAPO recipe (dynamic sampling, token-mean) without KL.
const COV: CovConfig = { clipRatio: 0.0002, clipLb: 1, clipUb: 5, klRatio: 0.002, klCoef: 1 };
const COV_RECIPE = { klCoef: 0, dynamicSampling: DAPO.dynamicSampling };

/**
 * The named presets. ace-* add ACE (softplus, α = 1, c summed over tokens, no clip) to GRPO/DAPO. The baselines
 * follow their authors' released code, changing what the authors change from GRPO: dr-grpo (Liu et al. 2025,
 * arXiv 2503.20783: no std normalisation, per-sequence token sums over a constant length, no KL term); rloo
 * (leave-one-out baseline); passk (Chen et al. 2025, arXiv 2508.10751: the analytical Pass@k advantage, k = 4);
 * grpo-passk (VERL's grpo_passk, Tang et al. 2025, arXiv 2503.19595); w-reinforce (Zhu et al. 2025, arXiv
 * 2506.01347: λ = 0.1 on positives, −1 on negatives, no KL); nsr and psr, W-REINFORCE's ends, trained on the
 * incorrect (correct) subset alone as Zhu et al.'s code subsets the batch; clip-cov and kl-cov (Cui et al. 2025,
 * arXiv 2505.22617) at the ratios of the authors' recipe; ace-allwrong, an ablation that also penalises all-wrong
 * groups by confidence (ace.ts aceAllWrong); ace-uniform, ACE's control with every penalised error at the batch's
 * mean multiplier (no confidence selectivity); w-reinforce-ace, W-REINFORCE with λ = 1/(ACE's mean multiplier) per
 * batch, the other such control; oracle, the positive control that trains on the correct method's
 * traces (tfjs only).
 */
export const PRESETS: Readonly<Record<string, AlgoConfig>> = {
  grpo: GRPO,
  dapo: DAPO,
  "ace-grpo": { ...GRPO, ace: ACE_ON },
  "ace-dapo": { ...DAPO, ace: ACE_ON },
  "dr-grpo": { ...GRPO, normByStd: false, lossAgg: "seq-mean-token-sum-norm", klCoef: 0 },
  rloo: { ...GRPO, advEstimator: "rloo" },
  passk: { ...GRPO, advEstimator: "passk" },
  "grpo-passk": { ...GRPO, advEstimator: "grpo_passk" },
  "w-reinforce": { ...GRPO, advEstimator: "w_reinforce", klCoef: 0 },
  nsr: { ...GRPO, advEstimator: "w_reinforce", wReinforceLambda: 0, klCoef: 0, trainOn: "incorrect" },
  psr: { ...GRPO, advEstimator: "psr", klCoef: 0, trainOn: "correct" },
  "clip-cov": { ...GRPO, ...COV_RECIPE, policyLoss: "clip_cov", clipLow: 1, clipHigh: 1, cov: COV },
  "kl-cov": { ...GRPO, ...COV_RECIPE, policyLoss: "kl_cov", cov: COV },
  "ace-allwrong": { ...GRPO, ace: { ...ACE_ON, allWrong: true } },
  "ace-uniform": { ...GRPO, ace: { ...ACE_ON, phi: "batch-mean" } },
  oracle: { ...GRPO, advEstimator: "psr", klCoef: 0, oracle: true },
  "w-reinforce-ace": { ...GRPO, advEstimator: "w_reinforce_ace", klCoef: 0 },
};

const schemaUrl = new URL("./algo.schema.json", import.meta.url);

/**
 * The preset merged with overrides, validated against algo.schema.json and the estimator/loss registries.
 * Overrides may be nested (`{ ace: { alpha: 2 } }`) or dotted (`{ "ace.alpha": 2 }`, as sweep grids write them);
 * an unknown key or a wrongly typed value throws a ValidationError naming it.
 */
export function resolveAlgo(preset: string, overrides: Record<string, unknown> = {}): AlgoConfig {
  const base = PRESETS[preset];
  if (!base) {
    throw new RangeError(`preset '${preset}' is unknown; expected ${Object.keys(PRESETS).join(", ")}`);
  }
  const source = `algo (preset ${preset})`;
  const resolved = validate<AlgoConfig>(loadSchema(schemaUrl), withOverrides(base, overrides), source);
  for (const registry of [ADV_ESTIMATORS, POLICY_LOSSES]) {
    const field = registry.field as "advEstimator" | "policyLoss", known = registry.names();
    const name = resolved[field];
    if (!known.includes(name)) {
      throw new ValidationError(`${source}: ${field}: '${name}' is not registered (${known.join(", ")})`);
    }
  }
  return resolved;
}

/** Leaves of an override object: [dotted path (as resolveAlgo applies it), JSON path (for errors), value]. */
export function overrideLeaves(
  obj: Record<string, unknown>,
  dotted = "",
  json = "",
): [string, string, unknown][] {
  return Object.entries(obj).flatMap(([k, v]) => {
    const d = `${dotted}${k}`,
      j = `${json}${/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}`;
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? overrideLeaves(v as Record<string, unknown>, `${d}.`, j)
      : [[d, j, v] as [string, string, unknown]];
  });
}

/** `base` (cloned) with each leaf of `overrides` set at its dotted path: objects merge, the rest is replaced. */
export function withOverrides(base: object, overrides: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(base) as Record<string, unknown>;
  for (const [path, , value] of overrideLeaves(overrides)) {
    const keys = path.split(".");
    let node = out;
    for (const key of keys.slice(0, -1)) {
      if (node[key] === null || typeof node[key] !== "object") node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[keys[keys.length - 1]] = value;
  }
  return out;
}
