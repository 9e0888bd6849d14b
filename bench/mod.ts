/** Public API of bench/: the RL core, the engine contract and loop, the engines, sweeps, external evaluation. */
export * from "./core/mod.ts";
export * from "./engines/engine.ts";
export * from "./engines/loop.ts";
export {
  exactPassAtK,
  tabularEngine,
  type TabularSettings,
  type TabularWorld,
} from "./engines/tabular/mod.ts";
export * from "./sweep/mod.ts";
export * from "./external/mod.ts";
export * from "./engines/verl/mod.ts";
export { generate, loadPolicy, type Policy, tfjsEngine, type TfjsSettings } from "./engines/tfjs/mod.ts";
