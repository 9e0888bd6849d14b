// grade(prediction, gold): extraction → normalisation → parsing into a form → comparison. Total: never throws.
import { extractAnswer, extractGold, type Extraction } from "./extract.ts";
import { normalizeAnswer, type NormalizeOptions } from "./normalize.ts";
import { parseValue, type Value } from "./forms.ts";
import { asksForOrder, type CompareOptions, compareValues, valuesEqual } from "./compare.ts";
import { choiceVerdict, percentVerdict, type Reading, unitVerdict } from "./readings.ts";

/**
 * Outcome classes, logged separately so a parse failure or timeout is never mistaken for a wrong answer.
 * `timeout` (the pool's per-answer limit, after one retry on a fresh worker) and `error` (an internal error of
 * the grader, its message in `rule`) are ungraded: the answer's correctness is unknown (`verdictOf`).
 */
export type GradeStatus = "correct" | "wrong" | "no_answer" | "parse_error" | "timeout" | "error";

/** What a grade says about the answer: correct, incorrect, or ungraded (timeout or internal error). */
export type Verdict = "correct" | "incorrect" | "ungraded";

/** The verdict of a recorded status (any string, e.g. from eval.jsonl): timeout and error are ungraded. */
export function verdictOf(status: string): Verdict {
  return status === "correct"
    ? "correct"
    : status === "timeout" || status === "error"
    ? "ungraded"
    : "incorrect";
}

/** Why a verdict came out as it did (`grade(…, { explain: true })`, `deno task grade --explain`). */
export interface GradeExplanation {
  extraction: string; // the extraction rule that fired
  prediction: { normalized: string; form: string; rules: string[] } | null;
  gold: { normalized: string; form: string; rules: string[] } | null;
  comparison: string; // the comparison that decided, e.g. "expression", "set", "boxed_union", "boxed_hedge"
}

/** The verdict for one prediction: `extracted` is the answer span found, `rule` the extraction rule that fired. */
export interface GradeResult {
  correct: boolean;
  status: GradeStatus;
  extracted: string | null;
  rule: string;
  explain?: GradeExplanation;
}

/**
 * Options for `grade`: `strict` accepts only explicit answer markers (boxed, Answer:, "final answer is");
 * `decimalComma` reads "1,5" as 1.5; `explain` adds the explanation of the verdict to the result; `problem`, the
 * question's text when the caller has it, tells whether a list answer is asked for in an order (`asksForOrder`).
 */
