// The one normalised record type every dataset (real or synthetic) is loaded into.

/** The built-in datasets, in the order `fetch --list` shows them. */
const BUILT_IN = [
  "math500",
  "aime2024",
  "aime2025",
  "amc2023",
  "minerva",
  "olympiadbench",
  "gsm8k",
  "dapo-math-17k",
  "synthetic",
] as const;

/** Names accepted by `loadDataset` and carried in `MathRecord.dataset`. */
export type DatasetName = (typeof BUILT_IN)[number] | FileDatasetName;

/** A user's problem file as a dataset (`eval --dataset my.jsonl`): "file-" + the file's stem. */
export type FileDatasetName = `file-${string}`;

/** Per-record metadata; fields are present only where the source has them. */
export interface MathMeta {
  /** MATH subject, e.g. "Prealgebra". */
  subject?: string;
  /** MATH difficulty level 1..5. */
  level?: number;
  /** Identifiers from the source, e.g. { unique_id: "test/prealgebra/1747.json" } or { index: 17 }. */
  sourceIds?: Record<string, string | number>;
  /** True when the problem text contains CJK characters (some DAPO rows). */
  cjk?: boolean;
  /** Synthetic task family, e.g. "arith". */
  family?: string;
  /** Synthetic difficulty knob (1 = easiest). */
  difficulty?: number;
  /** Synthetic operands as JSON, so engines can render their own prompts and solution traces. */
  params?: Record<string, unknown>;
  [k: string]: unknown;
}

/** One math problem with its reference answer, as every area consumes it. */
export interface MathRecord {
  /** Stable id, e.g. "math500/test/prealgebra/1747.json", "aime2025/I-1", "dapo/123", "synthetic/arith/train/17". */
  id: string;
  dataset: DatasetName;
  /** Bare problem text (no prompt template). */
  problem: string;
  /** Reference answer as published (LaTeX string). */
  answer: string;
  /** Prompt template name (see templates.ts): "dapo-answer", "boxed" or "raw". */
  template: string;
  meta: MathMeta;
}

/** All dataset names, in the order `fetch --list` shows them. */
export const DATASET_NAMES: readonly DatasetName[] = BUILT_IN;

// Letters of CJK scripts only: full-width punctuation (＄, ，) also appears in English rows of DAPO.
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** True if the text contains Chinese, Japanese or Korean letters (punctuation alone does not count). */
export function hasCjk(text: string): boolean {
  return CJK.test(text);
}
