// Named algorithm presets (GRPO, DAPO, their ACE variants and the baselines a reviewer of ACE asks for) and the
// merge of sweep overrides into them, validated by algo.schema.json.
import { loadSchema, validate, ValidationError } from "../../common/config.ts";
import type { AceConfig } from "./ace.ts";
import type { CovConfig } from "./cov_losses.ts";
import { ADV_ESTIMATORS } from "./estimators.ts";
import type { KlType } from "./kl.ts";
import { type LossAggMode, POLICY_LOSSES, type PolicyLossConfig } from "./policy_loss.ts";

/** Every algorithm choice of a run; engines read only this, so all engines train the same algorithm. */
export interface AlgoConfig extends PolicyLossConfig {
  /** Registered advantage estimator: "grpo" | "rloo" | "grpo_passk" | "w_reinforce" | "psr" (see estimators.ts). */
  advEstimator: string;
  /** Registered policy loss: "vanilla" | "clip_cov" | "kl_cov" (see policy_loss.ts). */
  policyLoss: string;
  /** Divide group advantages by the group std (GRPO) or not (Dr. GRPO). */
  normByStd: boolean;
  stdEps: number;
  /** W-REINFORCE: the advantage of a correct rollout (an incorrect one gets −1). */
  wReinforceLambda: number;
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
  rewardScheme: "binary",
  clipLow: 0.2,
  clipHigh: 0.2,
  clipC: 3,
  logRatioClamp: 20,
  lossAgg: "token-mean" as LossAggMode,
  klCoef: 0.001,
  klType: "low_var_kl" as KlType,
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

// VERL 0.7.0's actor.policy_loss defaults (actor.yaml): detach/penalise 0.02% of the tokens, at least one.
const COV: CovConfig = { clipRatio: 0.0002, clipLb: 1, clipUb: 5, klRatio: 0.0002, klCoef: 0.1 };

/**
 * The named presets. ace-* add ACE (softplus, α = 1, c summed over tokens, no clip) to GRPO/DAPO. The baselines
 * change one thing each from GRPO: dr-grpo (Liu et al. 2025, arXiv 2503.20783: no std normalisation, per-sequence
 * token sums over a constant length), rloo (leave-one-out baseline), passk (VERL's grpo_passk) and w-reinforce
 * (λ-weighted positives, no KL, as Zhu et al. 2025); nsr and psr are W-REINFORCE's ends (negatives only: λ = 0;
 * positives only: the psr estimator); clip-cov and kl-cov are Cui et al.'s covariance losses (arXiv 2505.22617)
 * with VERL 0.7.0's default options; ace-allwrong is an ablation of ace-grpo that also penalises all-wrong groups
 * by confidence (ace.ts aceAllWrong).
 */
export const PRESETS: Readonly<Record<string, AlgoConfig>> = {
  grpo: GRPO,
  dapo: DAPO,
  "ace-grpo": { ...GRPO, ace: ACE_ON },
  "ace-dapo": { ...DAPO, ace: ACE_ON },
  "dr-grpo": { ...GRPO, normByStd: false, lossAgg: "seq-mean-token-sum-norm" },
  rloo: { ...GRPO, advEstimator: "rloo" },
  passk: { ...GRPO, advEstimator: "grpo_passk" },
  "w-reinforce": { ...GRPO, advEstimator: "w_reinforce", klCoef: 0 },
  nsr: { ...GRPO, advEstimator: "w_reinforce", wReinforceLambda: 0, klCoef: 0 },
  psr: { ...GRPO, advEstimator: "psr", klCoef: 0 },
  "clip-cov": { ...GRPO, policyLoss: "clip_cov", cov: COV },
  "kl-cov": { ...GRPO, policyLoss: "kl_cov", cov: COV },
  "ace-allwrong": { ...GRPO, ace: { ...ACE_ON, allWrong: true } },
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
  const algo: Record<string, unknown> = { ...structuredClone(base) };
  for (const [path, value] of flatten(overrides)) assignPath(algo, path, value);
  const source = `algo (preset ${preset})`;
  const resolved = validate<AlgoConfig>(loadSchema(schemaUrl), algo, source);
  for (const registry of [ADV_ESTIMATORS, POLICY_LOSSES]) {
    const field = registry.field as "advEstimator" | "policyLoss", known = registry.names();
    const name = resolved[field];
    if (!known.includes(name)) {
      throw new ValidationError(`${source}: ${field}: '${name}' is not registered (${known.join(", ")})`);
    }
  }
  return resolved;
}

/** [dotted path, value] pairs of the leaves of a nested override object. */
function flatten(obj: Record<string, unknown>, prefix = ""): [string, unknown][] {
  return Object.entries(obj).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? flatten(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, v] as [string, unknown]]
  );
}

/** Set a dotted path inside `target`, creating objects on the way (the schema then rejects unknown keys). */
function assignPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== "object") node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}
