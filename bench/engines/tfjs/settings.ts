// The tfjs engine's settings (validated against settings.schema.json, defaults filled in) and what derives
// from them: the task sets, the tokenizer and the model shape.
import { loadSchema, validate } from "../../../common/config.ts";
import { configHash } from "../../../common/hash.ts";
import { type Family, generateTasks, type MathRecord } from "../../../datasets/mod.ts";
import type { ModelConfig } from "./model.ts";
import { makeTokenizer, type Tokenizer } from "./tokenizer.ts";
import { methodsOf, TRACE_FAMILIES } from "./traces.ts";

/** An extra evaluation protocol (settings.schema.json eval.protocols): its records' dataset is `<dataset>@<name>`. */
export interface EvalProtocolSetting {
  name: string;
  temperature: number;
  topP: number;
  n: number;
  /** The first this many test problems only (absent: all). */
  problems?: number;
}

/** All knobs of the engine (see settings.schema.json for meanings and defaults). */
export interface TfjsSettings {
  backend: "auto" | "blas" | "wasm" | "cpu" | "webgpu" | "tensorflow";
  /** Absent = 1 (see settings.schema.json). */
  sampleWorkers?: number;
  /** Absent = 1 (see settings.schema.json). */
  blasThreads?: number;
  tokenizer: "char";
  model: { dModel: number; heads: number; layers: number; promptLength: number };
  tasks: {
    families: string[];
    difficulty: number;
    difficultyByFamily: Record<string, number>;
    trainSize: number;
    testSize: number;
    seed: number;
  };
  sft: {
    steps: number;
    batchSize: number;
    lr: number;
    warmupSteps: number;
    clipNorm: number;
    /** Absent = 100 (see settings.schema.json). */
    checkpointEvery?: number;
    workers: number;
    mix: Record<string, number>;
  };
  rl: {
    steps: number;
    promptsPerStep: number;
    groupSize: number;
    miniBatches: number;
    lr: number;
    clipNorm: number;
    temperature: number;
    topP: number;
    maxNewTokens: number;
    checkpointEvery: number;
  };
  eval: { temperature: number; topP: number; batchSize: number; protocols?: EvalProtocolSetting[] };
}

const schemaUrl = new URL("./settings.schema.json", import.meta.url);

/** Validate raw settings (a copy gets the schema defaults); errors name `source` and the field. */
export function resolveSettings(raw: unknown, source = "tfjs settings"): TfjsSettings {
  const s = validate<TfjsSettings>(loadSchema(schemaUrl), structuredClone(raw ?? {}), source);
  for (const family of Object.keys(s.tasks.difficultyByFamily)) {
    if (!s.tasks.families.includes(family)) {
      throw new Error(`${source}: tasks.difficultyByFamily.${family}: '${family}' is not in tasks.families`);
    }
  }
  for (const family of s.tasks.families) {
    const max = TRACE_FAMILIES[family].maxDifficulty, d = difficultyOf(s, family);
    if (d > max) {
      throw new Error(`${source}: difficulty ${d} of '${family}' > ${max}, the hardest its traces support`);
    }
    if (methodsOf(family).every((m) => !(s.sft.mix[`${family}/${m.name}`] > 0))) {
      throw new Error(`${source}: sft.mix gives every '${family}' method weight 0`);
    }
  }
  for (const key of Object.keys(s.sft.mix)) {
    const [family, name] = key.split("/");
    if (!(family in TRACE_FAMILIES) || !methodsOf(family).some((m) => m.name === name)) {
      throw new Error(`${source}: sft.mix.${key}: no such method (keys are 'family/method', see traces.ts)`);
    }
  }
  if (s.model.dModel % s.model.heads !== 0) {
    throw new Error(
      `${source}: model.dModel ${s.model.dModel} is not divisible by model.heads ${s.model.heads}`,
    );
  }
  return s;
}

/** Default settings (the schema's defaults). */
export function defaultSettings(): TfjsSettings {
  return resolveSettings({});
}

/** The settings the base model depends on; the base is reused only when their hash matches. */
export function baseKey(s: TfjsSettings): string {
  // sft.workers is included: summing per-worker gradients changes the last float bits of the base model.
  // sft.checkpointEvery is not: a resumed SFT is bit-for-bit the uninterrupted one.
  const { checkpointEvery: _every, ...sft } = s.sft;
  // blasThreads other than 1 cuts large products in two, which changes the base model's last bits.
  const split = (s.blasThreads ?? 1) !== 1 ? { blasSplit: true } : {};
  return configHash({
    ...split,
    tokenizer: s.tokenizer,
    model: s.model,
    maxNewTokens: s.rl.maxNewTokens,
    tasks: s.tasks,
    sft,
  });
}

/** The difficulty of one family: its override, else the common one. */
function difficultyOf(s: TfjsSettings, family: string): number {
  return s.tasks.difficultyByFamily[family] ?? s.tasks.difficulty;
}

/** Train and test problems (disjoint by construction): the families in turn, each at its own difficulty. */
export function taskSets(s: TfjsSettings): { train: MathRecord[]; test: MathRecord[] } {
  const fams = s.tasks.families;
  const draw = (split: "train" | "test", count: number) => {
    const per = fams.map((family, f) =>
      generateTasks({
        seed: s.tasks.seed,
        split,
        count: Math.ceil((count - f) / fams.length),
        families: [family as Family],
        difficulty: difficultyOf(s, family),
      })
    );
    return Array.from({ length: count }, (_, i) => per[i % fams.length][Math.floor(i / fams.length)]);
  };
  return { train: draw("train", s.tasks.trainSize), test: draw("test", s.tasks.testSize) };
}

/** The tokenizer the settings name. */
export function settingsTokenizer(s: TfjsSettings): Tokenizer {
  return makeTokenizer(s.tokenizer);
}

/** Model shape: context = prompt length + response budget. */
export function modelConfig(s: TfjsSettings, tok: Tokenizer): ModelConfig {
  return {
    vocab: tok.vocabSize,
    dModel: s.model.dModel,
    heads: s.model.heads,
    layers: s.model.layers,
    context: s.model.promptLength + s.rl.maxNewTokens,
  };
}

/** Names of the settings presets: the defaults, `tiny` (tests, CI) and `gpu` (width 512, 8 layers, context 256). */
export const SETTINGS_PRESETS = ["default", "tiny", "gpu"] as const;

/**
 * A settings preset with defaults filled in: `default` (the schema's defaults), `tiny` (tiny.settings.json) or
 * `gpu` (gpu.settings.json: a model large enough that kernel launches stop dominating a GPU step).
 */
export function presetSettings(name: typeof SETTINGS_PRESETS[number] | string): TfjsSettings {
  if (name === "default") return defaultSettings();
  if (name !== "tiny" && name !== "gpu") {
    throw new Error(`settings preset '${name}': expected one of ${SETTINGS_PRESETS.join(", ")}`);
  }
  const text = Deno.readTextFileSync(new URL(`./${name}.settings.json`, import.meta.url));
  return resolveSettings(JSON.parse(text), `${name}.settings.json`);
}

/** A BLAS thread count as settings and flags give it: absent = 1, 0 = one per core (at least 2: products cut). */
export function threadsAsked(n = 1): number {
  return n === 0 ? Math.max(2, navigator.hardwareConcurrency ?? 1) : n;
}
