// Public API of the tabular engine.
export { exactKs, resolvedRunConfig, tabularEngine } from "./engine.ts";
export {
  entropyOf,
  exactPassAtK,
  logitGradient,
  logProbs,
  pCorrect,
  refLogProbs,
  type TabularParams,
  zeroParams,
} from "./policy.ts";
export { type Rollout, sampleGroup, trainStep } from "./train.ts";
export { buildWorld, resolveSettings, type TabularSettings, type TabularWorld } from "./world.ts";
