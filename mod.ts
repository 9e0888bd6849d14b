/** acebench public API: datasets → evaluators → bench (RL core, engines, sweeps) → reports. */
export * from "./common/mod.ts";
export * from "./datasets/mod.ts";
export * from "./evaluators/mod.ts";
export * from "./bench/mod.ts";
export * from "./reports/mod.ts";
