// Answer markers: DAPO's "Answer: …" line, Minerva's "final answer is …", "the answer is …" (strict mode too,
// exactly as the original regexes read them, but in linear time), and the other conventions of default mode
// ("**Answer:**", "Final answer:", "Answer \( 7/2 \)", GSM8K's "A: 18" and "#### 18").
import { CHAT_TOKEN, isProse, maskMath, sentenceAnswer } from "./prose.ts";
import { parseUnit } from "./units.ts";

/** Caps on what extraction looks at: long responses are cut to their tail (answers come last). */
export const EXTRACT_LIMITS = { tailChars: 20_000, answerChars: 2_000, bareChars: 120 };

/**
 * The extracted answer (null when none) and the rule that fired, e.g. "boxed", "answer_line", "no_answer".
 * `boxes` (two or more boxes, both modes): every box's content in order; `finalBoxes`: the last box and the
 * boxes joined to it by "and", "or", commas or spacing only (a hedge such as `\boxed{3} or \boxed{4}`).
 */
export interface Extraction {
  answer: string | null;
  rule: string;
  boxes?: string[];
  finalBoxes?: string[];
}

// Trailing periods and spaces removed in one pass (removing one ". " per round made ". . . …" quadratic).
function trimPeriods(v: string): string {
  let end = v.length;
  while (end > 0 && /[.。\s]/.test(v[end - 1])) end--;
  return v.slice(0, end).trim();
}

// `code` quotes around a value, when its inside has no backtick.
function unquote(v: string): string {
  if (!v.startsWith("`") || !v.endsWith("`")) return v;
  let a = 0;
  let b = v.length;
  while (a < b && v[a] === "`") a++;
  while (b > a && v[b - 1] === "`") b--;
  if (a === b) return v.length >= 2 ? "" : v; // only backticks
  return !v.slice(a, b).includes("`") ? v.slice(a, b) : v;
}

/** Strip one layer of math delimiters and trailing punctuation from a marker's captured value. */
export function cleanValue(value: string): string {
  let v = value.trim();
  for (;;) {
    const before = v;
    v = unquote(trimPeriods(v)).trim();
    v = v.replace(/^(?:the\s+)?(?:final\s+)?answer\s+is\s*:?\s*/i, ""); // "Answer: The answer is 5"
    const m = /^\$\$([\s\S]*)\$\$$/.exec(v) ?? /^\$([\s\S]*)\$$/.exec(v) ?? /^\\\(([\s\S]*)\\\)$/.exec(v) ??
      /^\\\[([\s\S]*)\\\]$/.exec(v);
    if (m) v = m[1].trim();
    if (v === before) return v;
  }
}

/** The last match of a global regex, or null. */
export function lastMatch(text: string, re: RegExp): RegExpExecArray | null {
  return [...text.matchAll(re)].at(-1) ?? null;
}

function lineEnd(text: string, from: number): number {
  const nl = text.indexOf("\n", from);
  return nl < 0 ? text.length : nl;
}

// The last non-overlapping match of a marker regex such as /final answer is[:\s]*(.+?)…$/gim, computed in linear
// time: `capture(k)` returns the capture [k, end) and where the match ends, or null when this occurrence
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

/**
 * Minerva's "final answer is X. I hope it is correct.": the rest of the line, the suffix and trailing spaces
 * removed (the lazy capture of /final answer is[:\s]*([^\n]+?)(?:\.?\s*I hope it is correct\.?)?\s*$/gim).
 * In default mode the value also stops at that suffix anywhere or at the end of its sentence, so a following
 * turn or token is not read.
 */
export function finalAnswerIs(text: string, strict: boolean): Extraction | null {
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
  const token = value.search(CHAT_TOKEN);
  if (token >= 0) value = value.slice(0, token);
  const masked = maskMath(value);
  const end = masked.search(/\.\s+(?=[A-Z<])/);
  return end >= 0 ? value.slice(0, end) : value;
}

/**
 * "the answer is 3, since …": the sentence ends at ". ", a clause such as ", since" / " because", or the line
 * end (/the answer is[:\s]*([^\n]+?)(?:\.\s|,?\s+(?:since|because|as|which)\s|$)/gim). The lookbehind starts a
 * clause only at the beginning of a whitespace run, which keeps the scan linear.
 */
export function answerIs(text: string, strict: boolean): Extraction | null {
  const stop = /\.\s|,?(?<!\s)\s+(?:since|because|as|which)\s|\n/gi;
  const raw = lastMarkerValue(text, /the answer is/gi, (k) => {
    stop.lastIndex = k + 1;
    const m = stop.exec(text);
    if (!m) return { end: text.length, next: text.length };
    return { end: m.index, next: m[0] === "\n" ? m.index : m.index + m[0].length };
  });
  return raw === null ? null : valueOrEmpty(raw, "answer_is", strict);
}

