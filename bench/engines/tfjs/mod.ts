/** Public API of the tfjs engine: the Engine, policies (load, sample, evaluate), tokenizer, traces, settings. */
export { baseDir, prepareBase, runRl, tfjsEngine } from "./engine.ts";
export {
  checkpointSettings,
  type Completion,
  type EvalRecord,
  evaluate,
  generate,
  type GenerateOptions,
  loadPolicy,
  methodOf,
  type Policy,
  policyFrom,
  type SavedModel,
} from "./policy.ts";
export { CharTokenizer, cutAtEos, encodePrompts, makeTokenizer, type Tokenizer } from "./tokenizer.ts";
export {
  COMPACT_TEMPLATE,
  type Method,
  METHODS,
  methodsOf,
  renderPrompt,
  renderTrace,
  TRACE_FAMILIES,
} from "./traces.ts";
export {
  defaultSettings,
  modelConfig,
  resolveSettings,
  taskSets,
  type TfjsSettings,
  tinySettings,
} from "./settings.ts";
export { loadBundle, loadLatestCheckpoint, saveBundle, saveCheckpoint } from "./checkpoint.ts";
