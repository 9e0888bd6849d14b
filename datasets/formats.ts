// Source formats: how to read rows from a source's files, and how one validated row becomes a MathRecord.
// Row locations are 1-based ("file:line" for JSON lines, "file row N" for parquet and CSV). The evaluation sets
// RLVR papers report beside MATH-500 and AIME 2025 (AIME 2024, AMC 2023, Minerva Math, OlympiadBench, GSM8K) come
// in the layouts QwenLM/Qwen2.5-Math ships in evaluation/data/. A record builder takes a row that passed its JSON
// Schema (schemas/<format>.schema.json); a row whose answer cannot be read throws, and fetch reports it as a bad
// row at its file:line.
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { sha256 } from "../common/hash.ts";
import { fromCsv } from "../common/csv.ts";
import { hasCjk, type MathRecord } from "./record.ts";
import { stripDapoTemplate } from "./templates.ts";
import { gsm8kAnswer, lastBoxed } from "./answers.ts";

/** One row as read: its location, and either the value or why it could not be parsed. */
export interface RawRow {
  where: string;
  row?: unknown;
  error?: string;
}

/** How to read and normalise one source format. */
export interface Format {
  /** Reads rows from the source's files (local paths, in the order the source lists them). */
  rows(paths: string[]): AsyncGenerator<RawRow>;
  /** The record for a row that passed the format's JSON Schema. */
  toRecord(row: never): MathRecord;
}

/** JSON lines; a line that does not parse (e.g. the torn last line of a truncated file) is a bad row. */
export async function* jsonlRows(paths: string[]): AsyncGenerator<RawRow> {
  for (const path of paths) {
    const lines = readFileSync(path, "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === "") continue;
      const where = `${path}:${i + 1}`;
      try {
        yield { where, row: JSON.parse(lines[i]) };
      } catch (e) {
        yield { where, error: `invalid JSON (${(e as Error).message.split("\n")[0]})` };
      }
    }
  }
}

/** Parquet, a batch of row groups at a time so the 1.8M-row upstream DAPO file never sits in memory whole. */
export async function* parquetRows(paths: string[]): AsyncGenerator<RawRow> {
  for (const path of paths) {
    const file = await asyncBufferFromFile(path);
    // A truncated file fails here, at its footer.
    const metadata = await parquetMetadataAsync(file).catch((e) => {
      throw new Error(`${path}: not a readable parquet file (truncated or corrupt?): ${e.message}`);
    });
    for (const [start, end] of batches(metadata.row_groups.map((g) => Number(g.num_rows)))) {
      const rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end }).catch((e) => {
        throw new Error(`${path}: cannot read rows ${start + 1}-${end}: ${e.message}`);
      });
      for (let i = 0; i < rows.length; i++) {
        yield { where: `${path} row ${start + i + 1}`, row: plain(rows[i]) };
      }
    }
  }
}

/** Row ranges [start, end) of whole row groups, each at least `minRows` long (except the last): one read per
 * range, since every read walks all row groups and files with many small groups would go quadratic. */
export function batches(groupRows: number[], minRows = 20_000): [number, number][] {
  const out: [number, number][] = [];
  let start = 0, end = 0;
  for (const n of groupRows) {
    end += n;
    if (end - start >= minRows) {
      out.push([start, end]);
      start = end;
    }
  }
  if (end > start) out.push([start, end]);
  return out;
}

/** Parquet INT64 comes back as bigint: make it a number when exact, else a decimal string (JSON has no bigint). */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : String(value);
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

/** MathArena's source form: per exam folder aime_2025_<I|II>, answers.csv (id,answer) joined with problems/<id>.tex. */
async function* matharenaSrcRows(paths: string[]): AsyncGenerator<RawRow> {
  for (const csv of paths.filter((p) => basename(p) === "answers.csv")) {
    const dir = dirname(csv);
    const exam = basename(dir).match(/_(I|II)$/)?.[1] ?? basename(dir);
    let table: Record<string, string>[];
    try {
      table = fromCsv(readFileSync(csv, "utf8"));
    } catch (e) {
      throw new Error(`${csv}: invalid CSV: ${(e as Error).message.split("\n")[0]}`);
    }
    for (let i = 0; i < table.length; i++) {
      const where = `${csv} row ${i + 1}`;
      const { id, answer } = table[i];
      const tex = join(dir, "problems", `${id}.tex`);
      let problem: string;
      try {
        problem = readFileSync(tex, "utf8").trim();
      } catch {
        yield { where, error: `no problem file ${tex}` };
        continue;
      }
      yield { where, row: { exam, id, answer, problem } };
    }
  }
}

