// A trained policy (model + tokenizer + settings): loading it from a checkpoint, sampling completions, and the
// graded evaluation that fills eval.jsonl.
import { join } from "node:path";
import { Rng } from "../../../common/prng.ts";
import { exists, readJson } from "../../../common/fs.ts";
import type { MathRecord } from "../../../datasets/mod.ts";
import { grade } from "../../../evaluators/mod.ts";
import { loadBundle } from "./checkpoint.ts";
import { createModel, type Model, sampleAsync, setWeights, type TensorData } from "./model.ts";
import {
  type EvalProtocolSetting,
  modelConfig,
  resolveSettings,
  settingsTokenizer,
  type TfjsSettings,
} from "./settings.ts";
import { cutAtEos, encodePrompts, type Tokenizer } from "./tokenizer.ts";
import { methodsOf, renderPrompt, renderTrace } from "./traces.ts";
import type { EvalSample } from "../../../common/run_folder.ts";

/** What every saved model carries, so it can be rebuilt without the run config. */
export interface SavedModel {
  settings: TfjsSettings;
  weights: Record<string, TensorData>;
}

/** A model ready to sample, with the tokenizer and settings it was trained with. */
export interface Policy {
  model: Model;
  tokenizer: Tokenizer;
  settings: TfjsSettings;
}

/** Rebuild a policy from saved settings and weights. */
export function policyFrom(saved: SavedModel): Policy {
  const settings = resolveSettings(saved.settings, "checkpoint settings");
  const tokenizer = settingsTokenizer(settings);
  const model = createModel(modelConfig(settings, tokenizer), Rng.seeded(0));
  setWeights(model, saved.weights);
  return { model, tokenizer, settings };
}

/**
 * The bundle folder (holding state.json) that `dir` names: a run's `checkpoints/` (its latest step), one `step-*`
 * folder, one base of a sweep `base/<b>/` or `base/<b>/model/`, a run folder (its checkpoints/) or a sweep
 * folder (its base 0: every base of a sweep shares the settings). Throws naming `dir` when none is there.
 */
function bundleDir(dir: string): string {
  for (const c of [join(dir, "base", "0", "model"), join(dir, "model"), join(dir, "checkpoints"), dir]) {
    const latest = join(c, "latest.json");
    const folder = exists(latest) ? join(c, readJson<{ dir: string }>(latest).dir) : c;
    if (exists(join(folder, "state.json"))) return folder;
  }
  throw new Error(
    `${dir}: no tfjs checkpoint (expected a sweep folder with base/0/, a base/<b>/, a run's checkpoints/ or a step-* folder)`,
  );
}

/** Load a policy from a checkpoint folder (`bundleDir`); the backend must already be started (`initBackend`). */
export function loadPolicy(checkpointDir: string): Policy {
  return policyFrom(loadBundle<SavedModel>(bundleDir(checkpointDir)));
}

/** The settings a checkpoint folder (`bundleDir`) was trained with, read from its state.json without the weights. */
export function checkpointSettings(dir: string): TfjsSettings {
  const state = join(bundleDir(dir), "state.json");
  // The tensors are `$f32` references into tensors.bin: not read, only the settings are wanted.
  const saved = readJson<{ settings?: unknown }>(state);
  if (saved.settings === undefined) throw new Error(`${state}: no settings (not a tfjs checkpoint)`);
  return resolveSettings(saved.settings, `${state} settings`);
}

/** One sampled completion. */
export interface Completion {
  text: string;
  /** Tokens generated, EOS included when reached. */
  tokens: number;
  /** "stop" when EOS was sampled, "length" when the token budget ran out. */
  finishReason: "stop" | "length";
}

/** Sampling options of `generate`; maxTokens is capped by the model context minus the prompt length. */
export interface GenerateOptions {
  n: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  seed: number;
  /** Rows sampled together (default 256). */
  batchSize?: number;
}

