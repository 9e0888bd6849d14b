// A user's own problem file as a dataset (`eval --dataset path/to/file.jsonl|.parquet`): one row per problem, the
// problem and the reference answer read from named fields. Defaults match the common layouts: the problem from
// `problem`, else `question`; the answer from `answer`, else the last \boxed{} of `solution`. Every bad row is an
// error naming file, line (or parquet row) and field; nothing is dropped silently.
import { basename, extname } from "node:path";
import { readFileSync } from "node:fs";
import { sha256 } from "../common/hash.ts";
import { gsm8kAnswer, lastBoxed } from "./answers.ts";
import { jsonlRows, parquetRows } from "./formats.ts";
import type { FileDatasetName, MathRecord } from "./record.ts";

/** Field choices for a file dataset; absent keys use the defaults of the file comment. */
export interface FileKeys {
  /** Field holding the problem text; a dotted path reaches a nested field ("prompt.text"). */
  problemKey?: string;
  /**
   * Field holding the answer, used as is; `FIELD:boxed` takes the last \boxed{} of FIELD, `FIELD:gsm8k` what
   * follows its last "####" (GSM8K's upstream layout).
   */
  answerKey?: string;
}

/** A file dataset: its records and what identifies it (path, sha256 of the bytes, the fields used). */
export interface FileDataset {
  name: FileDatasetName;
  path: string;
  sha256: string;
  problemKey: string;
  answerKey: string;
  records: MathRecord[];
}

/** True if a `--dataset` value names a file (by its extension) rather than a registered dataset. */
export function isDatasetFile(value: string): boolean {
  return /\.(jsonl|parquet)$/i.test(value);
}

/** The dataset name of a file: "file-" + its stem, made folder-safe ("file-my_set" for "my set.jsonl"). */
export function fileDatasetName(path: string): FileDatasetName {
  const stem = basename(path, extname(path)).replace(/[^A-Za-z0-9._-]+/g, "_") || "data";
  return `file-${stem}`;
}

/** Read a .jsonl or .parquet problem file into records (see the file comment); throws one-line errors. */
export async function loadFileDataset(path: string, keys: FileKeys = {}): Promise<FileDataset> {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`${path}: cannot read (${(e as Error).message.split("\n")[0]})`);
  }
  const name = fileDatasetName(path);
  const rows = /\.parquet$/i.test(path) ? parquetRows([path]) : jsonlRows([path]);
  const records: MathRecord[] = [];
  let chosen: { problem: string; answer: string } | null = null;
  let n = 0;
  for await (const { where, row, error } of rows) {
    n++;
    if (error !== undefined) throw new Error(`${where}: ${error}`);
    if (!row || typeof row !== "object" || Array.isArray(row)) throw new Error(`${where}: not an object`);
    const fields = row as Record<string, unknown>;
    chosen ??= { problem: pickProblemKey(fields, keys, where), answer: pickAnswerKey(fields, keys, where) };
    records.push({
      id: `${name}/${n}`,
      dataset: name,
      problem: problemOf(fields, chosen.problem, where),
      answer: answerOf(fields, chosen.answer, where),
      template: "boxed",
      meta: { sourceIds: { row: n } },
    });
  }
  if (records.length === 0 || chosen === null) throw new Error(`${path}: no rows`);
  return { name, path, sha256: sha256(bytes), problemKey: chosen.problem, answerKey: chosen.answer, records };
}

/** The value at a dotted path, or undefined. */
function at(fields: Record<string, unknown>, key: string): unknown {
  let value: unknown = fields;
  for (const part of key.split(".")) {
    if (!value || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The problem field: the one given, else `problem`, else `question` (decided on the first row). */
function pickProblemKey(fields: Record<string, unknown>, keys: FileKeys, where: string): string {
  if (keys.problemKey) return keys.problemKey;
  const found = ["problem", "question"].find((k) => fields[k] !== undefined);
  if (!found) {
    throw new Error(
      `${where}: no 'problem' or 'question' field (fields: ${Object.keys(fields).join(", ")}); ` +
        "name it with --problem-key",
    );
  }
  return found;
}

/** The answer field: the one given, else `answer`, else `solution:boxed` (decided on the first row). */
function pickAnswerKey(fields: Record<string, unknown>, keys: FileKeys, where: string): string {
  if (keys.answerKey) return keys.answerKey;
  if (fields.answer !== undefined) return "answer";
  if (fields.solution !== undefined) return "solution:boxed";
  throw new Error(
    `${where}: no 'answer' or 'solution' field (fields: ${Object.keys(fields).join(", ")}); ` +
      "name it with --answer-key",
  );
}

/** The problem text of a row: a non-empty string. */
function problemOf(fields: Record<string, unknown>, key: string, where: string): string {
  const value = at(fields, key);
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error(`${where}: field '${key}' ${describe(value)}, expected the problem text (--problem-key)`);
  }
  return value;
}

/** The reference answer of a row, by the answer key's mode (see FileKeys.answerKey). */
function answerOf(fields: Record<string, unknown>, spec: string, where: string): string {
  const [key, mode] = spec.split(":", 2) as [string, string | undefined];
  const value = at(fields, key);
  if (mode !== undefined && mode !== "boxed" && mode !== "gsm8k") {
    throw new Error(
      `--answer-key ${spec}: unknown mode '${mode}' (expected FIELD, FIELD:boxed or FIELD:gsm8k)`,
    );
  }
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || text.trim() === "") {
    throw new Error(`${where}: field '${key}' ${describe(value)}, expected the answer (--answer-key)`);
  }
  if (mode === undefined) {
    // A worked solution in the answer field would be graded as the gold: say how to pick its final answer.
    if (/\\boxed\{|\n####/.test(text)) {
      throw new Error(
        `${where}: field '${key}' holds a worked solution, not a final answer; use --answer-key ${key}:boxed ` +
          `or ${key}:gsm8k`,
      );
    }
    return text.trim();
  }
  const answer = mode === "boxed" ? lastBoxed(text) : gsm8kAnswer(text);
  if (!answer) {
    throw new Error(
      `${where}: field '${key}' has no ${mode === "boxed" ? "closed \\boxed{...}" : "'#### N' line"}`,
    );
  }
  return answer;
}

/** "is missing", "is a number", … for an error message. */
function describe(value: unknown): string {
  if (value === undefined) return "is missing";
  if (value === null) return "is null";
  if (typeof value === "string") return "is empty";
  return `is ${Array.isArray(value) ? "an array" : `a ${typeof value}`}`;
}