/** An AIME 2025 record of exam I or II, problem 1..15 (id "aime2025/I-1"). */
function aime2025(exam: string, n: number, problem: string, answer: string, meta: MathRecord["meta"]) {
  return record("aime2025", `${exam}-${n}`, problem, answer, meta);
}

/** The upstream index (a UUID string, or an integer in re-exports). */
type DapoIndex = string | number;

/** A DAPO record: the bare problem (template stripped if present), the answer, and the CJK flag. */
function dapoRecord(problem: string, answer: string, index: DapoIndex, dataSource: unknown): MathRecord {
  const sourceIds: Record<string, string | number> = { index };
  if (typeof dataSource === "string") sourceIds.data_source = dataSource;
  return {
    id: `dapo/${index}`,
    dataset: "dapo-math-17k",
    problem,
    answer,
    template: "dapo-answer",
    meta: { sourceIds, cjk: hasCjk(problem) },
  };
}

/** A boxed-template record of `dataset` with the given id suffix, answer and metadata. */
function record(
  dataset: MathRecord["dataset"],
  id: string | number,
  problem: string,
  answer: string,
  meta: MathRecord["meta"],
): MathRecord {
  return { id: `${dataset}/${id}`, dataset, problem, answer, template: "boxed", meta };
}

/** The source ids of a row with an `id` and, where it has one, its AoPS `url`. */
function idAndUrl(r: { id: number; url?: string }): Record<string, string | number> {
  return r.url ? { id: r.id, url: r.url } : { id: r.id };
}

/**
 * AIME 2024 / AMC 2023 (aime24, amc23 test.jsonl), the id from the AoPS url (".../2024_AIME_I_Problems/Problem_1"
 * is "I-1", ".../2023_AMC_12A_Problems/Problem_1" "12A-1"; else the row's id). Answers are published zero-padded
 * ("025") or as JSON floats (27.0); the record holds the integer ("25", "27").
 */
function aopsRecord(dataset: "aime2024" | "amc2023", contest: "AIME" | "AMC") {
  return (r: { id: number; problem: string; answer: string | number; url?: string }): MathRecord => {
    const m = r.url?.match(new RegExp(`_${contest}_(\\w+?)_Problems/Problem_(\\d+)`));
    const id = m ? `${m[1]}-${Number(m[2])}` : r.id;
    return record(dataset, id, r.problem, String(Number(r.answer)), { sourceIds: idAndUrl(r) });
  };
}

/** Minerva Math (minerva_math/test.jsonl): the answer is the solution's last \boxed{}; the course is kept. */
function minervaRecord(r: { problem: string; solution: string; type?: string; idx: number }): MathRecord {
  const answer = lastBoxed(r.solution);
  if (answer === null || answer === "") {
    throw new Error("solution: no closed \\boxed{...} holding the answer");
  }
  const meta: MathRecord["meta"] = { sourceIds: { idx: r.idx } };
  if (r.type) meta.course = r.type;
  return record("minerva", r.idx, r.problem, answer, meta);
}

/**
 * OlympiadBench (olympiadbench/test.jsonl): final_answer's items without their `$` delimiters, joined by ", "
 * (multi-answer rows hold a list in one item); subfield, answer type, unit and numeric tolerance are kept.
 */
function olympiadBenchRecord(r: {
  id: number;
  question: string;
  final_answer: string[];
  subfield?: string;
  answer_type?: string;
  unit?: string | null;
  is_multiple_answer?: boolean;
  error?: string | null;
}): MathRecord {
  const answer = r.final_answer.map((a) => a.replace(/(?<!\\)\$/g, "").trim()).join(", ");
  const meta: MathRecord["meta"] = { sourceIds: { id: r.id } };
  if (r.subfield) meta.subfield = r.subfield;
  if (r.answer_type) meta.answerType = r.answer_type;
  if (r.unit) meta.unit = r.unit;
  if (r.is_multiple_answer) meta.multipleAnswers = true;
  if (r.error) meta.tolerance = r.error;
  return record("olympiadbench", r.id, r.question, answer, meta);
}

