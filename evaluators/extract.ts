// Answer extraction from a full model response: which span is "the answer", and which rule found it. The rules
// form one ordered list (EXTRACTION_RULES); strict mode (training rewards) runs only the explicit markers.
// Every rule is linear in the response (the response is cut to its last 20 000 characters first).
import {
  CHAT_TOKEN,
  finalSentence,
  isClosingRemark,
  isProse,
  lastBoldValue,
  mathSpans,
  previousSentence,
  sentenceAnswer,
  statesNothing,
} from "./prose.ts";
import { boxedRule, goldBoxGroup, lastBoxed } from "./boxes.ts";
import {
  answerIs,
  answerLine,
  cleanValue,
  EXTRACT_LIMITS,
  type Extraction,
  finalAnswerIs,
  lastMatch,
  otherMarkers,
} from "./markers.ts";

export type { Extraction } from "./markers.ts";

/** Drop reasoning: text after the last `</think>`; an unclosed `<think>` means the answer never came. */
function stripThink(text: string): string {
  const close = text.lastIndexOf("</think>");
  if (close >= 0) return text.slice(close + "</think>".length);
  const open = text.indexOf("<think>");
  return open >= 0 ? text.slice(0, open) : text;
}

// Default mode: what follows the first chat-template token after the response's own text ("<|im_end|>",
// "<|im_start|>user", "</s>") is a next turn the model made up, never its answer.
function cutChatTail(text: string): string {
  if (!text.includes("<")) return text;
  CHAT_TOKEN.lastIndex = 0;
  let from = 0; // a leading "<|im_start|>assistant" is no next turn: text must come between tokens
  for (let m; (m = CHAT_TOKEN.exec(text)) !== null; from = m.index + m[0].length) {
    if (text.slice(from, m.index).trim() !== "") return text.slice(0, m.index);
  }
  return text;
}

// A final line that is nothing but one math span, e.g. "$$x = 3$$" or "\[ \frac12 \]".
function lastLineMath(text: string): Extraction | null {
  const t = text.trim();
  const last = t.slice(t.lastIndexOf("\n") + 1).trim();
  const m = /^(?:\$\$([^$]+)\$\$|\$([^$\n]+)\$|\\\[(.+?)\\\]|\\\((.+?)\\\))\.?$/.exec(last);
  if (!m) return null;
  const v = (m[1] ?? m[2] ?? m[3] ?? m[4]).trim();
  return v === "" ? null : { answer: v, rule: "last_line_math" };
}

// A short one-line answer with no prose is its own answer ("42", "x = 5", "$\frac{1}{2}$").
function bareAnswer(text: string): Extraction | null {
  const t = text.trim();
  if (t === "" || t.includes("\n") || t.length > EXTRACT_LIMITS.bareChars) return null;
  const words = t.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, " ").match(/[A-Za-z]{2,}/g) ?? [];
  if (words.length >= 3) return null;
  // A word beside a math span ("So $a+b = 8$.") is a sentence: the final-sentence rule reads its math.
  const spans = mathSpans(t);
  if (
    spans.length > 0 && /[A-Za-z]{2,}/.test(t.slice(0, spans[0].start) + t.slice(spans[spans.length - 1].end))
  ) {
    return null;
  }
  return { answer: cleanValue(t), rule: "bare" };
}

// The answer stated in the final sentence: its last math span, else its last number. Never earlier sentences.
function finalSentenceRule(text: string): Extraction | null {
  let sentence = finalSentence(text);
  // A closing remark ("I hope this helps!") after the answer: the sentence before it states the answer.
  if (isClosingRemark(sentence)) sentence = previousSentence(text, sentence);
  if (statesNothing(sentence)) return null;
  const stated = sentenceAnswer(sentence);
  if (stated === null) {
    const bold = lastBoldValue(text);
    if (bold !== null) return { answer: cleanValue(bold), rule: "final_bold" };
    return remarkAfterAnswer(text, sentence);
  }
  return stated && { answer: cleanValue(stated.answer), rule: `final_sentence_${stated.how}` };
}

// A final sentence with no value at all (no math, no number) that comments on the one before it in the same
// paragraph ("The range is $[-\frac{\pi}{2}, \frac{\pi}{2}]$. This covers all steps …."): that sentence states the
// answer. Only a complete remark opening with "This", "These", "That" or "Such": "Then we …" or a cut-off
// sentence may be reasoning that goes on, and a paragraph break ends what the remark can look back to.
const REMARK = /^(?:This|These|That|Such)\s/;
function remarkAfterAnswer(text: string, sentence: string): Extraction | null {
  const t = text.trimEnd();
  if (!REMARK.test(sentence) || !/[.!]$/.test(t)) return null;
  const at = sentence === "" ? -1 : t.lastIndexOf(sentence);
  if (at <= 0 || t.slice(t.lastIndexOf("\n", at - 1) + 1, at).trim() === "") return null;
  const previous = previousSentence(text, sentence);
  if (previous === "" || statesNothing(previous)) return null;
  const stated = sentenceAnswer(previous);
  return stated && { answer: cleanValue(stated.answer), rule: `previous_sentence_${stated.how}` };
}

