/** Sweeps: config validation and expansion into runs, the parallel resumable runner, and the dry-run plan. */
export * from "./config.ts";
export * from "./runner.ts";
export * from "./plan.ts";
export * from "./makespan.ts";
export * from "./calibrate.ts";
export { engines, type EngineSpec, engineSpec, loadEngine } from "../engines/registry.ts";
export * from "./smoke.ts";