/** GSM8K (gsm8k/test.jsonl): the answer after "####"; the id is `idx`, or a content hash in the upstream file. */
function gsm8kRecord(r: { question: string; answer: string; idx?: number }): MathRecord {
  const answer = gsm8kAnswer(r.answer);
  if (answer === null) throw new Error("answer: no '#### N' final answer");
  const id = r.idx ?? `sha-${sha256(r.question).slice(0, 12)}`;
  return record("gsm8k", id, r.question, answer, { sourceIds: { idx: id } });
}

/** Every supported format, keyed by the name used in sources.ts and schemas/<name>.schema.json. */
export const FORMATS = {
  "math500-jsonl": {
    rows: jsonlRows,
    toRecord: (r: { problem: string; answer: string; subject: string; level: number; unique_id: string }) =>
      record("math500", r.unique_id, r.problem, r.answer, {
        subject: r.subject,
        level: r.level,
        sourceIds: { unique_id: r.unique_id },
      }),
  },
  "aime-matharena-parquet": {
    rows: parquetRows,
    toRecord: (
      r: { problem_idx: number; problem: string; answer: number | string; problem_type?: unknown },
    ) => {
      const meta = { sourceIds: { problem_idx: r.problem_idx }, problemType: r.problem_type ?? undefined };
      const exam = r.problem_idx <= 15 ? "I" : "II";
      return aime2025(exam, ((r.problem_idx - 1) % 15) + 1, r.problem, String(r.answer), meta);
    },
  },
  "aime-yentinglin-jsonl": {
    rows: jsonlRows,
    toRecord: (r: { id: number; problem: string; answer: string; url?: string }) => {
      // The AoPS url names exam and problem; the id (0-29) is the fallback.
      const m = r.url?.match(/2025_AIME_(I|II)_Problems\/Problem_(\d+)/);
      const [exam, n] = m ? [m[1], Number(m[2])] : [r.id < 15 ? "I" : "II", (r.id % 15) + 1];
      return aime2025(exam, n, r.problem, r.answer, { sourceIds: idAndUrl(r) });
    },
  },
  "aime-matharena-src": {
    rows: matharenaSrcRows,
    toRecord: (r: { exam: string; id: string; answer: string; problem: string }) =>
      aime2025(r.exam, Number(r.id), r.problem, r.answer, {
        sourceIds: { exam: r.exam, problem: Number(r.id) },
      }),
  },
  "dapo-verl-parquet": {
    rows: parquetRows,
    toRecord: (r: {
      data_source?: string;
      prompt: { content: string }[];
      reward_model: { ground_truth: string };
      extra_info: { index: DapoIndex };
    }) => {
      const content = r.prompt[0].content;
      const bare = stripDapoTemplate(content) ?? content;
      return dapoRecord(bare, r.reward_model.ground_truth, r.extra_info.index, r.data_source);
    },
  },
  "dapo-openr1-parquet": {
    rows: parquetRows,
    toRecord: (
      r: { prompt: string; solution: string; data_source?: string; extra_info?: { index?: DapoIndex } },
    ) =>
      dapoRecord(
        stripDapoTemplate(r.prompt) ?? r.prompt,
        r.solution,
        r.extra_info?.index ?? `sha-${sha256(r.prompt).slice(0, 12)}`, // no index: name it by content
        r.data_source,
      ),
  },
  "qwen-aime-jsonl": { rows: jsonlRows, toRecord: aopsRecord("aime2024", "AIME") },
  "qwen-amc-jsonl": { rows: jsonlRows, toRecord: aopsRecord("amc2023", "AMC") },
  "minerva-jsonl": { rows: jsonlRows, toRecord: minervaRecord },
  "olympiadbench-jsonl": { rows: jsonlRows, toRecord: olympiadBenchRecord },
  "gsm8k-jsonl": { rows: jsonlRows, toRecord: gsm8kRecord },
} satisfies Record<string, Format>;

/** A source format's name; each has a JSON Schema `datasets/schemas/<format>.schema.json`. */
export type FormatName = keyof typeof FORMATS;

/** The JSON Schema file of a format. */
export function schemaUrl(format: FormatName): URL {
  return new URL(`./schemas/${format}.schema.json`, import.meta.url);
}
