// A user's own problem file as a dataset (`eval --dataset path/to/file.jsonl|.parquet`): one row per problem, the
// problem and the reference answer read from named fields. Defaults match the common layouts: the problem from
// `problem`, else `question`; the answer from `answer`, else the last \boxed{} of `solution`; the problem's id from
// `id`, `idx` or `unique_id` where the rows have one, else its row number. Every bad row is an error naming file,
// line (or parquet row) and field; nothing is dropped silently: a repeated problem (the same text or id) is refused
// with both lines, or kept once with a warning when asked.
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
  /** Field holding each problem's id (default: `id`, `idx` or `unique_id` where the first row has it). */
  idKey?: string;
  /** A repeated problem (same text or id): "refuse" (default) names the lines; "keep-first" keeps it once. */
  duplicates?: "refuse" | "keep-first";
}

/** A file dataset: its records and what identifies it (path, sha256 of the bytes, the fields used). */
export type FileDataset = Awaited<ReturnType<typeof loadFileDataset>>;

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
export async function loadFileDataset(path: string, keys: FileKeys = {}) {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`${path}: cannot read (${(e as Error).message.split("\n")[0]})`);
  }
  const name = fileDatasetName(path);
  const rows = /\.parquet$/i.test(path) ? parquetRows([path]) : jsonlRows([path]);
  const records: MathRecord[] = [];
  const wheres: string[] = [];
  let chosen: { problem: string; answer: string; id: string | null } | null = null;
  let n = 0;
  for await (const { where, row, error } of rows) {
    n++;
    if (error !== undefined) throw new Error(`${where}: ${error}`);
    if (!row || typeof row !== "object" || Array.isArray(row)) throw new Error(`${where}: not an object`);
    const fields = row as Record<string, unknown>;
    chosen ??= chooseKeys(fields, keys, where);
    const id = chosen.id === null ? n : idOf(fields, chosen.id, where);
    records.push({
      id: `${name}/${id}`,
      dataset: name,
      problem: problemOf(fields, chosen.problem, where),
      answer: answerOf(fields, chosen.answer, where),
      template: "boxed",
      meta: { sourceIds: chosen.id === null ? { row: n } : { row: n, [chosen.id]: id } },
    });
    wheres.push(where);
  }
  if (records.length === 0 || chosen === null) throw new Error(`${path}: no rows`);
  const { kept, warnings } = dropRepeats(records, wheres, chosen.id, keys.duplicates ?? "refuse");
  return {
    name,
    path,
    sha256: sha256(bytes),
    problemKey: chosen.problem,
    answerKey: chosen.answer,
    idKey: chosen.id, // null when ids are row numbers
    records: kept,
    warnings, // one line per kind of repeat left out under `duplicates: "keep-first"`
  };
}

/** A row's id: a non-empty string or a number. */
function idOf(fields: Record<string, unknown>, key: string, where: string): string | number {
  const value = at(fields, key);
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "") return value.trim();
  throw new Error(`${where}: field '${key}' ${describe(value)}, expected the problem's id (--id-key)`);
}

/** Drop (or refuse, naming up to 5 with both lines) rows whose problem text, whitespace collapsed, or id repeats. */
function dropRepeats(
  records: readonly MathRecord[],
  wheres: readonly string[],
  idKey: string | null,
  mode: "refuse" | "keep-first",
): { kept: MathRecord[]; warnings: string[] } {
  const byText = new Map<string, number>(), byId = new Map<string, number>();
  const repeats: string[] = [];
  const kept = records.filter((r, i) => {
    const text = r.problem.replace(/\s+/g, " ").trim();
    const first = byText.get(text) ?? byId.get(r.id);
    if (first !== undefined) {
      const why = byId.get(r.id) !== undefined
        ? `the same ${idKey ?? "id"} '${r.id.slice(r.dataset.length + 1)}'`
        : "the same problem text";
      const kind = wheres[first].includes(" row ") ? "row" : "line";
      repeats.push(`${wheres[i]} repeats ${kind} ${wheres[first].split(/ row |:/).pop()} (${why})`);
      return false;
    }
    byText.set(text, i);
    byId.set(r.id, i);
    return true;
  });
  if (repeats.length === 0) return { kept, warnings: [] };
  const listed = repeats.slice(0, 5).join("; ") +
    (repeats.length > 5 ? `; … ${repeats.length - 5} more` : "");
  if (mode === "refuse") {
    throw new Error(
      `${repeats.length} repeated problem(s), which would weigh double in Pass@k: ${listed}; remove them, or pass ` +
        `--duplicates keep-first to keep the first of each`,
    );
  }
  return {
    kept,
    warnings: [`left out ${repeats.length} repeated problem(s), keeping the first of each: ${listed}`],
  };
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

/** The problem, answer and id fields (id null: row numbers), by the defaults where `keys` does not name them. */
function chooseKeys(fields: Record<string, unknown>, keys: FileKeys, where: string) {
  const has = (k: string) => fields[k] !== undefined;
  const named = `(fields: ${Object.keys(fields).join(", ")})`;
  const problem = keys.problemKey || ["problem", "question"].find(has);
  if (!problem) {
    throw new Error(`${where}: no 'problem' or 'question' field ${named}; name it with --problem-key`);
  }
  const answer = keys.answerKey || (has("answer") ? "answer" : has("solution") ? "solution:boxed" : null);
  if (!answer) {
    throw new Error(`${where}: no 'answer' or 'solution' field ${named}; name it with --answer-key`);
  }
  return { problem, answer, id: keys.idKey || (["id", "idx", "unique_id"].find(has) ?? null) };
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
