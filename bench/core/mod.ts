// Public API of the RL algorithm core: engine-agnostic GRPO, DAPO, ACE and baselines over typed arrays,
// with advantage estimators and policy losses registered by name.
export * from "./check.ts";
export * from "./advantages.ts";
export * from "./ace.ts";
export * from "./kl.ts";
export * from "./policy_loss.ts";
export * from "./cov_losses.ts";
export * from "./dynamic_sampling.ts";
export * from "./overlong.ts";
export * from "./presets.ts";
export * from "./estimators.ts";
export * from "./registry.ts";
export * from "./step.ts";
export * from "./diagnostics.ts";
