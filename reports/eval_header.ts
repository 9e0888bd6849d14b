// The lines under the title of an eval's summary.md: what the server was asked to sample with, and which
// parameters were left to its own defaults (llama.cpp's top_k 40 and min_p 0.05 change Pass@k).
import type { SweepRecord } from "../common/protocol.ts";
import { describeSampling, type EvalFileConfig, type ServerValue } from "../bench/external/mod.ts";

/** What eval sends from its own flags; the record's other sent parameters came with `--sampling`. */
const OWN = ["temperature", "top_p", "max_tokens", "seed", "stop"];

/**
 * Markdown lines for an evaluation: the model and dataset, then one line per sampling kind, from the record's
 * protocol (n, what was sent) and design (the seed); [] for a folder written before records.
 */
export function evalHeader(config: EvalFileConfig, record: SweepRecord | null): string[] {
  if (!record || record.design.kind !== "seeds") return [];
  const sent = record.protocol.sampling.sent as Record<string, ServerValue>;
  const server = Object.fromEntries(Object.entries(sent).filter(([k]) => !OWN.includes(k)));
  const sampling = {
    temperature: sent.temperature as number,
    top_p: sent.top_p as number,
    max_tokens: sent.max_tokens as number,
    n: record.protocol.n,
    seed: record.design.seeds[0],
    server,
  };
  return [
    `Sampled from \`${config.model}\` (${config.mode}) on \`${config.dataset}\`:`,
    "",
    ...describeSampling(sampling).map((line) => `- ${line}`),
  ];
}
