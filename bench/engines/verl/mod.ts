/**
 * Public API of the VERL engine (bench/engines/verl): export datasets as VERL parquet, plan and launch VERL runs on
 * Ray, and ingest VERL's validation dumps into eval.jsonl.
 *
 * For the sweep runner and reports:
 * - `verlRunPlan(run, sweep)` (alias `planRun`) → `{ overrides, script, rayJobCommand, command, entrypoint, verlRoot,
 *   verlVersion, files }` (overrides for settings.verlVersion, default the newest release in versions.ts; the
 *   script runs from the checkout verlRoot / $VERL_ROOT):
 *   what `deno task sweep --dry-run` prints and what a VERL sweep writes into each run folder (`files` keys are
 *   relative to the run folder: verl/launch.sh, verl/ray_job.sh, verl/overrides.txt, verl/ace_verl.py).
 * - `ingestVerlDumps(runDir)` → grades `<runDir>/val_generations/*.jsonl` with acebench's grader and writes
 *   `<runDir>/eval.jsonl` (ARCHITECTURE.md format); returns counts.
 * - `verlEngine` (Engine, name "verl"): prepare = export parquet under `<sweep>/data/verl/`; run = write the plan,
 *   then launch it if settings.launch is "local" or "ray-job".
 */
export { type ExportedFile, exportVerlData, type RecordLoader, verlCluster, verlEngine } from "./engine.ts";
export { readVerlParquet, toVerlRows, verlParquetBytes, type VerlRow, writeVerlParquet } from "./export.ts";
export {
  DUMP_DIR,
  type DumpSample,
  type EvalLine,
  type IngestSummary,
  ingestVerlDumps,
  readVerlDumps,
  validationIndex,
} from "./ingest.ts";
export {
  aceModuleSource,
  planRun,
  VERL_DIR,
  verlDataPath,
  type VerlRunPlan,
  verlRunPlan,
  type VerlSweep,
  writeRunPlan,
} from "./launch.ts";
export {
  ACE_ESTIMATOR,
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
  GRPO_RECIPE,
  type Recipe,
  resolveRecipe,
  validateVerlSettings,
  type VerlDataset,
  type VerlSettings,
} from "./recipes.ts";
export { GRADER_SCRIPT, graderScript, rewardModuleSource } from "./reward.ts";
export { bundleGrader, GRADER_BUNDLE_DIR, GRADER_BUNDLE_FILES } from "./grader_bundle.ts";
export { parseRequest, type RewardVerdict, serveRewards, splitLines } from "./reward_serve.ts";
export { readVerlMetrics, VERL_METRIC_FIELDS, VERL_METRICS_DIR } from "./verl_metrics.ts";
export {
  ASSUMED_TOKENS_PER_GPU_SECOND,
  costTable,
  estimateMemory,
  GPU_GB,
  type MemoryChoice,
  type MemoryEstimate,
  type MemorySettings,
  MODEL_SHAPES,
  type ModelShape,
  planMemory,
  type RunCost,
  runCost,
  VAL_PROBLEMS,
} from "./cost.ts";
