// Public API of the VERL engine (bench/engines/verl): parquet export, launch plans for Ray, ingest of VERL's
// validation dumps. docs/verl.md ("The launch plan") describes what each entry point returns.
export { type ExportedFile, exportVerlData, type RecordLoader, verlCluster, verlEngine } from "./engine.ts";
export { readVerlParquet, toVerlRows, type VerlRow, writeVerlParquet } from "./export.ts";
export {
  DUMP_DIR,
  type DumpSample,
  type EvalLine,
  type IngestSummary,
  ingestVerlDumps,
  readVerlDumps,
} from "./ingest.ts";
export {
  planRun,
  VERL_DIR,
  verlDataPath,
  type VerlRunPlan,
  verlRunPlan,
  type VerlSweep,
  writeRunPlan,
} from "./launch.ts";
export {
  ACE_METRICS_FILE,
  ACE_SETUP_HOOK,
  advEstimator,
  entrypointFor,
  REWARD_FUNCTIONS,
  REWARD_MODULE,
  verlEnv,
  versionedOverrides,
  workerPythonPath,
} from "./overrides.ts";
export {
  checkNotLegacy,
  DEFAULT_VERL_VERSION,
  forVersion,
  type KeyRule,
  MAIN_DAPO,
  MAIN_PPO,
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
export { GRADER_SCRIPT, graderScript, rewardModuleSource } from "./reward.ts";
export { bundleGrader, GRADER_BUNDLE_DIR, GRADER_BUNDLE_FILES } from "./grader_bundle.ts";
export { parseRequest, type RewardVerdict, serveRewards, splitLines } from "./reward_serve.ts";
export { readVerlMetrics, VERL_METRICS_DIR } from "./verl_metrics.ts";
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
