// Readings of a normalised answer beyond its parsed form, applied before the form comparison: the unit it was
// written in (50 mm ≡ 5 cm, 5 m ≢ 5 cm, cm³ ≢ cm²), percent as a value (x% = x/100) and a multiple-choice gold
// written as letter + option text ("(B) 12"). Each returns a verdict, or null when it does not decide.
import { compileExpr } from "./numeric.ts";
import { type CompareOptions, valuesEqual } from "./compare.ts";
import { parseValue, type Value } from "./forms.ts";
import type { Unit } from "./units.ts";

/** A prepared answer as the readings need it: its value, normalised text, percent marker and unit. */
export interface Reading {
  value: Value;
  norm: string;
  percent: boolean;
  unit: Unit | null;
}

/** A verdict and the name of the reading that gave it. */
export type Verdict = { equal: boolean; by: string };

// v · factor for a scalar expression (exact factors keep exact values exact), else null.
function scaled(v: Value, factor: string): Value | null {
  return v.kind === "expr" ? compileExpr(`(${v.src}) * (${factor})`, v.hasDecimal) : null;
}

/**
 * Units: both sides with a unit of the table compare in the gold's unit (the prediction converted), and a
 * different dimension is wrong; the same unit, or a unit on one side only, leaves the comparison to the
 * numbers as written (a bare number is read in the other side's unit: "5" ≡ "5 cm").
 */
export function unitVerdict(p: Reading, g: Reading, options: CompareOptions): Verdict | null {
  if (p.unit === null || g.unit === null || p.unit.name === g.unit.name) return null;
  if (p.unit.dim !== g.unit.dim) return { equal: false, by: "unit_dimension" };
  const converted = scaled(p.value, `(${p.unit.factor}) / (${g.unit.factor})`);
  return { equal: converted !== null && valuesEqual(converted, g.value, options), by: "unit_conversion" };
}

const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;
// A bare number that may be a percent written without its sign: a plain number of size 1 or more (or 0). Below
// 1 a bare number is a proportion: a probability 0.25 is 25%, and 0.25% is a different number, 100× smaller.
const asWritten = (norm: string) =>
  PLAIN_NUMBER.test(norm) && (Math.abs(Number(norm)) >= 1 || Number(norm) === 0);

/**
 * Percent is a value: a prediction x% is x/100 (10% ≡ 0.1, 0.5% ≢ 1/2); against a gold written as a plain
 * number of size ≥ 1 it may also be that number (MATH writes "what percent …" answers without the sign: 25% ≡
 * 25), never against a bare number below 1 (0.25% ≢ 0.25, a proportion). A gold y% matches y/100, and its bare
 * number y when that is ≥ 1 in size. `direct` is the comparison of the numbers as written.
 */
export function percentVerdict(
  p: Reading,
  g: Reading,
  direct: () => Verdict,
  options: CompareOptions,
): Verdict {
  if (p.percent && !g.percent) {
    const value = scaled(p.value, "1/100");
    if (value !== null && valuesEqual(value, g.value, options)) return { equal: true, by: "percent" };
    return asWritten(g.norm) ? direct() : { equal: false, by: "percent" };
  }
  if (g.percent && !p.percent && PLAIN_NUMBER.test(p.norm) && !asWritten(p.norm)) {
    const gold = scaled(g.value, "1/100");
    return { equal: gold !== null && valuesEqual(p.value, gold, options), by: "percent" };
  }
  const d = direct();
  if (d.equal || !g.percent || p.percent) return d;
  const gold = scaled(g.value, "1/100");
  return gold !== null && valuesEqual(p.value, gold, options) ? { equal: true, by: "percent" } : d;
}

// A choice: "(B) 12", "B. 12", "B) 12" (capital A–E); a lone letter "B" or "(B)".
const CHOICE = /^(?:\(([A-E])\)|([A-E])[.:)])\s*(\S[\s\S]*)$/;
const LETTER = /^\(?([A-E])\)?$/;

// Another choice letter in an option's text: "(D)", "D)", "D." or "D:" before a space or the end, or a lone
// capital A–E word ("or D"); a different letter than `letter`.
const OTHER_CHOICE = /\(([A-E])\)|(?<![A-Za-z\\])([A-E])(?:[.:)]|(?![A-Za-z0-9_^{(]))/g;
function namesOtherChoice(text: string, letter: string): boolean {
  for (const m of text.matchAll(OTHER_CHOICE)) if ((m[1] ?? m[2]) !== letter) return true;
  return false;
}

/**
 * A multiple-choice gold written as letter + option text accepts its letter, its option text, or both
 * together (a different letter with the same text is a contradiction and wrong); a gold that is a lone letter
 * accepts letter + text with that letter. Null when the gold is no choice.
 */
export function choiceVerdict(p: Reading, g: Reading, options: CompareOptions): Verdict | null {
  const gc = CHOICE.exec(g.norm);
  const pc = CHOICE.exec(p.norm);
  const gl = LETTER.exec(g.norm);
  if (gc === null) {
    if (gl === null || pc === null) return null;
    const letter = pc[1] ?? pc[2];
    // A hedge over choices, "(B) or (D)", "B) 12, no wait, C": another letter named after the first is wrong.
    return { equal: letter === gl[1] && !namesOtherChoice(pc[3], letter), by: "choice" };
  }
  const letter = gc[1] ?? gc[2];
  const text = () => parseValue(gc[3]);
  if (pc !== null) {
    return {
      equal: (pc[1] ?? pc[2]) === letter && valuesEqual(parseValue(pc[3]), text(), options),
      by: "choice",
    };
  }
  const pl = LETTER.exec(p.norm);
  if (pl !== null) return { equal: pl[1] === letter, by: "choice" };
  return { equal: valuesEqual(p.value, text(), options), by: "choice" };
}
