// Public API of the VERL engine (bench/engines/verl): parquet export, launch plans for Ray, ingest of VERL's
// validation dumps. docs/verl.md ("The launch plan") describes what each entry point returns.
export { type ExportedFile, exportVerlData, type RecordLoader, verlCluster, verlEngine } from "./engine.ts";
export { readVerlParquet, toVerlRows, type VerlRow, writeVerlParquet } from "./export.ts";
export {
  type DumpSample,
  type EvalLine,
  type IngestSummary,
  ingestVerlDumps,
  readVerlDumps,
} from "./ingest.ts";
export { planRun, VERL_DIR, type VerlRunPlan, verlRunPlan, type VerlSweep, writeRunPlan } from "./launch.ts";
export { ACE_SETUP_HOOK, advEstimator, REWARD_FUNCTIONS, workerPythonPath } from "./overrides.ts";
export {
  checkNotLegacy,
  DEFAULT_VERL_VERSION,
  forVersion,
  type KeyRule,
  VERL_RELEASES,
  type VerlRelease,
  verlRelease,
  type VerlVersion,
} from "./versions.ts";
export {
  DAPO_RECIPE,
  type Recipe,
  resolveRecipe,
  validateVerlSettings,
  type VerlDataset,
  type VerlSettings,
} from "./recipes.ts";
export { graderScript } from "./reward.ts";
export { bundleGrader, GRADER_BUNDLE_FILES } from "./grader_bundle.ts";
export { parseRequest, type RewardVerdict, serveRewards, splitLines } from "./reward_serve.ts";
export {
  costTable,
  estimateMemory,
  type MemoryChoice,
  type MemoryEstimate,
  type MemorySettings,
  MODEL_SHAPES,
  type ModelShape,
  planMemory,
  type RunCost,
  runCost,
} from "./cost.ts";
