// Public API of the VERL engine (bench/engines/verl): parquet export, launch plans for Ray, ingest of VERL's
// validation dumps. docs/verl.md ("The launch plan") describes what each entry point returns.
export { exportVerlData, verlCluster, verlEngine } from "./engine.ts";
export { readVerlParquet, toVerlRows, writeVerlParquet } from "./export.ts";
export { type EvalLine, ingestVerlDumps, readVerlDumps } from "./ingest.ts";
export { planRun, VERL_DIR, verlRunPlan, writeRunPlan } from "./launch.ts";
export { ACE_SETUP_HOOK, advEstimator, REWARD_FUNCTIONS, workerPythonPath } from "./overrides.ts";
export {
  checkNotLegacy,
  DEFAULT_VERL_VERSION,
  forVersion,
  VERL_RELEASES,
  verlRelease,
  type VerlVersion,
} from "./versions.ts";
export { DAPO_RECIPE, resolveRecipe, validateVerlSettings } from "./recipes.ts";
export { graderScript } from "./reward.ts";
export { bundleGrader, GRADER_BUNDLE_FILES } from "./grader_bundle.ts";
export { parseRequest, type RewardVerdict, serveRewards } from "./reward_serve.ts";
export { costTable, estimateMemory, MODEL_SHAPES, planMemory, runCost } from "./cost.ts";
