// Answer extraction from a full model response: which span is "the answer", and which rule found it.

/** Caps on what extraction looks at: long responses are cut to their tail (answers come last). */
const EXTRACT_LIMITS = { tailChars: 20_000, answerChars: 2_000, bareChars: 120 };

/** The extracted answer (null when none) and the rule that fired, e.g. "boxed", "answer_line", "no_answer". */
export interface Extraction {
  answer: string | null;
  rule: string;
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
function stripThink(text: string): string {
  const close = text.lastIndexOf("</think>");
  if (close >= 0) return text.slice(close + "</think>".length);
  const open = text.indexOf("<think>");
  return open >= 0 ? text.slice(0, open) : text;
}

// The last \boxed{…} / \fbox{…} / "\boxed x"; "unclosed" when the last box never closes (a truncated answer).
function lastBoxed(text: string): Extraction | null {
  const re = /\\(?:boxed|fbox)\b/g;
  let last = -1;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) last = m.index + m[0].length;
  if (last < 0) return null;
  let i = last;
  while (text[i] === " ") i++;
  if (text[i] === "{") {
    const close = matchBrace(text, i);
    if (close < 0) return { answer: null, rule: "boxed_unclosed" };
    const inner = text.slice(i + 1, close).trim();
    return inner === "" ? { answer: null, rule: "boxed_empty" } : { answer: inner, rule: "boxed" };
  }
  const bare = /^[^\s$]+/.exec(text.slice(i));
  return bare && i > last ? { answer: bare[0], rule: "boxed_bare" } : { answer: null, rule: "boxed_empty" };
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

// DAPO's "Answer: …" line, Minerva's "final answer is …", and "the answer is …" (in that priority).
function markerLine(text: string): Extraction | null {
  const answerLine = lastMatch(text, /(?:^|\n)[ \t*#]*answer[ \t*]*:[ \t]*([^\n]+)/gi);
  if (answerLine) return valueOrEmpty(answerLine[1], "answer_line");
  const finalIs = lastMatch(text, /final answer is[:\s]*([^\n]+?)(?:\.?\s*I hope it is correct\.?)?\s*$/gim);
  if (finalIs) return valueOrEmpty(finalIs[1], "final_answer_is");
  // "the answer is 3, since …": the sentence ends at ". " or a clause such as ", since" / " because".
  const answerIs = lastMatch(
    text,
    /the answer is[:\s]*([^\n]+?)(?:\.\s|,?\s+(?:since|because|as|which)\s|$)/gim,
  );
  if (answerIs) return valueOrEmpty(answerIs[1], "answer_is");
  return null;
}

function valueOrEmpty(raw: string, rule: string): Extraction {
  const v = cleanValue(raw.replace(/\*\*/g, ""));
  return v === "" ? { answer: null, rule: `${rule}_empty` } : { answer: v, rule };
}

// A final line that is nothing but one math span, e.g. "$$x = 3$$" or "\[ \frac12 \]".
function lastLineMath(text: string): Extraction | null {
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1].trim();
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

/**
 * Extract the answer from a model response. Order: last `\boxed{}`/`\fbox{}`, then an `Answer:` line,
 * "final answer is", "the answer is"; unless `strict`, also a final line that is one math span, or a short
 * bare answer. Long text without a marker is `no_answer` (never graded whole). Never throws.
 */
export function extractAnswer(response: string, options: { strict?: boolean } = {}): Extraction {
  let text = stripThink(response);
  if (text.length > EXTRACT_LIMITS.tailChars) text = text.slice(-EXTRACT_LIMITS.tailChars);
  // An empty or unclosed box (often an echo of "put your answer in \boxed{}") does not hide a later marker.
  const boxed = lastBoxed(text);
  const found = boxed?.answer ? boxed : markerLine(text) ?? boxed ??
    (options.strict ? null : lastLineMath(text) ?? bareAnswer(text));
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
