/** Sweeps: config validation and expansion into runs, the parallel resumable runner, and the dry-run plan. */
export {
  baseSeed,
  checkSweepConfig,
  type DesignUnit,
  designUnits,
  expandRuns,
  filterRuns,
  type MethodSpec,
  presetPath,
  readSweepConfig,
  type ResolveAlgo,
  type SweepConfig,
  sweepHash,
} from "./config.ts";
export {
  firstNonFiniteLoss,
  runSweep,
  type SweepOptions,
  type SweepOutcome,
  writeSweepJson,
} from "./runner.ts";
export { describePlan, designLine, measuredSecondsPerStep } from "./plan.ts";
export { makespan } from "./makespan.ts";
export {
  calibrate,
  type Calibration,
  costKey,
  costModelPath,
  estimateFromCalibration,
  evaluations,
  storeCalibration,
  storedCalibrations,
} from "./calibrate.ts";
export { engines, type EngineSpec, engineSpec, loadEngine } from "../engines/registry.ts";
export { smokeConfig } from "./smoke.ts";
