// Answers stated in prose: math spans of a text, its final sentence, and the answer a sentence states (its last
// math span, else its last number). Every scan here is linear in the text (no backtracking over long runs).

/** A math span of a text: `$…$`, `$$…$$`, `\(…\)`, `\[…\]` or a bare matrix environment; [start, end) offsets. */
export interface MathSpan {
  start: number;
  end: number;
  content: string;
}

const OPENERS: [string, string][] = [["$$", "$$"], ["\\(", "\\)"], ["\\[", "\\]"], ["$", "$"]];
const MATRIX = /\\begin\{([pbvBV]?matrix|array)\}/y;

// A `$…$` span holds math only if it looks like math: "$5 + $19" (currency, content "5 + ") is not a span.
function looksLikeMath(content: string): boolean {
  if (content.trim() === "" || /^\s|\s$/.test(content)) return false;
  return !/(?:^|[^\\a-zA-Z])[a-zA-Z]{4,}/.test(content.replace(/\\[a-zA-Z]+\s*(\{[^{}]*\})?/g, " "));
}

/** The math spans of `text`, left to right, in linear time (an opener that never closes is skipped once). */
export function mathSpans(text: string): MathSpan[] {
  const spans: MathSpan[] = [];
  const neverCloses = new Set<string>();
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch !== "$" && ch !== "\\") {
      i++;
      continue;
    }
    if (ch === "\\") {
      MATRIX.lastIndex = i;
      const m = MATRIX.exec(text);
      if (m) {
        const endTag = `\\end{${m[1]}}`;
        const close = neverCloses.has(endTag) ? -1 : text.indexOf(endTag, i);
        if (close < 0) neverCloses.add(endTag);
        else {
          spans.push({ start: i, end: close + endTag.length, content: text.slice(i, close + endTag.length) });
          i = close + endTag.length;
          continue;
        }
      }
    }
    const pair = OPENERS.find(([open]) => text.startsWith(open, i));
    if (!pair || (ch === "\\" && text[i - 1] === "\\")) {
      i += ch === "\\" ? 2 : 1;
      continue;
    }
    const [open, closeTok] = pair;
    const from = i + open.length;
    const close = neverCloses.has(closeTok + open) ? -1 : text.indexOf(closeTok, from);
    if (close < 0) {
      neverCloses.add(closeTok + open);
      i = from;
      continue;
    }
    const content = text.slice(from, close);
    if (open === "$" && (content.includes("\n") || !looksLikeMath(content))) {
      i = from; // a currency sign, not a delimiter
      continue;
    }
    spans.push({ start: i, end: close + closeTok.length, content: content.trim() });
    i = close + closeTok.length;
  }
  return spans;
}

/** A chat-template token: "<|im_end|>", "<|im_start|>", "</s>". */
export const CHAT_TOKEN = /<\|[^|<>\s]{1,40}\|>|<\/s>/g;

// Chat-template tokens and markdown emphasis carry no answer ("<|im_end|>", "</s>", "**12 tomatoes**").
function plain(text: string): string {
  return text.replace(CHAT_TOKEN, "\n").replace(/\*\*|__/g, "");
}

