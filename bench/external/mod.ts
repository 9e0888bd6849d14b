/** Evaluate models behind an OpenAI-compatible API: client with retries, resumable sampling, run-folder output. */
export {
  type ApiCompletion,
  complete,
  type Endpoint,
  EndpointError,
  EndpointSetupError,
  InterruptedError,
  isPerRequestRejection,
  normaliseBaseUrl,
  preflight,
  RetriesExhaustedError,
  type SamplingParams,
  type TokenUsage,
} from "./client.ts";
export { DEFAULT_RETRY, type RetryPolicy } from "./retry.ts";
export { type BadLine, readSamples, repairSamples, repairTornTail, type SampleRecord } from "./samples.ts";
export {
  type FailedProblem,
  failureAdvice,
  type NSplit,
  requestSeed,
  sampleAll,
  type SampleJob,
  type SamplerOptions,
  type SamplerStats,
} from "./sampler.ts";
export { maxTokensAdvice, parseContextLimit } from "./context_limit.ts";
export { describeSampling, parseServerSampling, serverDefaults, type ServerValue } from "./sampling.ts";
export { renderHealth, type RunHealth, runHealth } from "./health.ts";
export { ProgressLog } from "./progress_log.ts";
export { applyTemplate, defaultTemplateFor } from "./templates.ts";
export { type PromptTemplate, resolveTemplate } from "../../datasets/mod.ts";
export {
  checkEvalDir,
  type EvalFileConfig,
  type EvalPaths,
  evalPaths,
  type EvalProblem,
  type EvalRow,
  type EvalSettings,
  gradeSamples,
  modelSlug,
  openEvalDir,
  selectProblems,
} from "./evaluate.ts";
export { type EvalOutcome, evaluateEndpoint, type TransportOptions } from "./run.ts";
