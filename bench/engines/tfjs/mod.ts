/** Public API of the tfjs engine: the Engine, policies (load, sample), prompts and settings. */
export { prepareBase, tfjsEngine } from "./engine.ts";
export { checkpointSettings, generate, loadPolicy, type Policy } from "./policy.ts";
export { COMPACT_TEMPLATE, renderPrompt } from "./traces.ts";
export { defaultSettings, presetSettings, taskSets, type TfjsSettings } from "./settings.ts";