/** DAPO's "Answer: …" at the start of a line. */
export function answerLine(text: string, strict: boolean): Extraction | null {
  const m = lastMatch(text, /(?:^|\n)[ \t*#]*answer[ \t*]*:[ \t]*([^\n]+)/gi);
  return m ? valueOrEmpty(m[1], "answer_line", strict) : null;
}

// One math span at the start of a text: display $$…$$ and \[…\] (may span lines), inline $…$ and \(…\) (one line).
const MARKER_MATH = /^(?:\$\$([\s\S]*?)\$\$|\$([^$\n]*)\$|\\\(([^\n]*?)\\\)|\\\[([\s\S]*?)\\\])/;

/**
 * Marker conventions beyond the three classic ones (default mode), the last one in the text wins:
 * "**Answer:** …" or "Final answer: …" inside a line, "Answer \( 7/2 \)" / "answer $$12$$" (marker then math),
 * GSM8K's "A: 18" line and "#### 18".
 */
export function otherMarkers(text: string): Extraction | null {
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
    // The math right after the marker, spaced ("Answer $ 9 $") or over lines ("Answer \[\n 9 \n\]"); only when
    // it ends its line ("Answer \( 7/2 \)."), not "the answer \(x\) must satisfy …".
    const span = MARKER_MATH.exec(text.slice(k, k + 2_000));
    const content = span ? (span[1] ?? span[2] ?? span[3] ?? span[4]).trim() : "";
    const rest = span ? text.slice(k + span[0].length, lineEnd(text, k + span[0].length)) : "";
    if (content !== "" && /^[\s.!*]*$/.test(rest)) {
      offer(mathAfter.index, { answer: content, rule: "answer_math" });
    }
  }
  const gsmA = lastMatch(text, /(?:^|\n)[ \t]*A:[ \t]*([^\n]+)/g);
  if (gsmA) offer(gsmA.index, valueOrEmpty(plainTail(gsmA[1]), "gsm8k_a", false));
  const hashes = lastMatch(text, /(?:^|\n)[ \t]*####[ \t]*(\$?-?[\d.,]+)[ \t]*(?=\n|$)/g);
  if (hashes) offer(hashes.index, valueOrEmpty(hashes[1], "gsm8k_hashes", false));
  return (best as { at: number; ex: Extraction } | null)?.ex ?? null;
}

// A value, then a short clause of plain words: "42 apples in total", "12, which is the number of pens",
// "$\frac{3}{4}$ of the cake": the value alone is the answer. The clause holds no number or math; with a word
// that changes the value or hedges ("5 or 6", "3 million", "10 more than x", "2 times") the whole text is.
const VALUE_THEN_CLAUSE =
  /^(\$[^$]+\$|\\\([^()]*\\\)|-?\d[\d,]*(?:\.\d+)?(?:\s*\\?%)?)(?:\s*[,;(—–-]\s*|\s+)((?:[A-Za-z']+[\s,)]*){1,8})$/;
const CHANGES_VALUE =
  /\b(?:or|and|not|no|nor|maybe|perhaps|either|probably|possibly|approximately|about|around|roughly|nearly|almost|wait|but|unless|except|plus|minus|times|over|under|divided|squared|cubed|root|roots|factorial|hundreds?|thousands?|millions?|billions?|trillions?|dozens?|percent|half|thirds?|quarters?|more|less|than|least|most|between|to|if|pi|e|i)\b/i;
function valueThenClause(v: string): string | null {
  const m = VALUE_THEN_CLAUSE.exec(v);
  // Words, not symbols: "2 k" or "3 ab" is a product (every word has two letters or is "a", one has three).
  const words = m?.[2].trim().split(/[\s,)]+/) ?? [];
  if (!m || !words.some((w) => w.length >= 3) || words.some((w) => w.length < 2 && w !== "a")) return null;
  if (CHANGES_VALUE.test(m[2])) return v; // the whole text is graded (and is no value)
  // A unit is part of the value: "5 meters long" is 5 meters (normalisation reads the unit), never a bare 5 that
  // would be read in the gold's unit.
  let unit = 0;
  for (let k = 1; k <= words.length; k++) if (parseUnit(words.slice(0, k).join(" ")) !== null) unit = k;
  return unit === 0 ? m[1] : `${m[1]} ${words.slice(0, unit).join(" ")}`;
}

// A marker's value. A value followed by a short clause of words is that value, and with a word that changes it
// the whole text (valueThenClause, both modes); otherwise, in default mode, a value that is prose ("she received
// $7.00") yields the answer it states.
function valueOrEmpty(raw: string, rule: string, strict: boolean): Extraction {
  const v = cleanValue(raw.replace(/\*\*/g, ""));
  if (v === "") return { answer: null, rule: `${rule}_empty` };
  const lead = valueThenClause(v);
  if (lead !== null && lead !== v) return { answer: cleanValue(lead), rule: `${rule}_clause` };
  if (lead === v) return { answer: v, rule };
  if (!strict && isProse(v)) {
    const stated = sentenceAnswer(v);
    if (stated) return { answer: cleanValue(stated.answer), rule: `${rule}_prose` };
  }
  return { answer: v, rule };
}
