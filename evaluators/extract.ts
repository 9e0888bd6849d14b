// Answer extraction from a full model response: which span is "the answer", and which rule found it. The rules
// form one ordered list (EXTRACTION_RULES); strict mode (training rewards) runs only the explicit markers.
// Every rule is linear in the response (the response is cut to its last 20 000 characters first).
import { finalSentence, isProse, mathSpans, sentenceAnswer } from "./prose.ts";

/** Caps on what extraction looks at: long responses are cut to their tail (answers come last). */
export const EXTRACT_LIMITS = { tailChars: 20_000, answerChars: 2_000, bareChars: 120 };

/**
 * The extracted answer (null when none) and the rule that fired, e.g. "boxed", "answer_line", "no_answer".
 * `boxes` (default mode, two or more boxes): every box's content in order; `finalBoxes`: the last box and the
 * boxes joined to it by "and", "or", commas or spacing only (a hedge such as `\boxed{3} or \boxed{4}`).
 */
export interface Extraction {
  answer: string | null;
  rule: string;
  boxes?: string[];
  finalBoxes?: string[];
}

/** Index of the brace closing the `{` at `open` (LaTeX escapes `\{`/`\}` do not count), or -1 if unbalanced. */
export function matchBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Drop reasoning: text after the last `</think>`; an unclosed `<think>` means the answer never came. */
export function stripThink(text: string): string {
  const close = text.lastIndexOf("</think>");
  if (close >= 0) return text.slice(close + "</think>".length);
  const open = text.indexOf("<think>");
  return open >= 0 ? text.slice(0, open) : text;
}

interface Box {
  start: number;
  end: number;
  content: string | null; // null: empty or never closed
  unclosed: boolean;
  bare: boolean;
}

// Every \boxed{…} / \fbox{…} / "\boxed x", left to right. A box's inside is skipped (a box in a box is part of
// it) and an unclosed box ends the scan (all that follows is inside it), so this is linear.
function allBoxes(text: string): Box[] {
  const re = /\\(?:boxed|fbox)\b/g;
  const boxes: Box[] = [];
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    let i = m.index + m[0].length;
    while (text[i] === " ") i++;
    if (text[i] === "{") {
      const close = matchBrace(text, i);
      if (close < 0) {
        boxes.push({ start: m.index, end: text.length, content: null, unclosed: true, bare: false });
        break;
      }
      const inner = text.slice(i + 1, close).trim();
      boxes.push({ start: m.index, end: close + 1, content: inner || null, unclosed: false, bare: false });
      re.lastIndex = close + 1;
    } else {
      const bare = /^[^\s$]+/.exec(text.slice(i, i + EXTRACT_LIMITS.answerChars + 1));
      const ok = bare !== null && i > m.index + m[0].length;
      boxes.push({
        start: m.index,
        end: ok ? i + bare![0].length : i,
        content: ok ? bare![0] : null,
        unclosed: false,
        bare: true,
      });
    }
  }
  return boxes;
}

// The last \boxed{…} / \fbox{…} / "\boxed x" (the last occurrence, even inside another box); "unclosed" when
// it never closes (a truncated answer).
function lastBoxed(text: string): Extraction | null {
  const last = lastMatch(text, /\\(?:boxed|fbox)\b/g);
  if (!last) return null;
  let i = last.index + last[0].length;
  const after = i;
  while (text[i] === " ") i++;
  if (text[i] === "{") {
    const close = matchBrace(text, i);
    if (close < 0) return { answer: null, rule: "boxed_unclosed" };
    const inner = text.slice(i + 1, close).trim();
    return inner === "" ? { answer: null, rule: "boxed_empty" } : { answer: inner, rule: "boxed" };
  }
  const bare = /^[^\s$]+/.exec(text.slice(i, i + EXTRACT_LIMITS.answerChars + 1));
  return bare && i > after ? { answer: bare[0], rule: "boxed_bare" } : { answer: null, rule: "boxed_empty" };
}

// Text that joins two boxes into one stated answer ("and", "or", a comma, spacing); adjacent boxes are not joined.
const CONNECTOR = /^(?:[\s,;.$&]|\\quad|\\qquad|\\text\{\s*(?:and|or)\s*\}|and|or)+$/i;

// The last box as the answer; in default mode with two or more boxes, also every box and the final group.
function boxedRule(text: string, strict: boolean): Extraction | null {
  const found = lastBoxed(text);
  if (!found || found.answer === null || strict) return found;
  const boxes = allBoxes(text);
  const filled = boxes.filter((b) => b.content !== null);
  if (filled.length < 2) return found;
  const group = [boxes[boxes.length - 1]];
  for (let k = boxes.length - 2; k >= 0; k--) {
    if (boxes[k].content === null || !CONNECTOR.test(text.slice(boxes[k].end, group[0].start))) break;
    group.unshift(boxes[k]);
  }
  return { ...found, boxes: filled.map((b) => b.content!), finalBoxes: group.map((b) => b.content ?? "") };
}