// Default mode: Minerva's "The final answer is …" after the last box, with reasoning between them (six words or
// more, counting "Final Answer: The"), states the answer; the boxes were intermediate results ("… = \boxed{255}
// So, after six months, he has $10,455. Final Answer: The final answer is $10,455$."). A marker right after the
// box only restates it.
function finalAnswerAfterBox(text: string): Extraction | null {
  const marker = lastMatch(text, /final answer is/gi);
  if (!marker) return null;
  const box = lastMatch(text, /\\(?:boxed|fbox)\b/g);
  if (!box || marker.index < box.index) return null;
  const between = text.slice(box.index, marker.index).replace(/\\[a-zA-Z]+/g, " ");
  if ((between.match(/[A-Za-z]{2,}/g) ?? []).length < 6) return null; // "Final Answer: The" are three
  const ex = finalAnswerIs(text.slice(marker.index), false);
  return ex?.answer ? { answer: ex.answer, rule: "final_answer_is_after_box" } : null;
}

/** One extraction rule: its name, whether strict mode (training rewards) runs it, and the finder. */
export interface ExtractionRule {
  name: string;
  strict: boolean;
  find(text: string, strict: boolean): Extraction | null;
}

/**
 * The extraction order. A non-empty box wins; an empty or unclosed box (often an echoed "put your answer in
 * \boxed{}") does not hide a later marker, and is the verdict only when no marker follows.
 */
export const EXTRACTION_RULES: readonly ExtractionRule[] = [
  { name: "boxed", strict: true, find: boxedRule },
  { name: "answer_line", strict: true, find: answerLine },
  { name: "final_answer_is", strict: true, find: finalAnswerIs },
  { name: "answer_is", strict: true, find: answerIs },
  { name: "other_markers", strict: false, find: otherMarkers },
  { name: "last_line_math", strict: false, find: lastLineMath },
  { name: "bare", strict: false, find: bareAnswer },
  { name: "final_sentence", strict: false, find: finalSentenceRule },
];

/**
 * Extract the answer from a model response, trying EXTRACTION_RULES in order (strict: the marker rules only).
 * Long text without a marker is never graded whole. Never throws.
 */
export function extractAnswer(response: string, options: { strict?: boolean } = {}): Extraction {
  const strict = options.strict === true;
  let text = stripThink(response);
  if (!strict) text = cutChatTail(text);
  if (text.length > EXTRACT_LIMITS.tailChars) text = text.slice(-EXTRACT_LIMITS.tailChars);
  let emptyBox: Extraction | null = null;
  let found: Extraction | null = null;
  for (const rule of EXTRACTION_RULES) {
    if (strict && !rule.strict) continue;
    // An empty box is the verdict when no marker follows (never a bare line or a sentence).
    if (rule.name === "last_line_math" && emptyBox) break;
    const ex = rule.find(text, strict);
    if (!ex) continue;
    if (rule.name === "boxed" && ex.answer === null) {
      emptyBox = ex;
      continue;
    }
    found = ex;
    break;
  }
  found ??= emptyBox;
  if (!strict && found?.answer && found.rule === "boxed") found = finalAnswerAfterBox(text) ?? found;
  if (!found) return { answer: null, rule: "no_answer" };
  if (found.answer !== null && found.answer.length > EXTRACT_LIMITS.answerChars) {
    return { answer: null, rule: `${found.rule}_too_long` };
  }
  return found;
}

/**
 * The reference answer: a gold may carry `\boxed{}` (use its content); a gold that is a written-out solution
 * (prose over 120 characters) without a box, its answer marker ("The final answer is $28\%$"); otherwise the
 * whole gold is the answer.
 */
export function extractGold(gold: string): string | null {
  const text = gold.length > EXTRACT_LIMITS.tailChars ? gold.slice(-EXTRACT_LIMITS.tailChars) : gold;
  const boxed = lastBoxed(text);
  if (boxed) {
    // One answer in several boxes (\boxed{2} and \boxed{5}) is their list "2, 5" (see goldBoxGroup).
    const group = boxed.answer === null ? [] : goldBoxGroup(text);
    return group.length > 1 ? group.join(", ") : boxed.answer;
  }
  if (text.length > EXTRACT_LIMITS.bareChars && isProse(text)) {
    for (const marker of [answerLine, finalAnswerIs, answerIs]) {
      const found = marker(text, false);
      if (found?.answer) return found.answer;
    }
  }
  const v = cleanValue(text);
  return v === "" ? null : v;
}
