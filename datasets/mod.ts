/** Public API of datasets/: the normalised record type, prompt templates, synthetic tasks, fetch and load. */
export * from "./record.ts";
export * from "./file.ts";
export * from "./templates.ts";
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
export * from "./load.ts";
