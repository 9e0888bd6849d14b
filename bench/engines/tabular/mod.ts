// Public API of the tabular engine.
export { tabularEngine } from "./engine.ts";
export { sampleGroup, tabularBackend } from "./backend.ts";
export { exactPassAtK, logitGradient, logProbs, type TabularParams, zeroParams } from "./policy.ts";
export {
  buildWorld,
  resolveSettings,
  type TabularSettings,
  type TabularWorld,
  worldSeedOf,
} from "./world.ts";
