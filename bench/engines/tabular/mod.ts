// Public API of the tabular engine.
export { tabularEngine } from "./engine.ts";
export { exactKs, type Rollout, sampleGroup, tabularBackend, type TabularGroup } from "./backend.ts";
export {
  entropyOf,
  exactPassAtK,
  logitGradient,
  logProbs,
  refLogProbs,
  type TabularParams,
  zeroParams,
} from "./policy.ts";
export {
  buildWorld,
  resolveSettings,
  type TabularSettings,
  type TabularWorld,
  worldSeedOf,
} from "./world.ts";
