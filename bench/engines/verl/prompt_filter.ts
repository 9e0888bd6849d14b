// Which validation problems VERL's prompt-length filter drops (`data.filter_overlong_prompts=True`: a prompt over
// `data.max_prompt_length` chat-templated tokens is never validated), so ingest checks completeness against what
// VERL was asked to validate. The sweep counts each exported prompt once (prompt_tokens.json); each run's plan
// keeps the ones over its own limit (val_filter.json).
//
// Counts are exact (what VERL's RLHFDataset computes) when settings.model is a local folder and settings.python
// imports transformers. Otherwise they are a conservative bound: a byte-level BPE (or byte-fallback) token
// covers at least one UTF-8 byte, so a prompt has at most bytes(message) + TEMPLATE_TOKENS tokens; a problem
// under the bound is certainly validated, one over it may be dropped (ingest accepts it absent, never partly).
import { join } from "node:path";
import { exists, readJson, writeJson } from "../../../common/fs.ts";
import { readVerlParquet } from "./export.ts";
import { VERL_DIR, verlDataPath } from "./launch.ts";
import type { VerlSettings } from "./recipes.ts";

/** Upper bound on the tokens a chat template adds around one user message (system prompt and markers). */
export const TEMPLATE_TOKENS = 128;
/** The sweep's prompt token counts, relative to the sweep folder. */
export const PROMPT_TOKENS_FILE = join("data", "verl", "prompt_tokens.json");
/** A run's planned validation filter, relative to the run folder. */
const VAL_FILTER_FILE = join(VERL_DIR, "val_filter.json");

/** prompt_tokens.json: how the counts were made (and why not exactly), then one entry per problem. */
interface PromptTokens {
  method: "tokenizer" | "estimate";
  /** For "estimate": why no tokenizer was used; for "tokenizer": the tokenizer's folder. */
  why: string;
  /** Exact tokens, or the conservative upper bound. */
  problems: { dataset: string; id: string; tokens: number }[];
}

/** val_filter.json: the problems a run's VERL drops ("tokenizer") or may drop ("estimate") at its limit. */
export interface ValFilter extends Omit<PromptTokens, "problems"> {
  maxPromptLength: number;
  /** Over the limit: dropped by VERL (tokenizer), or possibly dropped (estimate: `tokens` is the upper bound). */
  overLimit: PromptTokens["problems"];
}

/** The bound for one user message: its UTF-8 bytes plus the template's tokens. */
export function tokenBound(message: string): number {
  return new TextEncoder().encode(message).length + TEMPLATE_TOKENS;
}

// VERL's own count (rl_dataset.py, maybe_filter_out_long_prompts, tokenizer without processor)
const COUNT_PY = `import json, sys
import pyarrow.parquet as pq
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1], local_files_only=True)
out = []
for path in sys.argv[2:]:
    for row in pq.read_table(path).to_pylist():
        ids = tok.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True)
        ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
        out.append(len(ids))
print(json.dumps(out))
`;

/** Exact counts through settings.python and the model folder's tokenizer, in row order; or why not. */
async function tokenizerCounts(settings: Pick<VerlSettings, "model" | "python">, files: string[]) {
  if (!exists(join(settings.model, "tokenizer_config.json"))) {
    return `settings.model '${settings.model}' is not a local folder with tokenizer_config.json`;
  }
  let result;
  try {
    result = await new Deno.Command(settings.python, {
      args: ["-c", COUNT_PY, settings.model, ...files],
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    return `${settings.python} could not run (${(e as Error).message.split("\n")[0]})`;
  }
  if (!result.success) {
    const last = new TextDecoder().decode(result.stderr).trim().split("\n").pop();
    return `${settings.python} could not count with ${settings.model}'s tokenizer (${last})`;
  }
  const counts: unknown = JSON.parse(
    new TextDecoder().decode(result.stdout).trim().split("\n").pop() ?? "null",
  );
  if (!Array.isArray(counts) || !counts.every((c) => Number.isInteger(c))) {
    return `${settings.python} printed no token counts`;
  }
  return counts as number[];
}

/**
 * Count every exported validation prompt of the sweep (exactly with the model's tokenizer where possible, else
 * the bound) and write `<sweep>/data/verl/prompt_tokens.json`. Needs the exported parquet files.
 */
export async function countPromptTokens(
  sweepDir: string,
  settings: Pick<VerlSettings, "model" | "python" | "valDatasets">,
): Promise<PromptTokens> {
  const files = settings.valDatasets.map((d) => verlDataPath(sweepDir, "test", d));
  const rows = [];
  for (const file of files) rows.push(...await readVerlParquet(file));
  const exact = await tokenizerCounts(settings, files);
  const problems = rows.map((row, i) => ({
    dataset: row.extra_info.dataset,
    id: row.extra_info.id,
    tokens: typeof exact === "string" ? tokenBound(row.prompt[row.prompt.length - 1].content) : exact[i],
  }));
  if (typeof exact !== "string" && exact.length !== rows.length) {
    throw new Error(
      `verl: ${settings.python} counted ${exact.length} prompts of ${rows.length} in ${files.join(", ")}`,
    );
  }
  const counted: PromptTokens = typeof exact === "string"
    ? { method: "estimate", why: exact, problems }
    : { method: "tokenizer", why: settings.model, problems };
  writeJson(join(sweepDir, PROMPT_TOKENS_FILE), counted);
  return counted;
}

/**
 * Write the run's `verl/val_filter.json` from the sweep's counts at the run's `maxPromptLength`; without counts
 * (a sweep planned before they existed) nothing is written and ingest checks every exported problem.
 */
export function writeValFilter(sweepDir: string, runDir: string, maxPromptLength: number): ValFilter | null {
  const path = join(sweepDir, PROMPT_TOKENS_FILE);
  if (!exists(path)) return null;
  const counted = readJson<PromptTokens>(path);
  const filter: ValFilter = {
    maxPromptLength,
    method: counted.method,
    why: counted.why,
    overLimit: counted.problems.filter((p) => p.tokens > maxPromptLength),
  };
  writeJson(join(runDir, VAL_FILTER_FILE), filter);
  return filter;
}

/** A run's planned validation filter, or null when its plan has none. */
export function readValFilter(runDir: string): ValFilter | null {
  const path = join(runDir, VAL_FILTER_FILE);
  return exists(path) ? readJson<ValFilter>(path) : null;
}
