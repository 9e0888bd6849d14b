// Boxed answers: the last \boxed{…} / \fbox{…} of a response, and (default mode) every box
// with the final group of boxes joined by "and"/"or"/commas, for the union and hedge rules of grade.ts.
import { EXTRACT_LIMITS, type Extraction, lastMatch } from "./markers.ts";
import { matchBrace } from "../common/latex.ts";

interface Box {
  start: number;
  end: number;
  content: string | null; // null: empty or never closed
  kind: "braced" | "bare" | "unclosed";
}

const BOX = /\\(?:boxed|fbox)\b/g;

// The box whose command spans [start, after): "{…}" brace-matched, else a bare "\boxed x" (one token after a space).
function readBox(text: string, start: number, after: number): Box {
  let i = after;
  while (text[i] === " ") i++;
  if (text[i] === "{") {
    const close = matchBrace(text, i);
    if (close < 0) return { start, end: text.length, content: null, kind: "unclosed" };
    return { start, end: close + 1, content: text.slice(i + 1, close).trim() || null, kind: "braced" };
  }
  const bare = i > after ? /^[^\s$]+/.exec(text.slice(i, i + EXTRACT_LIMITS.answerChars + 1)) : null;
  return { start, end: bare ? i + bare[0].length : i, content: bare?.[0] ?? null, kind: "bare" };
}

// Every box, left to right. A box's inside is skipped (a box in a box is part of it) and an unclosed box ends the
// scan (all that follows is inside it), so this is linear.
function allBoxes(text: string): Box[] {
  const re = new RegExp(BOX);
  const boxes: Box[] = [];
  for (let m; (m = re.exec(text)) !== null;) {
    const box = readBox(text, m.index, m.index + m[0].length);
    boxes.push(box);
    if (box.kind === "unclosed") break;
    if (box.kind === "braced") re.lastIndex = box.end;
  }
  return boxes;
}

/** The last \boxed{…} / \fbox{…} / "\boxed x" (the last occurrence, even inside another box); "unclosed" when
 * it never closes (a truncated answer). */
export function lastBoxed(text: string): Extraction | null {
  const last = lastMatch(text, new RegExp(BOX));
  if (!last) return null;
  const box = readBox(text, last.index, last.index + last[0].length);
  if (box.kind === "unclosed") return { answer: null, rule: "boxed_unclosed" };
  if (box.content === null) return { answer: null, rule: "boxed_empty" };
  return { answer: box.content, rule: box.kind === "bare" ? "boxed_bare" : "boxed" };
}

/**
 * A gold's final group of boxes (one answer written in several boxes): the last box and the boxes before it
 * separated only by math delimiters, punctuation and at most two words ("\boxed{1} papers and \boxed{2} bins").
 * Reference answers do not hedge, so words may join them; a sentence end or more words ends the group.
 */
export function goldBoxGroup(text: string): string[] {
  const boxes = allBoxes(text);
  if (boxes.length < 2 || boxes[boxes.length - 1].content === null) return [];
  const group = [boxes[boxes.length - 1]];
  for (let k = boxes.length - 2; k >= 0; k--) {
    const between = text.slice(boxes[k].end, group[0].start).replace(/\\[()[\]]|\$/g, " ");
    const words = between.match(/[A-Za-z]+/g) ?? [];
    if (boxes[k].content === null || words.length > 2 || /[.!?]\s/.test(between)) break;
    group.unshift(boxes[k]);
  }
  return [...new Set(group.map((b) => b.content!))];
}

// Default mode: a last box that "never closes" only because its closing brace was written `\}` at the very end
// ("\boxed{185\}") is that box, when nothing else in it is escaped or unbalanced.
function strayBackslashBox(text: string): Extraction | null {
  const last = lastMatch(text, /\\(?:boxed|fbox)\s*\{/g);
  const m = last && /^([^{}\\]*)\\\}[\s.$]*$/.exec(text.slice(last.index + last[0].length));
  const inner = m ? m[1].trim() : "";
  return inner === "" ? null : { answer: inner, rule: "boxed_stray_backslash" };
}