export interface GradeOptions extends NormalizeOptions {
  strict?: boolean;
  explain?: boolean;
  problem?: string;
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

type Prepared = Reading & { rules: string[] };

// Normalise and parse an answer; null when it breaks the size caps.
function prepare(answer: string, options: NormalizeOptions = {}): Prepared | null {
  if (answer.length > GRADE_LIMITS.answerChars || braceDepthExceeds(answer, GRADE_LIMITS.braceDepth)) {
    return null;
  }
  const n = normalizeAnswer(answer, options);
  if (n.text === "") return null;
  return { value: parseValue(n.text), percent: n.percent, unit: n.unit, norm: n.text, rules: n.fired };
}

// Words of three or more letters compare case-insensitively ("Monday"); a letter is a symbol, and X is not x.
const plainWord = /^[a-zA-Z]{3,}$/;

// A decimal comma is read only where it cannot be anything else: one side is a plain decimal ("1.22"), the other
// one number with a single comma ("1,22") that is no thousands grouping (not three digits after the comma, or a
// leading group of 0 or of four digits: "0,111", "1000,999"). Such a list "1,22" could never equal a decimal,
// and "1,500" (thousands) stays 1500.
const PLAIN_DECIMAL = /^-?\d+\.\d+$/;
const ONE_COMMA = /^-?(\d+),(\d+)$/;
function decimalCommaReading(commaSide: string, decimalSide: string): Value | null {
  const m = ONE_COMMA.exec(commaSide);
  if (!m || !PLAIN_DECIMAL.test(decimalSide)) return null;
  const grouping = m[2].length === 3 && /^[1-9]\d{0,2}$/.test(m[1]);
  return grouping ? null : parseValue(commaSide.replace(",", "."));
}

/**
 * Equivalence of two prepared answers (pred against reference gold): a multiple-choice gold, then units, then
 * the values (percent as a value, readings.ts), then the decimal-comma reading.
 */
function preparedCompare(p: Prepared, g: Prepared, options: CompareOptions): { equal: boolean; by: string } {
  const choice = choiceVerdict(p, g, options);
  if (choice !== null) return choice;
  const unit = unitVerdict(p, g, options);
  if (unit !== null) return unit;
  const direct = percentVerdict(p, g, () => {
    if (p.norm === g.norm) return { equal: true, by: "same_string" };
    if (plainWord.test(p.norm) && plainWord.test(g.norm) && p.norm.toLowerCase() === g.norm.toLowerCase()) {
      return { equal: true, by: "same_word" };
    }
    return compareValues(p.value, g.value, options);
  }, options);
  if (direct.equal) return direct;
  const commaP = decimalCommaReading(p.norm, g.norm);
  if (commaP !== null && valuesEqual(commaP, g.value, options)) return { equal: true, by: "decimal_comma" };
  const commaG = decimalCommaReading(g.norm, p.norm);
  if (commaG !== null && valuesEqual(p.value, commaG, options)) return { equal: true, by: "decimal_comma" };
  return direct;
}

// Several boxes (both modes): against a gold of several values their union is the answer (order-free); a
// one-value gold against a final group of different boxes ("\boxed{3} or \boxed{4}") is a hedge and wrong.
function boxesVerdict(
  ex: Extraction,
  g: Prepared,
  options: NormalizeOptions,
  compare: CompareOptions,
): string | null {
  if (!ex.boxes) return null;
  const gv = g.value;
  const multi = gv.kind === "set" && gv.items.length > 1;
  // Labelled parts boxed one by one, "(a) \boxed{3} … (b) \boxed{7}", against a tuple gold (3, 7): the boxes
  // in order are its coordinates, one box each.
  const tuple = gv.kind === "tuple" && gv.open === "(" && ex.boxes.length === gv.items.length;
  if (multi || tuple) {
    const parts = ex.boxes.map((b) => prepare(b, options)?.value);
    if (parts.some((x) => x === undefined)) return null;
    const values = parts as Value[];
    if (tuple) return valuesEqual({ ...gv, items: values }, gv, compare) ? "boxed_tuple" : null;
    const items = values.flatMap((v) => v.kind === "set" ? v.items : [v]);
    return valuesEqual({ kind: "set", items, form: gv.form }, gv, compare) ? "boxed_union" : null;
  }
  const group = (ex.finalBoxes ?? []).map((b) => prepare(b, options));
  if (group.length < 2 || group.some((x) => x === null)) return null;
  const first = group[0]!;
  return group.every((x) => preparedCompare(x!, first, {}).equal && preparedCompare(first, x!, {}).equal)
    ? null
    : "boxed_hedge";
}

// `--explain` names the decimal rule that applied when either side has a decimal (docs/evaluators.md).
const HAS_DECIMAL = /\d\.\d/;
const NO_DECIMAL_RULE = new Set(["same_string", "same_word", "decimal_comma", "choice", "unit_dimension"]);
function decimalRule(p: Prepared, g: Prepared, strict: boolean): string {
  if (!HAS_DECIMAL.test(p.norm) && !HAS_DECIMAL.test(g.norm)) return "";
  if (!strict || HAS_DECIMAL.test(g.norm)) {
    return "; decimals: a plain decimal may be the other value rounded to its places";
  }
  return "; decimals: exact (strict mode, the gold has no decimal)";
}

const described = (p: Prepared) => ({
  normalized: p.norm,
  form: p.value.form ?? p.value.kind,
  rules: p.unit === null ? p.rules : [...p.rules, `unit=${p.unit.name}`],
});

const NOTHING_COMPARED: Omit<GradeExplanation, "extraction"> = {
  prediction: null,
  gold: null,
  comparison: "none",
};

/**
 * Grade one model response against a reference answer. Never throws: unexpected internal errors are reported
 * as `error`. A gold that cannot be read (empty, over the caps) grades every prediction `parse_error`.
 */
export function grade(prediction: string, gold: string, options: GradeOptions = {}): GradeResult {
  let extracted: string | null = null;
  let rule = "no_answer";
  const explain = options.explain === true;
  const result = (correct: boolean, status: GradeStatus, r: string, why = NOTHING_COMPARED): GradeResult => {
    const out: GradeResult = { correct, status, extracted, rule: r };
    return explain ? { ...out, explain: { extraction: rule, ...why } } : out;
  };
  try {
    const ex = extractAnswer(String(prediction ?? ""), options);
    extracted = ex.answer;
    rule = ex.rule;
    if (extracted === null) return result(false, "no_answer", rule);
    const goldAnswer = extractGold(String(gold ?? ""));
    const g = goldAnswer === null ? null : prepare(goldAnswer, options);
    if (g === null) return result(false, "parse_error", `${rule}; gold_unreadable`);
    const p = prepare(extracted, options);
    if (p === null) {
      return result(false, "parse_error", `${rule}; over_caps`, { ...NOTHING_COMPARED, gold: described(g) });
    }
    const strict = options.strict ?? false;
    const why = (comparison: string) => ({
      prediction: described(p),
      gold: described(g),
      comparison: NO_DECIMAL_RULE.has(comparison) ? comparison : comparison + decimalRule(p, g, strict),
    });
    // The problem's text matters only where strict mode reads a list's order; default mode never reads it.
    const compare = {
      strict,
      unordered: strict && options.problem !== undefined && !asksForOrder(options.problem),
    };
    // Both modes: several boxes are one answer against a several-value gold, and a hedge is wrong.
    const boxes = boxesVerdict(ex, g, options, compare);
    if (boxes === "boxed_union" || boxes === "boxed_tuple") return result(true, "correct", boxes, why(boxes));
    if (boxes === "boxed_hedge") return result(false, "wrong", "boxed_hedge", why(boxes));
    const verdict = preparedCompare(p, g, compare);
    if (verdict.equal) return result(true, "correct", rule, why(verdict.by));
    const unparsed = p.value.kind === "text" && g.value.kind !== "text";
    return result(false, unparsed ? "parse_error" : "wrong", rule, why(verdict.by));
  } catch (e) {
    // Unknown is not wrong: an internal error leaves the answer ungraded, with the reason.
    return result(false, "error", `${rule}; internal: ${(e as Error)?.message}`);
  }
}

/** Are two extracted answers the same value under the grader's equivalence (used to cluster votes)? */
export function isEquivalent(a: string, b: string): boolean {
  try {
    const p = prepare(a);
    const g = prepare(b);
    return p !== null && g !== null && preparedCompare(p, g, {}).equal;
  } catch {
    return false;
  }
}