/**
 * `n` completions for each prompt text (the compact prompt, e.g. "3+4*5="), as [prompt][sample]. Same seed and
 * options give the same texts on one backend. Rejects when a prompt has characters outside the vocabulary or is
 * too long. Reads are asynchronous, so it runs on every backend, webgpu included.
 */
export async function generate(policy: Policy, promptTexts: readonly string[], opts: GenerateOptions) {
  const { model, tokenizer: tok, settings } = policy;
  const P = settings.model.promptLength;
  const maxNew = Math.min(opts.maxTokens, model.config.context - P);
  if (!(maxNew >= 1)) throw new Error(`generate: maxTokens must be ≥ 1, got ${opts.maxTokens}`);
  const rng = Rng.seeded(opts.seed);
  const rows = promptTexts.flatMap((text) => Array.from({ length: opts.n }, () => text));
  const out: Completion[] = [];
  const chunk = opts.batchSize ?? 256;
  for (let start = 0; start < rows.length; start += chunk) {
    const texts = rows.slice(start, start + chunk);
    const prompts = encodePrompts(tok, texts, P);
    const r = await sampleAsync(model, prompts, texts.length, {
      maxNew,
      temperature: opts.temperature,
      topP: opts.topP,
      rng,
      firstRow: start,
      eos: tok.eos,
    });
    for (let b = 0; b < texts.length; b++) {
      const row = r.tokens.subarray(b * (P + maxNew) + P, (b + 1) * (P + maxNew));
      const { ids, stopped } = cutAtEos(tok, row);
      out.push({ text: tok.decode(ids), tokens: r.lengths[b], finishReason: stopped ? "stop" : "length" });
    }
  }
  return promptTexts.map((_, i) => out.slice(i * opts.n, (i + 1) * opts.n));
}

/** One eval.jsonl line (ARCHITECTURE.md), with the family and the solution method the sample followed. */
export interface EvalRecord extends EvalSample {
  rule: string;
  meta: { family: string; method: string; finish: string };
}

/** The method whose exact trace a response reproduces, or "other". */
export function methodOf(record: MathRecord, response: string): string {
  for (const m of methodsOf(record.meta.family as string)) {
    if (renderTrace(m, record.meta.params ?? {}).text === response) return m.name;
  }
  return "other";
}

/**
 * Evaluate `n` samples per test problem at the eval temperature/top-p (or an extra `protocol`'s, on its first
 * `problems` problems, whose records' dataset is `<dataset>@<name>`), graded as `grader` says (the sweep's
 * recorded protocol). The random stream is `Rng.seeded(seed)`, so the same policy, seed and settings give the
 * same records.
 */
export async function evaluate(
  policy: Policy,
  test: readonly MathRecord[],
  n: number,
  step: number,
  seed: number,
  grader: { strict: boolean },
  protocol?: EvalProtocolSetting,
): Promise<EvalRecord[]> {
  const s = policy.settings;
  if (protocol?.problems !== undefined) test = test.slice(0, protocol.problems);
  const completions = await generate(policy, test.map(renderPrompt), {
    n: protocol?.n ?? n,
    temperature: protocol?.temperature ?? s.eval.temperature,
    topP: protocol?.topP ?? s.eval.topP,
    maxTokens: s.rl.maxNewTokens,
    seed,
    batchSize: s.eval.batchSize,
  });
  return test.flatMap((record, i) =>
    completions[i].map((c, sample) => {
      const g = grade(c.text, record.answer, { strict: grader.strict });
      return {
        step,
        dataset: protocol ? `${record.dataset}@${protocol.name}` : record.dataset,
        problemId: record.id,
        sample,
        correct: g.correct,
        status: g.status,
        extracted: g.extracted,
        rule: g.rule,
        meta: {
          family: record.meta.family as string,
          method: methodOf(record, c.text),
          finish: c.finishReason,
        },
      };
    })
  );
}
