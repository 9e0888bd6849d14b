/** Public API of datasets/: the normalised record type, prompt templates, synthetic tasks, fetch and load. */
export {
  DATASET_NAMES,
  type DatasetName,
  type FileDatasetName,
  hasCjk,
  type MathMeta,
  type MathRecord,
} from "./record.ts";
export { type FileDataset, fileDatasetName, type FileKeys, isDatasetFile, loadFileDataset } from "./file.ts";
export {
  BOXED_INSTRUCTION,
  DAPO_HEAD,
  DAPO_TAIL,
  type PromptTemplate,
  renderPrompt,
  resolveTemplate,
  stripDapoTemplate,
  TEMPLATES,
} from "./templates.ts";
export {
  FAMILIES,
  type Family,
  generateTasks,
  MAX_DIFFICULTY,
  MIN_DIFFICULTY,
  splitOf,
  type TaskOptions,
} from "./synthetic.ts";
export { FETCHABLE, hubUrl, pickSource, type Source, SOURCES, sourcesOf } from "./sources.ts";
export { cacheRoot, type Manifest, readManifest, type RowCounts } from "./cache.ts";
export { fetchDataset, type FetchOptions, type FetchResult, type OnBadRow } from "./fetch.ts";
export { loadDataset, SYNTHETIC_DEFAULT } from "./load.ts";
