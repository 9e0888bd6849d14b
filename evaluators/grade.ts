// grade(prediction, gold): extraction → normalisation → structured comparison. Total: never throws.
import { extractAnswer, extractGold } from "./extract.ts";
import { normalizeAnswer } from "./normalize.ts";
import { parseValue, percentScaled, type Value, valuesEqual } from "./compare.ts";

/** Outcome classes, logged separately so a parse failure or timeout is never mistaken for a wrong answer. */
export type GradeStatus = "correct" | "wrong" | "no_answer" | "parse_error" | "timeout";

/** The verdict for one prediction: `extracted` is the answer span found, `rule` the extraction rule that fired. */
export interface GradeResult {
  correct: boolean;
  status: GradeStatus;
  extracted: string | null;
  rule: string;
}

/** Options for `grade`: `strict` accepts only explicit answer markers (boxed, Answer:, "final answer is"). */
export interface GradeOptions {
  strict?: boolean;
}

/** Hard input caps applied before any parsing: longer answers are graded `parse_error`. */
const GRADE_LIMITS = { answerChars: 1_000, braceDepth: 30 };

function braceDepthExceeds(s: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === "{" || ch === "(" || ch === "[") {
      if (++depth > limit) return true;
    } else if (ch === "}" || ch === ")" || ch === "]") depth--;
  }
  return false;
}

type Prepared = { value: Value; percent: boolean; norm: string } | null;

// Normalise and parse an answer; null when it breaks the size caps.
function prepare(answer: string): Prepared {
  if (answer.length > GRADE_LIMITS.answerChars || braceDepthExceeds(answer, GRADE_LIMITS.braceDepth)) {
    return null;
  }
  const n = normalizeAnswer(answer);
  if (n.text === "") return null;
  return { value: parseValue(n.text), percent: n.percent, norm: n.text };
}

const plainWord = /^[a-zA-Z]+$/;

/** Equivalence of two prepared answers (pred against reference gold), with the percent reading v ≡ v/100. */
function preparedEqual(p: NonNullable<Prepared>, g: NonNullable<Prepared>): boolean {
  if (p.norm === g.norm) return true;
  if (plainWord.test(p.norm) && plainWord.test(g.norm) && p.norm.toLowerCase() === g.norm.toLowerCase()) {
    return true;
  }
  if (valuesEqual(p.value, g.value)) return true;
  if (p.percent && !g.percent) {
    const scaled = percentScaled(p.value);
    return scaled !== null && valuesEqual(scaled, g.value);
  }
  if (g.percent && !p.percent) {
    const scaled = percentScaled(g.value);
    return scaled !== null && valuesEqual(p.value, scaled);
  }
  return false;
}

/**
 * Grade one model response against a reference answer. Never throws: unexpected internal errors are reported
 * as `parse_error`. A gold that cannot be read (empty, over the caps) grades every prediction `parse_error`.
 */
export function grade(prediction: string, gold: string, options: GradeOptions = {}): GradeResult {
  let extracted: string | null = null;
  let rule = "no_answer";
  try {
    const ex = extractAnswer(String(prediction ?? ""), options);
    extracted = ex.answer;
    rule = ex.rule;
    if (extracted === null) return { correct: false, status: "no_answer", extracted, rule };
    const goldAnswer = extractGold(String(gold ?? ""));
    const g = goldAnswer === null ? null : prepare(goldAnswer);
    if (g === null) {
      return { correct: false, status: "parse_error", extracted, rule: `${rule}; gold_unreadable` };
    }
    const p = prepare(extracted);
    if (p === null) return { correct: false, status: "parse_error", extracted, rule: `${rule}; over_caps` };
    if (preparedEqual(p, g)) return { correct: true, status: "correct", extracted, rule };
    const unparsed = p.value.kind === "text" && g.value.kind !== "text";
    return { correct: false, status: unparsed ? "parse_error" : "wrong", extracted, rule };
  } catch (e) {
    return {
      correct: false,
      status: "parse_error",
      extracted,
      rule: `${rule}; internal: ${(e as Error)?.message}`,
    };
  }
}

/** Are two extracted answers the same value under the grader's equivalence (used to cluster votes)? */
export function isEquivalent(a: string, b: string): boolean {
  try {
    const p = prepare(a);
    const g = prepare(b);
    return p !== null && g !== null && preparedEqual(p, g);
  } catch {
    return false;
  }
}
