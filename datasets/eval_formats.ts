// Records of the evaluation sets RLVR papers report beside MATH-500 and AIME 2025 (AIME 2024, AMC 2023, Minerva
// Math, OlympiadBench, GSM8K), from the layouts QwenLM/Qwen2.5-Math ships in evaluation/data/. Each builder takes
// a row that passed its JSON Schema (schemas/<format>.schema.json); a row whose answer cannot be read throws,
// and fetch reports it as a bad row at its file:line.
import { sha256 } from "../common/hash.ts";
import { gsm8kAnswer, lastBoxed } from "./answers.ts";
import type { MathRecord } from "./record.ts";

/** "I-1" for an AoPS url ".../2024_AIME_I_Problems/Problem_1", "12A-1" for ".../2023_AMC_12A_Problems/Problem_1". */
function aopsId(url: string | undefined, contest: "AIME" | "AMC"): string | null {
  const m = url?.match(new RegExp(`_${contest}_(\\w+?)_Problems/Problem_(\\d+)`));
  return m ? `${m[1]}-${Number(m[2])}` : null;
}

/** A boxed-template record of `dataset` with the given id suffix, answer and metadata. */
export function record(
  dataset: MathRecord["dataset"],
  id: string | number,
  problem: string,
  answer: string,
  meta: MathRecord["meta"],
): MathRecord {
  return { id: `${dataset}/${id}`, dataset, problem, answer, template: "boxed", meta };
}

/** The source ids of a row with an `id` and, where it has one, its AoPS `url`. */
export function idAndUrl(r: { id: number; url?: string }): Record<string, string | number> {
  return r.url ? { id: r.id, url: r.url } : { id: r.id };
}

/** AIME 2024 (aime24/test.jsonl): answers are published zero-padded ("025"); the record holds the integer ("25"). */
export function aime2024Record(r: { id: number; problem: string; answer: string; url?: string }): MathRecord {
  const id = aopsId(r.url, "AIME") ?? r.id;
  return record("aime2024", id, r.problem, String(Number(r.answer)), { sourceIds: idAndUrl(r) });
}

/** AMC 2023 (amc23/test.jsonl): answers are JSON numbers written as floats (27.0); the record holds "27". */
export function amc2023Record(r: { id: number; problem: string; answer: number; url?: string }): MathRecord {
  const id = aopsId(r.url, "AMC") ?? r.id;
  return record("amc2023", id, r.problem, String(r.answer), { sourceIds: idAndUrl(r) });
}

/** Minerva Math (minerva_math/test.jsonl): the answer is the solution's last \boxed{}; the course is kept. */
export function minervaRecord(
  r: { problem: string; solution: string; type?: string; idx: number },
): MathRecord {
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
export function olympiadBenchRecord(r: {
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
export function gsm8kRecord(r: { question: string; answer: string; idx?: number }): MathRecord {
  const answer = gsm8kAnswer(r.answer);
  if (answer === null) throw new Error("answer: no '#### N' final answer");
  const id = r.idx ?? `sha-${sha256(r.question).slice(0, 12)}`;
  return record("gsm8k", id, r.question, answer, { sourceIds: { idx: id } });
}
