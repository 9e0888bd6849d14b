// Public API of the RL algorithm core: engine-agnostic GRPO, DAPO and ACE over typed arrays.
export { assertFinite, type Num } from "./check.ts";
export { type GroupAdvantageOptions, groupAdvantages, groupMembers } from "./advantages.ts";
export {
  aceAdvantages,
  type AceAggregation,
  type AceConfig,
  type AcePhi,
  acePhi,
  aceRegulariser,
  aceResidualWeight,
  confidenceShift,
  softplus,
} from "./ace.ts";
export { KL_TYPES, klPenalty, type KlType } from "./kl.ts";
export {
  aggregationWeights,
  LOSS_AGG_MODES,
  type LossAggMode,
  policyLoss,
  type PolicyLossConfig,
  type PolicyLossInput,
  type PolicyLossMetrics,
} from "./policy_loss.ts";
export {
  dynamicSample,
  dynamicSampleAsync,
  type DynamicSampleResult,
  filterGroups,
} from "./dynamic_sampling.ts";
export { overlongPenalty } from "./overlong.ts";
export { type AlgoConfig, PRESETS, resolveAlgo } from "./presets.ts";
export { type DiagnosticsInput, type TrainingDiagnostics, trainingDiagnostics } from "./diagnostics.ts";