// Strip one layer of math delimiters and trailing punctuation from a marker's captured value.
function cleanValue(value: string): string {
  let v = value.trim();
  for (;;) {
    const before = v;
    v = v.replace(/[.。]\s*$/, "").replace(/^`+([^`]*)`+$/, "$1").trim();
    v = v.replace(/^(?:the\s+)?(?:final\s+)?answer\s+is\s*:?\s*/i, ""); // "Answer: The answer is 5"
    const m = /^\$\$([\s\S]*)\$\$$/.exec(v) ?? /^\$([\s\S]*)\$$/.exec(v) ?? /^\\\(([\s\S]*)\\\)$/.exec(v) ??
      /^\\\[([\s\S]*)\\\]$/.exec(v);
    if (m) v = m[1].trim();
    if (v === before) return v;
  }
}

function lastMatch(text: string, re: RegExp): RegExpExecArray | null {
  let last: RegExpExecArray | null = null;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) last = m;
  return last;
}

function lineEnd(text: string, from: number): number {
  const nl = text.indexOf("\n", from);
  return nl < 0 ? text.length : nl;
}

// The last non-overlapping match of a marker regex such as /final answer is[:\s]*(.+?)…$/gim, computed in linear
// time: `capture(k, start)` returns the capture [k, end) and where the match ends, or null when this occurrence
// does not match. [:\s]* is greedy and crosses newlines; at the end of the text it gives back its last
// character that is not a newline, which then is the (blank) capture, as the regex engine does.
function lastMarkerValue(
  text: string,
  marker: RegExp,
  capture: (k: number) => { end: number; next: number } | null,
): string | null {
  let found: string | null = null;
  let from = 0;
  for (;;) {
    marker.lastIndex = from;
    const m = marker.exec(text);
    if (!m) return found;
    const after = m.index + m[0].length;
    let k = after;
    while (k < text.length && /[:\s]/.test(text[k])) k++;
    if (k === text.length) {
      let j = k - 1;
      while (j >= after && text[j] === "\n") j--;
      if (j < after) {
        from = m.index + 1;
        continue;
      }
      found = text[j];
      from = text.length;
      continue;
    }
    const c = capture(k);
    if (!c) {
      from = m.index + 1;
      continue;
    }
    found = text.slice(k, c.end);
    from = Math.max(c.next, m.index + 1);
  }
}

const HOPE = /I hope it is correct/i;
const HOPE_TAIL = /I hope it is correct\.?$/i;

// Minerva's "final answer is X. I hope it is correct.": the rest of the line, the suffix and trailing spaces
// removed (the lazy capture of /final answer is[:\s]*([^\n]+?)(?:\.?\s*I hope it is correct\.?)?\s*$/gim).
// In default mode the value also stops at that suffix anywhere or at the end of its sentence, so a following
// turn or token is not read.
function finalAnswerIs(text: string, strict: boolean): Extraction | null {
  const raw = lastMarkerValue(text, /final answer is/gi, (k) => {
    const end = lineEnd(text, k);
    let t = end;
    while (t > k && /\s/.test(text[t - 1])) t--;
    let stop = t;
    const line = text.slice(k, t);
    const tail = HOPE_TAIL.exec(line);
    if (tail) {
      let p = k + tail.index;
      while (p > k && /\s/.test(text[p - 1])) p--;
      if (p > k && text[p - 1] === ".") p--;
      p = Math.max(p, k + 1);
      if (p <= k + tail.index) stop = p;
    }
    return { end: stop, next: end };
  });
  if (raw === null) return null;
  let value = raw;
  if (!strict) {
    const hope = value.search(HOPE);
    if (hope >= 0) value = value.slice(0, hope);
    value = plainTail(value);
  }
  return valueOrEmpty(value, "final_answer_is", strict);
}

// A value cut at a chat-template token or at the end of its sentence (". " before a capital or a "<").
function plainTail(value: string): string {
  const token = value.search(/<\|[^|<>\s]{1,40}\|>|<\/s>/);
  if (token >= 0) value = value.slice(0, token);
  const masked = maskMath(value);
  const end = masked.search(/\.\s+(?=[A-Z<])/);
  return end >= 0 ? value.slice(0, end) : value;
}

// The text with each math span blanked out, so searches ignore what is inside math; same length.
function maskMath(text: string): string {
  let out = "";
  let at = 0;
  for (const s of mathSpans(text)) {
    out += text.slice(at, s.start) + " ".repeat(s.end - s.start);
    at = s.end;
  }
  return out + text.slice(at);
}

// "the answer is 3, since …": the sentence ends at ". ", a clause such as ", since" / " because", or the line
// end (/the answer is[:\s]*([^\n]+?)(?:\.\s|,?\s+(?:since|because|as|which)\s|$)/gim). The lookbehind starts a
// clause only at the beginning of a whitespace run, which keeps the scan linear.
function answerIs(text: string, strict: boolean): Extraction | null {
  const stop = /\.\s|,?(?<!\s)\s+(?:since|because|as|which)\s|\n/gi;
  const raw = lastMarkerValue(text, /the answer is/gi, (k) => {
    stop.lastIndex = k + 1;
    const m = stop.exec(text);
    if (!m) return { end: text.length, next: text.length };
    return { end: m.index, next: m[0] === "\n" ? m.index : m.index + m[0].length };
  });
  return raw === null ? null : valueOrEmpty(raw, "answer_is", strict);
}

// DAPO's "Answer: …" at the start of a line.
function answerLine(text: string, strict: boolean): Extraction | null {
  const m = lastMatch(text, /(?:^|\n)[ \t*#]*answer[ \t*]*:[ \t]*([^\n]+)/gi);
  return m ? valueOrEmpty(m[1], "answer_line", strict) : null;
}

// Marker conventions beyond the three classic ones (default mode), the last one in the text wins:
// "**Answer:** …" or "Final answer: …" inside a line, "Answer \( 7/2 \)" / "answer $$12$$" (marker then math),
// GSM8K's "A: 18" line and "#### 18".
function otherMarkers(text: string): Extraction | null {
  let best: { at: number; ex: Extraction } | null = null;
  const offer = (at: number, ex: Extraction | null) => {
    if (ex && (best === null || at > best.at)) best = { at, ex };
  };
  // "Answer:" capitalised or "final answer:"; a lower-case "check the answer: 5+3 = 8" is prose, not a marker.
  const colon = lastMatch(text, /(?:\b[Ff]inal [Aa]nswer|\bAnswer)\s*(?:\*+\s*)?:/g);
  if (colon) {
    const k = colon.index + colon[0].length;
    offer(colon.index, valueOrEmpty(plainTail(text.slice(k, lineEnd(text, k))), "answer_marker", false));
  }
  const mathAfter = lastMatch(text, /\banswer\s*(?:is\s*)?(?=\$|\\\(|\\\[)/gi);
  if (mathAfter) {
    const k = mathAfter.index + mathAfter[0].length;
    const line = text.slice(k, lineEnd(text, k));
    const span = mathSpans(line)[0];
    // Only when the math ends the line ("Answer \( 7/2 \)."), not "the answer \(x\) must satisfy …".
    if (span && span.start === 0 && span.content !== "" && /^[\s.!*]*$/.test(line.slice(span.end))) {
      offer(mathAfter.index, { answer: span.content, rule: "answer_math" });
    }
  }
  const gsmA = lastMatch(text, /(?:^|\n)[ \t]*A:[ \t]*([^\n]+)/g);
  if (gsmA) offer(gsmA.index, valueOrEmpty(plainTail(gsmA[1]), "gsm8k_a", false));
  const hashes = lastMatch(text, /(?:^|\n)[ \t]*####[ \t]*(\$?-?[\d.,]+)[ \t]*(?=\n|$)/g);
  if (hashes) offer(hashes.index, valueOrEmpty(hashes[1], "gsm8k_hashes", false));
  return (best as { at: number; ex: Extraction } | null)?.ex ?? null;
}

// A marker's value; in default mode a value that is prose ("she received $7.00") yields the answer it states.
function valueOrEmpty(raw: string, rule: string, strict: boolean): Extraction {
  const v = cleanValue(raw.replace(/\*\*/g, ""));
  if (v === "") return { answer: null, rule: `${rule}_empty` };
  if (!strict && isProse(v)) {
    const stated = sentenceAnswer(v);
    if (stated) return { answer: cleanValue(stated.answer), rule: `${rule}_prose` };
  }
  return { answer: v, rule };
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
  const words = t.replace(/\\[a-zA-Z]+(\{[^}]*\})?/g, " ").match(/[A-Za-z]{2,}/g) ?? [];
  if (words.length >= 3) return null;
  return { answer: cleanValue(t), rule: "bare" };
}

// The answer stated in the final sentence: its last math span, else its last number. Never earlier sentences.
function finalSentenceRule(text: string): Extraction | null {
  const stated = sentenceAnswer(finalSentence(text));
  return stated && { answer: cleanValue(stated.answer), rule: `final_sentence_${stated.how}` };
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
  { name: "boxed", strict: true, find: (t, strict) => boxedRule(t, strict) },
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
  if (!found) return { answer: null, rule: "no_answer" };
  if (found.answer !== null && found.answer.length > EXTRACT_LIMITS.answerChars) {
    return { answer: null, rule: `${found.rule}_too_long` };
  }
  return found;
}

/** The reference answer: a gold may carry `\boxed{}` (use its content); otherwise the whole gold is the answer. */
export function extractGold(gold: string): string | null {
  const text = gold.length > EXTRACT_LIMITS.tailChars ? gold.slice(-EXTRACT_LIMITS.tailChars) : gold;
  const boxed = lastBoxed(text);
  if (boxed) return boxed.answer;
  const v = cleanValue(text);
  return v === "" ? null : v;
}
