// The lines under the title of an eval's summary.md: what the server was asked to sample with, and which
// parameters were left to its own defaults (llama.cpp's top_k 40 and min_p 0.05 change Pass@k).
import { describeSampling, type ServerValue } from "../bench/external/mod.ts";

/** The sampling record of an eval's eval.json (older records lack `server`: nothing was sent with --sampling). */
interface SamplingRecord {
  n: number;
  temperature: number;
  top_p: number;
  max_tokens: number;
  seed: number;
  server?: Record<string, ServerValue>;
}

/** Markdown lines for an eval's eval.json (kind "eval"): the model and dataset, then one line per sampling kind. */
export function evalHeader(sweep: Record<string, unknown>): string[] {
  const sampling = sweep.sampling as SamplingRecord | undefined;
  if (sampling === undefined) return [];
  return [
    `Sampled from \`${sweep.model}\` (${sweep.mode ?? "chat"}) on \`${sweep.dataset}\`:`,
    "",
    ...describeSampling(sampling).map((line) => `- ${line}`),
  ];
}
