/** Evaluate models behind an OpenAI-compatible API: client with retries, resumable sampling, run-folder output. */
export {
  type ApiCompletion,
  complete,
  type Endpoint,
  EndpointError,
  normaliseBaseUrl,
  preflight,
  RetriesExhaustedError,
  type SamplingParams,
  type TokenUsage,
} from "./client.ts";
export { DEFAULT_RETRY, parseRetryAfter, type RetryPolicy } from "./retry.ts";
export { runPool } from "./pool.ts";
export { readSamples, repairTornTail, type SampleRecord } from "./samples.ts";
export { requestSeed, sampleAll, type SampleJob, type SamplerOptions, type SamplerStats } from "./sampler.ts";
export { applyTemplate, defaultTemplateFor, type PromptTemplate, resolveTemplate } from "./templates.ts";
export {
  completeSamples,
  type EvalPaths,
  type EvalProblem,
  type EvalRow,
  type EvalSettings,
  gradeSamples,
  modelSlug,
  openEvalDir,
  selectProblems,
  usageSummary,
} from "./evaluate.ts";
export { type EvalOutcome, evaluateEndpoint, type TransportOptions } from "./run.ts";