// Text that joins two boxes into one stated answer ("and", "or", a comma, spacing); adjacent boxes are not joined.
const CONNECTOR = /^(?:[\s,;.$&]|\\quad|\\qquad|\\text\{\s*(?:and|or)\s*\}|and|or)+$/i;

/**
 * The last box as the answer; with two or more boxes (both modes), also every box and the final group, so a
 * several-value gold can be matched by their union and a hedge ("\boxed{3} or \boxed{4}") is never rewarded.
 */
export function boxedRule(text: string, strict = false): Extraction | null {
  const found = lastBoxed(text);
  if (found?.rule === "boxed_unclosed" && !strict) return strayBackslashBox(text) ?? found;
  if (!found || found.answer === null) return found;
  const boxes = allBoxes(text);
  const filled = boxes.filter((b) => b.content !== null);
  if (filled.length < 2) return found;
  const group = [boxes[boxes.length - 1]];
  for (let k = boxes.length - 2; k >= 0; k--) {
    if (boxes[k].content === null || !CONNECTOR.test(text.slice(boxes[k].end, group[0].start))) break;
    group.unshift(boxes[k]);
  }
  const rejecting = rejectingSentences(text);
  const kept = filled.filter((b, k) =>
    k === filled.length - 1 || !rejectedLater(text, b, filled[k + 1].start, rejecting)
  );
  return { ...found, boxes: kept.map((b) => b.content!), finalBoxes: group.map((b) => b.content ?? "") };
}

// Words that take a candidate back: "extraneous", "we reject it", "does not satisfy", "cannot be".
const REJECTS =
  /\b(?:reject(?:ed|s)?|extraneous|discard(?:ed|s)?|invalid|not\s+(?:a\s+)?(?:valid|solution|root)|(?:does\s*n[o']t|doesn't|do\s+not|don't)\s+(?:work|satisfy|hold)|not\s+(?:allowed|possible|acceptable)|impossible|excluded?|cannot\s+be|can't\s+be|ruled?\s+out)\b/i;

// The sentences (with where they start) that take something back, in order: usually none or a few.
function rejectingSentences(text: string): { start: number; text: string }[] {
  const out: { start: number; text: string }[] = [];
  const ends = /[.!?]\s+|\n+|$/g; // the end of the text ends the last sentence
  for (let m, from = 0; (m = ends.exec(text)) !== null; from = m.index + m[0].length) {
    const sentence = text.slice(from, m.index + 1);
    if (REJECTS.test(sentence)) out.push({ start: from, text: sentence });
    if (m[0] === "") break;
  }
  return out;
}

// Whether a sentence names `value` as a whole token (not inside a longer number or name: 2 is not in -2 or 12).
function names(sentence: string, value: string): boolean {
  const flat = sentence.replace(/[\s$]+/g, " ");
  for (let at = flat.indexOf(value); at >= 0; at = flat.indexOf(value, at + 1)) {
    const [before, next] = [flat[at - 1] ?? "", flat[at + value.length] ?? ""];
    if (!/[\w.-]/.test(before) && !/[\w.]/.test(next)) return true;
  }
  return false;
}

/**
 * A boxed candidate taken back later (it is not part of the answer pooled from several boxes): a later sentence
 * rejects its value by name ("x = -1 is extraneous"), or the sentence right after it rejects it and names no
 * other number ("\boxed{2}. But this does not satisfy the equation.", before the next box).
 */
function rejectedLater(
  text: string,
  box: Box,
  nextBox: number,
  rejecting: { start: number; text: string }[],
): boolean {
  const value = box.content!.replace(/\s+/g, " ");
  const after = (s: { start: number; text: string }) => s.text.slice(Math.max(0, box.end - s.start));
  if (rejecting.some((s) => s.start + s.text.length > box.end && names(after(s), value))) return true;
  const near = text.slice(box.end, nextBox).split(/(?<=[.!?])\s+|\n+/).slice(0, 2).join(" ");
  const others = (near.match(/-?\d+(?:\.\d+)?/g) ?? []).filter((n) => n !== value);
  return REJECTS.test(near) && others.length === 0;
}