/** The final sentence of a text: the last sentence of its last non-empty line (math spans never split it). */
export function finalSentence(text: string): string {
  const line = plain(text).trimEnd().split("\n").findLast((l) => l.trim() !== "")?.trim() ?? "";
  // Mask math so periods inside it ("$7.50$", "\[ x. \]") do not end a sentence, then cut after the last end.
  const masked = maskMath(line, (s) => {
    // Display math that ends its sentence inside ("$$ … \ge \frac{2}{1}.$$ Therefore …") ends it here too.
    const display = line.startsWith("$$", s.start) || line.startsWith("\\[", s.start);
    const stop = display && /[.!?]$/.test(s.content);
    return "M".repeat(s.end - s.start - (stop ? 1 : 0)) + (stop ? "." : "");
  });
  let bodyEnd = masked.length; // trailing spaces and closing punctuation, trimmed without a backtracking regex
  while (bodyEnd > 0 && /[\s.!?:;"')\]]/.test(masked[bodyEnd - 1])) bodyEnd--;
  const body = masked.slice(0, bodyEnd);
  let cut = 0;
  for (const m of body.matchAll(/[.!?]\s+/g)) cut = m.index + m[0].length;
  return line.slice(cut, body.length).trim();
}

const NUMBER = /-?\d+(?:,\d{3})*(?:\.\d+)?(?:\/\d+)?/g;
const ENDS_IN_VALUE = /\b(?:is|are|equals|was)\s+(-?\d+(?:,\d{3})*(?:\.\d+)?)\s*$/;

/**
 * The last bold value (`**15**`, `**$x = 3$**`) in the last three lines of a text, for a final sentence that
 * states nothing after it ("The degree is **15**. This matches the leading term."); null when there is none.
 */
export function lastBoldValue(text: string): string | null {
  const lines = text.trimEnd().split("\n").filter((l) => l.trim() !== "");
  const tail = lines.slice(-3).join("\n");
  let found: string | null = null;
  for (const m of tail.matchAll(/\*\*([^*\n]{1,60})\*\*/g)) {
    const v = m[1].trim().replace(/^\$+|\$+$/g, "").replace(/[.:]$/, "").trim();
    if (/\d/.test(v) && !isProse(v) && !/^\(?\d+[.)]$/.test(v)) found = v;
  }
  return found;
}

/** The sentence before `last` (the final sentence of `text`), for when the final one is a closing remark. */
export function previousSentence(text: string, last: string): string {
  const t = plain(text).trimEnd();
  const at = last === "" ? -1 : t.lastIndexOf(last);
  return at > 0 ? finalSentence(t.slice(0, at)) : "";
}

/** The text with each math span replaced by `mark(span)` (default: as many spaces, so offsets are kept). */
export function maskMath(text: string, mark = (s: MathSpan) => " ".repeat(s.end - s.start)): string {
  let out = "";
  let at = 0;
  for (const s of mathSpans(text)) {
    out += text.slice(at, s.start) + mark(s);
    at = s.end;
  }
  return out + text.slice(at);
}

const CLOSING = /\b(?:hope|helps?|let me know|questions?|good luck|enjoy|thanks?|feel free|happy to)\b/i;
/** A closing remark ("I hope this helps!", "Let me know if you have questions") that states no value. */
export function isClosingRemark(sentence: string): boolean {
  return CLOSING.test(sentence) && sentenceAnswer(sentence) === null;
}

/**
 * Does a sentence state no answer even though it holds values: a negated statement ("x = 14 and y = 15 is not
 * a solution") or a truncated expression ending in an operator ("… + a_{10}) +").
 */
export function statesNothing(sentence: string): boolean {
  // The negation must follow the last value: "x = 15 is not a solution" states nothing, while "the number is
  // not 10, it is 1000" states 1000 (math spans count as values: "§").
  const prose = maskMath(sentence, () => "§");
  let lastValue = 0;
  for (const m of prose.matchAll(/[\d§]/g)) lastValue = m.index! + 1;
  const negated = /\b(?:not|never|neither|nor|cannot)\b|n't\b/i.test(prose.slice(lastValue));
  const truncated = /(?:[+\-*/=^_([{,]|\\(?:cdot|times|frac|sqrt|left))\s*$/.test(sentence.trim());
  return negated || truncated;
}

// Several values stated for one name, "x = 5 and x = -2" (math spans or plain prose), as the list "5, -2". With
// math spans, the final run of "name = value" spans joined only by commas, "and" or "or" is read ("the values
// of $x$ for which $f(x) = g(x)$ are $x = 5$ and $x = -2$"); a span before the run names the question.
const SPAN_PAIR = /^([a-zA-Z])\s*=\s*([^=<>]+)$/;
const PROSE_PAIR = /(?<![\w^_])([a-zA-Z])\s*=\s*([-−]?\d+(?:\.\d+)?(?:\/\d+)?)/g;
function sameNameValues(sentence: string): string | null {
  const spans = mathSpans(sentence);
  const pairs = spans.length > 1
    ? finalRun(sentence, spans).map((s) => SPAN_PAIR.exec(s.content))
    : [...maskMath(sentence, () => " ").matchAll(PROSE_PAIR)];
  if (pairs.length < 2 || pairs.some((m) => m === null)) return null;
  const names = new Set(pairs.map((m) => m![1]));
  return names.size === 1 ? pairs.map((m) => m![2].trim()).join(", ") : null;
}

// The last spans of a sentence that are "name = value" and joined by nothing but commas, "and" or "or".
function finalRun(sentence: string, spans: MathSpan[]): MathSpan[] {
  const isPair = (sp: MathSpan) => SPAN_PAIR.test(sp.content);
  let k = spans.length - 1;
  if (k < 0 || !isPair(spans[k])) return spans;
  while (k > 0 && isPair(spans[k - 1]) && JOIN.test(sentence.slice(spans[k - 1].end, spans[k].start))) k--;
  return spans.slice(k);
}
const JOIN = /^\s*(?:,\s*)?(?:(?:and|or)\s+)?$/;

// A list whose last member has its own span, "$-1, 0,$ and $1$": the earlier span ends in a comma inside the math
// and only "and" separates the two, so the list is "-1, 0, 1" (the comma says the list goes on).
function splitList(sentence: string, spans: MathSpan[]): string | null {
  if (spans.length < 2) return null;
  const [a, b] = spans.slice(-2);
  if (!/,$/.test(a.content) || !/^\s*and\s+$/.test(sentence.slice(a.end, b.start))) return null;
  return /\d/.test(b.content) ? `${a.content.slice(0, -1).trim()}, ${b.content}` : null;
}

// A list marker "(2)" or a leading "2." / "2)" numbers an item; it is not a stated value.
function isListMarker(sentence: string, at: number, len: number): boolean {
  const before = sentence.slice(0, at).trimEnd();
  const after = sentence[at + len] ?? "";
  // The final sentence arrives with its closing ")" trimmed: "(2)" as "(2".
  const closed = after === ")" || at + len === sentence.length;
  return (sentence[at - 1] === "(" && closed) || (before === "" && (after === "." || after === ")"));
}

/**
 * The answer a sentence states: several values for one name as a list, its last math span (unless that span
 * is a bare name followed by a number), else its last number (currency and thousands separators
 * dropped by the normaliser), with the rule that found it ("math" / "number"); null when it has neither.
 */
export function sentenceAnswer(sentence: string): { answer: string; how: "math" | "number" } | null {
  const several = sameNameValues(sentence);
  if (several !== null) return { answer: several, how: "math" };
  const spans = mathSpans(sentence);
  const span = spans.length > 0 ? spans[spans.length - 1] : null;
  const split = splitList(sentence, spans);
  if (split !== null) return { answer: split, how: "math" };
  // A sentence that ends "… is 15" states 15, even after a span with digits ("the degree of $x^8 \cdot x^5$ is 15",
  // "the 20th digit of $\frac{2}{9}$ is **6**").
  const tail = span === null ? null : ENDS_IN_VALUE.exec(sentence.slice(span.end));
  if (tail) return { answer: tail[1], how: "number" };
  // A last span that holds no value (a name: "the largest $n$ is 34") gives way to a number after it.
  if (span !== null && /\d/.test(span.content)) return { answer: span.content, how: "math" };
  let last: string | null = null;
  let m: RegExpExecArray | null;
  NUMBER.lastIndex = span?.end ?? 0;
  while ((m = NUMBER.exec(sentence)) !== null) {
    // "5-year" or "x2" are not the number 5 / 2 standing alone.
    if (!/[a-zA-Z_^]/.test(sentence[m.index - 1] ?? "") && !isListMarker(sentence, m.index, m[0].length)) {
      last = m[0];
    }
  }
  if (last !== null) return { answer: last, how: "number" };
  // A closing name after the value ("a total of $2 + 1 = 3$ possible values for $n$"): the last span that
  // holds a value states the answer, not the lone letter naming what was counted ("for $n$", "of $n$" only:
  // "it remains to find $y$" is unfinished work, not a value).
  const valued = span !== null && /^[a-zA-Z]$/.test(span.content) &&
      /\b(?:for|of)\s*$/.test(sentence.slice(0, span.start))
    ? spans.findLast((sp) => /\d/.test(sp.content))
    : undefined;
  if (valued) return { answer: valued.content, how: "math" };
  return span !== null && span.content !== "" ? { answer: span.content, how: "math" } : null;
}

/** Does a marker's value read as prose (two or more plain words, "she received $7") rather than as an answer? */
export function isProse(value: string): boolean {
  const words = value.replace(/\\[a-zA-Z]+(\{[^{}]*\})?/g, " ").match(/[A-Za-z]{2,}/g) ?? [];
  return words.length >= 2;
}
