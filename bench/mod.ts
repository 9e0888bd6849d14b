/** Public API of bench/ (filled in by its issue). */
export * from "./core/mod.ts";
export type {
  Engine,
  EvalSpec,
  MiniBatch,
  PolicyBackend,
  RolloutGroup,
  RunBackend,
  RunConfig,
  RunHooks,
  RunOutcome,
  StepBatch,
  UpdateRequest,
} from "./engines/engine.ts";
export { type LoopSchedule, rlStep, runLoop, type StepMetrics, updatePolicy } from "./engines/loop.ts";
export {
  exactPassAtK,
  tabularEngine,
  type TabularSettings,
  type TabularWorld,
} from "./engines/tabular/mod.ts";
export * from "./sweep/mod.ts";
export * from "./external/mod.ts";
export * from "./engines/verl/mod.ts";
export {
  generate,
  loadPolicy,
  type Policy,
  tfjsEngine,
  type TfjsSettings,
  tinySettings,
} from "./engines/tfjs/mod.ts";
