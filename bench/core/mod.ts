// Public API of the RL algorithm core: engine-agnostic GRPO, DAPO, ACE and baselines over typed arrays,
// with advantage estimators and policy losses registered by name.
export { assertFinite, type Num } from "./check.ts";
export { type GroupAdvantageOptions, groupAdvantages, groupMembers } from "./advantages.ts";
export {
  aceAdvantages,
  type AceAggregation,
  aceAllWrong,
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
  clipCovLoss,
  klCovLoss,
  LOSS_AGG_MODES,
  type LossAggMode,
  POLICY_LOSSES,
  policyLoss,
  type PolicyLossConfig,
  type PolicyLossFn,
  type PolicyLossInput,
  type PolicyLossMetrics,
  type PolicyLossResult,
} from "./policy_loss.ts";
export {
  clipCovTokens,
  type CovConfig,
  covCount,
  covRng,
  klCovTokens,
  tokenCovariance,
} from "./cov_losses.ts";
export {
  dynamicSample,
  dynamicSampleAsync,
  type DynamicSampleResult,
  filterGroups,
} from "./dynamic_sampling.ts";
export { overlongPenalty } from "./overlong.ts";
export { type AlgoConfig, PRESETS, resolveAlgo, type TrainOn } from "./presets.ts";
export {
  ADV_ESTIMATORS,
  type AdvantageEstimator,
  type AdvantageInput,
  type AdvantageOptions,
  grpoAdvantages,
  maxMinusSecondAdvantages,
  passkAdvantages,
  psrAdvantages,
  rlooAdvantages,
  wReinforceAceAdvantages,
  wReinforceAdvantages,
} from "./estimators.ts";
export { Registry } from "./registry.ts";
export {
  batchAdvantages,
  fitOverlongBuffer,
  groupIdsOf,
  informativeGroup,
  meanUpdates,
  miniBatchRows,
  scoreRollouts,
  type StepAdvantages,
  type StepRollouts,
  trainingRows,
  type UpdateResult,
} from "./step.ts";
export {
  type DiagnosticsInput,
  errorClassDiagnostics,
  type TrainingDiagnostics,
  trainingDiagnostics,
} from "./diagnostics.ts";
