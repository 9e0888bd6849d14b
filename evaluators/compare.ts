// Equivalence of two parsed answers (after Qwen2.5-Math's math_equal and Math-Verify; docs/references.md) as an
// ordered list of named comparisons (COMPARISONS): the first one that applies to the pair decides, and its name is what `--explain` reports.
// Asymmetric on purpose where noted: the prediction is compared against the reference gold.
import { compileExpr, type Expr, exprEqual, proportional } from "./numeric.ts";
import { constantOf, exprValue, interval, type Tuple, type Value } from "./forms.ts";

type Rel = Extract<Value, { kind: "rel" }>;

const isLoneSymbol = (v: Value) =>
  v.kind === "expr" && /^[a-zA-Z](_\w+)?$|^[a-z]+$/.test(v.src) && v.vars.length === 1;
const isConstant = (v: Value) => v.kind === "expr" && v.vars.length === 0;

// A name for a value rather than an unknown in an equation: x, x_1, f(x), f^{-1}(x), PQ, \angle ABC, (a,b),
// S_1:S_2.
const SYMBOL = String.raw`(?:[A-Za-z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?'?`;
// A member of a labelled tuple: a symbol or a function value, (a, b) or (f(n), g(n)).
const MEMBER = String.raw`(?:${SYMBOL}|[a-zA-Z]\s*\([^()]*\))`;
const LABEL = new RegExp(
  String
    .raw`^(?:${SYMBOL}|[A-Z]{2,3}|\\angle\s*[A-Z]{1,3}|[a-zA-Z](?:\^\{?-1\}?)?(?:_\{?\w+\}?)?\s*\([^()]*\)|\(\s*${MEMBER}(?:\s*,\s*${MEMBER})+\s*\)|${SYMBOL}(?:\s*:\s*${SYMBOL})+)$`,
);
const isLabel = (src: string) => LABEL.test(src.trim());

// A named quantity whose value a prediction may state: |r - s|, \sin\theta, \cos^2 A, \log(x), NO/BO.
const QUANTITY =
  /^(?:\|[^|]+\||\\frac\{[A-Z]{1,3}\}\{[A-Z]{1,3}\}|\\(?:sin|cos|tan|cot|sec|csc|log|ln)(?:\^\{?\d\}?)?\s*(?:\\[a-zA-Z]+|[a-zA-Z]|\([^()]*\)|\{[^{}]*\}))$/;
const isQuantity = (src: string) => QUANTITY.test(src.trim());

// A gold that defines a function, f(x) = x + 22: its right side is the answer even with the variable in it.
const FUNCTION_LABEL = /^[a-zA-Z](?:\^\{?-1\}?)?\s*\(\s*[a-z]\s*\)$/;
const isFunctionLabel = (src: string) => FUNCTION_LABEL.test(src.trim());

// A gold that defines one unknown by the others, y = x^2 + 2x + 1: its right side is the answer (the unknown
// does not occur in it; x = 2x − 3 stays an equation).
function definesSymbol(g: Rel): boolean {
  const [lhs, rhs] = g.sides;
  return isLoneSymbol(lhs) && rhs.kind === "expr" && lhs.kind === "expr" && !rhs.vars.includes(lhs.vars[0]);
}

// A value with no unknown in it: a constant, text without letters ("2:3"), or a tuple/set/matrix of those.
function isValueLike(v: Value): boolean {
  if (v.kind === "expr") return v.vars.length === 0;
  if (v.kind === "text") return !/[a-z]/.test(v.text);
  if (v.kind === "tuple" || v.kind === "set") return v.items.every(isValueLike);
  return v.kind === "matrix" && v.rows.every((r) => r.every(isValueLike));
}

// A side that describes in words ("Total cost", "14 hours (meditation) + 20 hours (yoga)"), not an unknown.
const isDescription = (src: string) => /(?:^|[^\\a-zA-Z])[a-zA-Z]{3,}/.test(src);

/**
 * The value a relation states, or null: `x = 5`, `(a,b) = (1,4)`, `f(x) = 2` (a label, then the value); a
 * chain `x = 2+3 = 5`, `20 \times 2 = 40` or `a+b = 5+3 = 8` states its final side only (`x = 7 = 11` is 11,
 * never 7); with ≈ the exact side before it (`a = 1/3 \approx 0.33` is 1/3). An equation in an unknown
 * (`2x + 3 = 7`) states none.
 */
function statedValue(r: Rel, strict: boolean): Value | null {
  if (!r.ops.every((op) => op === "=" || op === "~")) return null;
  const approx = r.ops.indexOf("~");
  const at = approx < 0 ? r.sides.length - 1 : approx;
  // An empty side ("= 0", a dangling "x =") states nothing: it is a fragment, not a named value.
  if (r.srcs.some((src) => src.trim() === "")) return null;
  // "\frac{\sqrt3}{3} \approx 0.577": the exact value, with its approximation.
  if (at === 0) return r.ops.length === 1 && isConstant(r.sides[0]) ? r.sides[0] : null;
  // Sides before the value are names (a symbol, a label, words) or constant computation steps: "20 \times 2 =
  // 40", "a+b = 5+3 = 8" and "x = 5+5+1 = 7 = 11" state 40, 8 and 11. Only the final side is read, as a box is
  // (Math-Verify reads it too): a false step is a wrong computation, not a second candidate, so the chain
  // "= 7 = 11" is 11 and wrong for a gold 7. The first side may be any expression only when a constant step
  // follows it; "2x + 3 = 7" and "x = 2y = 4" are equations, no statement.
  const named = (s: Value, i: number) =>
    isLabel(r.srcs[i]) || isLoneSymbol(s) || isQuantity(r.srcs[i]) ||
    (i === 0 && (s.kind === "text" || isDescription(r.srcs[0])));
  const step = (s: Value, i: number) => named(s, i) || isConstant(s);
  const middle = r.sides.slice(1, at);
  // Training rewards (strict) keep their original reading: only a named first side states the value, so
  // "2+3 = 5" or "6 = 6" is not rewarded as 5 or 6 (evaluation mode reads the computation).
  if (strict && !named(r.sides[0], 0)) return null;
  const earlierOk = middle.every((s, k) => step(s, k + 1)) &&
    (step(r.sides[0], 0) || middle.some((s) => isConstant(s)));
  return earlierOk ? r.sides[at] : null;
}

// lhs − rhs of a two-sided relation, oriented so "<" / "<=" become ">" / ">=".
function relationForm(lhs: Value, op: string, rhs: Value): { op: string; f: Expr } | null {
  if (lhs.kind !== "expr" || rhs.kind !== "expr") return null;
  const flip = op === "<" || op === "<=";
  const [hi, lo] = flip ? [rhs, lhs] : [lhs, rhs];
  const f = compileExpr(`(${hi.src}) - (${lo.src})`, lhs.hasDecimal || rhs.hasDecimal);
  return f && { op: flip ? (op === "<" ? ">" : ">=") : op, f };
}

function relationEqual(p: Rel, g: Rel): boolean {
  if (p.ops.length !== g.ops.length) return false;
  const forms = (r: Rel) => r.ops.map((op, i) => relationForm(r.sides[i], op, r.sides[i + 1]));
  const [fp, fg] = [forms(p), forms(g)];
  const match = (gs: typeof fg) =>
    fp.every((a, i) =>
      a && gs[i] && a.op === gs[i]!.op && proportional(a.f, gs[i]!.f, a.op !== "=" && a.op !== "!=")
    );
  // A chain a < x < b may be written b > x > a: compare against the reversed chain too.
  return match(fg) || match([...fg].reverse());
}

// A one-variable inequality as a union of intervals: x > 2 → (2, ∞); 1 ≤ x < 3 → [1, 3); x ≠ 1 → (−∞, 1) ∪
// (1, ∞). `unknown` is the variable's source, so x > 2 and y > 2 are never the same set.
let infinities: [Value, Value] | null = null;
type Pieces = { unknown: string; pieces: Tuple[] };

function inequalityPieces(g: Rel): Pieces | null {
  infinities ??= [exprValue("-\\infty")!, exprValue("\\infty")!];
  const [negInf, inf] = infinities;
  // The unknown: a symbol, a function value (0 < f(x) < 1 is the range (0, 1)) or an absolute value |z|.
  const varIdx = g.sides.findIndex((s, i) =>
    isLoneSymbol(s) || isFunctionLabel(g.srcs[i]) || isAbs(g.srcs[i])
  );
  if (varIdx < 0 || g.ops.some((op) => op === "=" || op === "~")) return null;
  if (!g.sides.every((s, i) => i === varIdx || isConstant(s))) return null;
  const unknown = g.srcs[varIdx].replace(/\s/g, "");
  if (g.ops.includes("!=")) {
    // x ≠ a is the union of both sides of a; only as a single relation of a symbol.
    if (g.ops.length !== 1 || isAbs(g.srcs[varIdx])) return null;
    const a = g.sides[1 - varIdx];
    return { unknown, pieces: [interval("(", negInf, a, ")"), interval("(", a, inf, ")")] };
  }
  let lo: Value = negInf, hi: Value = inf, open = "(", close = ")";
  const bound = (side: Value, op: string, varOnLeft: boolean) => {
    const greater = (op === ">" || op === ">=") === varOnLeft; // x > c or c < x: c is a lower bound
    if (greater) [lo, open] = [side, op.endsWith("=") ? "[" : "("];
    else [hi, close] = [side, op.endsWith("=") ? "]" : ")"];
  };
  if (varIdx > 0) bound(g.sides[varIdx - 1], g.ops[varIdx - 1], false);
  if (varIdx < g.sides.length - 1) bound(g.sides[varIdx + 1], g.ops[varIdx], true);
  const piece = interval(open, lo, hi, close);
  if (!isAbs(g.srcs[varIdx])) return { unknown, pieces: [piece] };
  const pre = absPreimage(piece);
  if (pre === null) return null;
  return { unknown, pieces: pre.kind === "union" ? pre.parts as Tuple[] : [pre as Tuple] };
}

const isAbs = (src: string) => /^\|\s*[a-zA-Z]\s*\|$/.test(src.trim());

// The z with |z| in [a, b]: [−b, −a] ∪ [a, b] for a > 0, else [−b, b] (brackets mirrored); null when |z| < 0.
function absPreimage(t: Tuple): Value | null {
  const [a, b] = t.items as Expr[];
  const [va, vb] = [a, b].map((e) => Number(e.fn.evaluate({})));
  const [na, nb] = [a, b].map((e) => compileExpr(`-(${e.src})`, e.hasDecimal));
  if (!(vb > 0) || Number.isNaN(va) || na === null || nb === null) return null;
  const mirror = (c: string) => (c === "]" ? "[" : "(");
  if (!(va > 0)) return interval(mirror(t.close), nb, b, t.close);
  return { kind: "union", parts: [interval(mirror(t.close), nb, na, t.open === "[" ? "]" : ")"), t] };
}

// The intersection of two intervals, null when empty (endpoints compared in doubles; equal ends keep the
// stricter bracket).
function intersectPiece(a: Tuple, b: Tuple): Tuple | null {
  const [al, ah, bl, bh] = [...a.items, ...b.items].map(constantOf);
  if ([al, ah, bl, bh].some(Number.isNaN)) throw new RangeError("endpoint");
  const [lo, open] = al > bl ? [a.items[0], a.open] : bl > al ? [b.items[0], b.open] : [
    a.items[0],
    a.open === "(" || b.open === "(" ? "(" : "[",
  ];
  const [hi, close] = ah < bh ? [a.items[1], a.close] : bh < ah ? [b.items[1], b.close] : [
    a.items[1],
    a.close === ")" || b.close === ")" ? ")" : "]",
  ];
  const [l, h] = [Math.max(al, bl), Math.min(ah, bh)];
  if (l > h || (l === h && (open === "(" || close === ")"))) return null;
  return interval(open, lo, hi, close);
}

function intersect(a: Tuple[], b: Tuple[]): Tuple[] {
  return a.flatMap((x) => b.map((y) => intersectPiece(x, y)).filter((t): t is Tuple => t !== null));
}

// Inequalities joined by connectives, as what they say: "and" (\land) is the intersection, "or" (\lor) the
// union; a comma list is the intersection when its parts all overlap ("x > -2, x < 3" is (−2, 3)) and the
// union otherwise ("x < -1, x > 2"): the other reading would be ℝ or ∅, which no one writes that way.
function asPieces(v: Value): Pieces | null {
  if (v.kind === "rel") return inequalityPieces(v);
  if (v.kind !== "set" || v.items.length < 2) return null;
  const parts: Pieces[] = [];
  for (const item of v.items) {
    const p = asPieces(item);
    if (p === null || (parts.length > 0 && p.unknown !== parts[0].unknown)) return null;
    parts.push(p);
  }
  try {
    const overlapping = v.form === "list" &&
      parts.every((p, i) => parts.every((q, j) => j <= i || intersect(p.pieces, q.pieces).length > 0));
    if (v.form === "conjunction" || overlapping) {
      return {
        unknown: parts[0].unknown,
        pieces: parts.slice(1).reduce((acc, p) => intersect(acc, p.pieces), parts[0].pieces),
      };
    }
  } catch {
    return null; // an endpoint that is no real constant: no set to compute
  }
  if (v.form !== "list" && v.form !== "disjunction") return null;
  return { unknown: parts[0].unknown, pieces: parts.flatMap((p) => p.pieces) };
}

// An inequality, or inequalities joined by connectives, as an interval, a union of intervals or ∅.
function asIntervals(v: Value): Value | null {
  const p = asPieces(v);
  if (p === null) return null;
  if (p.pieces.length === 0) return { kind: "set", items: [], form: "empty_set" };
  return p.pieces.length === 1 ? p.pieces[0] : { kind: "union", parts: p.pieces };
}

// Relations joined by a comma, "and" or "or" (a set whose members are relations or such joins).
const isRelationJoin = (v: Value): boolean =>
  v.kind === "set" && v.items.length > 1 && v.items.every((i) => i.kind === "rel" || isRelationJoin(i));

// The values of a list of two or more "label = value" items with different labels, else null. Labels that are
// letters, perhaps with a number (x, y, z; a_1, a_2) name the coordinates of a tuple in alphabetical order, so
// "y = 3, x = 2" is (2, 3) however it is written (and "y = 2, x = 3" is not); other labels keep their order.
function labelledValues(v: Value): Value[] | null {
  if (v.kind !== "set" || v.items.length < 2) return null;
  const isLabelled = (item: Value): item is Rel =>
    item.kind === "rel" && item.ops.length === 1 && item.ops[0] === "=" && isLabel(item.srcs[0]);
  if (!v.items.every(isLabelled)) return null;
  const named = v.items.map((item) => ({ label: item.srcs[0].replace(/[\s{}]/g, ""), value: item.sides[1] }));
  if (new Set(named.map((n) => n.label)).size !== named.length) return null;
  const letters = named.map((n) => /^([a-zA-Z])(?:_(\d+))?$/.exec(n.label));
  if (letters.every((m) => m !== null)) {
    const key = (m: RegExpExecArray) => [m[1], Number(m[2] ?? -1)] as const;
    const order = named.map((n, i) => ({ n, k: key(letters[i]!) }))
      .sort((a, b) => a.k[0] === b.k[0] ? a.k[1] - b.k[1] : a.k[0] < b.k[0] ? -1 : 1);
    return order.map((o) => o.n.value);
  }
  return named.map((n) => n.value);
}

// The cells of a one-column or one-row matrix of two or more cells, else null.
function vectorCells(v: Value): Value[] | null {
  if (v.kind !== "matrix") return null;
  if (v.rows.length > 1 && v.rows.every((r) => r.length === 1)) return v.rows.map((r) => r[0]);
  return v.rows.length === 1 && v.rows[0].length > 1 ? v.rows[0] : null;
}

const isIntervalLike = (v: Value) => v.kind === "tuple" || v.kind === "union";
const isEmptySet = (v: Value) => v.kind === "set" && v.items.length === 0;

type Numeral = Extract<Value, { kind: "numeral" }>;

// The value of a numeral, exactly; digits (0–9, then A–Z for 10–35) are all below the base (checked by the form).
function numeralValue(digits: string, base: number): bigint {
  let v = 0n;
  for (const c of digits) v = v * BigInt(base) + BigInt(parseInt(c, 36));
  return v;
}

// What bare digits were written: "2516", and in a base above ten also letter digits, which parse as a product
// of symbols ("1A" is 1·A, "FF" is F·F, "abc" is the word abc): the characters as written, else null.
function bareDigits(v: Value, base: number): string | null {
  const raw = v.kind === "expr"
    ? (base > 10 ? v.src.replace(/[\s*]/g, "") : v.src)
    : v.kind === "text" && base > 10
    ? v.text
    : null;
  if (raw === null || !(base > 10 ? /^[\da-zA-Z]+$/ : /^\d+$/).test(raw)) return null;
  return [...raw].every((c) => parseInt(c, 36) < base) ? raw.toUpperCase() : null;
}

// A numeral against a numeral compares values (52_8 ≡ 101010_2); bare digits are read in the other side's base
// (2516 ≡ 2516_8, the subscript left off; 1A ≡ 1A_{16}), and must be valid digits there.
function numeralEqual(p: Value, g: Value): boolean {
  const digitsOf = (v: Value, base: number): bigint | null => {
    if (v.kind === "numeral") return numeralValue(v.digits, v.base);
    const digits = bareDigits(v, base);
    return digits === null ? null : numeralValue(digits, base);
  };
  const base = (g.kind === "numeral" ? g : p as Numeral).base;
  const [x, y] = [digitsOf(p, base), digitsOf(g, base)];
  return x !== null && y !== null && x === y;
}

// A set gold written as a bare list whose prediction is the same list in parentheses: (1, 2, 3) vs 1, 2, 3.
const isParenTuple = (v: Value) => v.kind === "tuple" && v.open === "(" && v.close === ")";

// Items of a list with repeats of an equivalent item removed ("2, 5, 2" states the set {2, 5}).
function distinct(items: Value[], options: CompareOptions): Value[] {
  const out: Value[] = [];
  for (const v of items) {
    if (!out.some((o) => valuesEqual(o, v, options) && valuesEqual(v, o, options))) out.push(v);
  }
  return out;
}

// Order-free, all-or-nothing: every gold item is matched by a distinct predicted item and nothing is left over.
// A prediction that repeats a solution is read as a set, unless the gold itself repeats one (multiplicity).
function multisetEqual(pred: Value[], gold: Value[], options: CompareOptions): boolean {
  if (pred.length > gold.length && pred.length <= 64 && distinct(gold, options).length === gold.length) {
    pred = distinct(pred, options);
  }
  if (pred.length !== gold.length) return false;
  const used = new Array(pred.length).fill(false);
  for (const g of gold) {
    const j = pred.findIndex((p, k) => !used[k] && valuesEqual(p, g, options));
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

// A bare-list gold is a set (MATH's "enter all solutions"), but a set and a sequence are written alike ("1, 2,
// 3, 4"). Strict mode (training reward) does not pay the gold of three or more members written backwards: a
// reversed sequence is the common order error, while a set is written in another order, not mirrored. Two
// members stay a set both ways (two roots); default mode reads every bare list as a set. What a careful reader
// knows beside the list settles it: a gold "a = 4, -8, -10" lists the values of one unknown (a set, never a
// sequence), and so does a list the problem asks for without an order (`unordered`, see `asksForOrder`).
const readsOrder = (g: Value, o: CompareOptions) =>
  o.strict === true && o.unordered !== true && g.kind === "set" && g.form === "list" && g.items.length >= 3 &&
  !valuesOfOneUnknown(g.items);

// "a = 4, -8, -10": the first member names an unknown, the rest are bare values.
const valuesOfOneUnknown = (items: Value[]) =>
  items[0].kind === "rel" && items[0].ops.length === 1 && items[0].ops[0] === "=" &&
  isLoneSymbol(items[0].sides[0]) && items.slice(1).every((v) => v.kind !== "rel");

/**
 * Does a problem ask for its answers in an order? True for terms, a sequence, a progression, an order ("in
 * increasing order", "ordered"), "respectively" or named unknowns ("find $a$, $b$ and $c$"); false when it asks
 * for values without one ("Enter all possible values, separated by commas", "Determine their ages").
 */
export function asksForOrder(problem: string): boolean {
  return /\b(?:terms?|sequences?|progressions?|order(?:ed)?|respectively)\b/i.test(problem) ||
    /\$\s*[a-zA-Z]\s*\$\s*,\s*\$\s*[a-zA-Z]\s*\$\s*,?\s*and\s*\$\s*[a-zA-Z]\s*\$/.test(problem);
}

// A set match that is not the gold reversed (see readsOrder).
function notReversedEqual(pred: Value[], gold: Value[], options: CompareOptions): boolean {
  const reversed = pred.length === gold.length &&
    gold.every((x, i) => valuesEqual(pred[pred.length - 1 - i], x, options)) &&
    !gold.every((x, i) => valuesEqual(pred[i], x, options));
  return !reversed && multisetEqual(pred, gold, options);
}

// The name and dummy variable of a definition's left side: f(t) → [f, t], a_k / a_{k} → [a_, k]; else null.
function defined(src: string): [string, string] | null {
  const m = /^([a-zA-Z])\s*(?:\(\s*([a-z])\s*\)|_\{?([a-z])\}?)$/.exec(src.trim());
  return m && [m[2] ? m[1] : `${m[1]}_`, m[2] ?? m[3]];
}

// e with the variable `from` renamed `to` (whole names only).
function renamed(e: Expr, from: string, to: string): Expr | null {
  return compileExpr(e.src.replace(new RegExp(`\\b${from}\\b`, "g"), to), e.hasDecimal);
}

// f(t) = 3t − 1 against the gold f(x) = 3x − 1 (a_k = 2k + 1 against a_n = 2n + 1): the prediction's right side
// with t renamed x; null unless both are one-variable definitions of the same function in different variables.
function renamedDefinition(p: Rel, g: Rel): Value | null {
  if (p.ops.length !== 1 || g.ops.length !== 1 || p.ops[0] !== "=" || g.ops[0] !== "=") return null;
  const [pm, gm] = [p, g].map((r) => defined(r.srcs[0]));
  if (!pm || !gm || pm[0] !== gm[0] || pm[1] === gm[1]) return null;
  const rhs = p.sides[1];
  if (rhs.kind !== "expr" || rhs.vars.includes(gm[1])) return null;
  return renamed(rhs, pm[1], gm[1]);
}

// f(t) = t^2 + 1 stated against the gold x^2 + 1, a function of its one variable: the value with the dummy t
// renamed x, or null (the value not in t alone, or the gold not in one other variable).
function renamedDummy(p: Rel, v: Value, g: Value): Value | null {
  const dummy = p.ops.length === 1 ? defined(p.srcs[0])?.[1] : undefined;
  if (!dummy || v.kind !== "expr" || g.kind !== "expr" || g.vars.length !== 1 || g.vars[0] === dummy) {
    return null;
  }
  return v.vars.length === 1 && v.vars[0] === dummy ? renamed(v, dummy, g.vars[0]) : null;
}

// An integration constant: C in the gold, written K, c, D or C_1 (…) in the prediction.
const GOLD_CONSTANT = /^(?:C|C_\{?[01]\}?)$/;
const CONSTANT = /^(?:[CcKD]|[Cc]_\{?\d\}?)$/;

// An antiderivative with its constant named differently, x^3/3 + K for x^3/3 + C: the prediction with its one
// constant renamed the gold's; null unless each side has one constant name the other lacks.
function renamedConstant(p: Expr, g: Expr): Expr | null {
  const gOnly = g.vars.filter((v) => !p.vars.includes(v));
  const pOnly = p.vars.filter((v) => !g.vars.includes(v));
  // The antiderivative is a function of some variable besides its constant: a lone C is no antiderivative.
  const shared = g.vars.length - gOnly.length;
  if (
    shared === 0 || gOnly.length !== 1 || pOnly.length !== 1 || !GOLD_CONSTANT.test(gOnly[0]) ||
    !CONSTANT.test(pOnly[0])
  ) return null;
  return renamed(p, pOnly[0], gOnly[0]);
}

/**
 * How to compare: `strict` is the training-reward reading (see `statedValue`); `unordered`: the problem asks for
 * a list without an order (see `readsOrder`).
 */
export interface CompareOptions {
  strict?: boolean;
  unordered?: boolean;
}

/** One comparison: its name, when it applies to (pred, gold), and the verdict it gives then. */
export interface AnswerComparison {
  name: string;
  applies(pred: Value, gold: Value): boolean;
  equal(pred: Value, gold: Value, options: CompareOptions): boolean;
}

/** The comparisons, in the order they are tried; the first that applies decides. */
export const COMPARISONS: readonly AnswerComparison[] = [
  {
    // x = v, (a,b) = (1,4), x = 2+3 = 5 in the prediction against a value gold.
    name: "stated_value",
    applies: (p, g) =>
      p.kind === "rel" && g.kind !== "rel" && !(isIntervalLike(g) && asIntervals(p) !== null),
    equal: (p, g, options) => {
      const v = statedValue(p as Rel, options.strict ?? false);
      if (v === null) return false;
      if (valuesEqual(v, g, options)) return true;
      const dummy = renamedDummy(p as Rel, v, g);
      return dummy !== null && valuesEqual(dummy, g, options);
    },
  },
  {
    // A labelled gold (x = 5, PQ = 3, f(x) = 2, S_1:S_2 = 2:3) accepts its value; a definition f(x) = x + 22
    // or y = 2x + 3 accepts its right side; an equation x + y = 5 needs an equation.
    name: "labelled_gold",
    applies: (p, g) =>
      g.kind === "rel" && p.kind !== "rel" && g.ops.length === 1 && g.ops[0] === "=" &&
      (((isLabel(g.srcs[0]) || isLoneSymbol(g.sides[0]) || isQuantity(g.srcs[0])) &&
        isValueLike(g.sides[1])) ||
        isFunctionLabel(g.srcs[0]) || definesSymbol(g as Rel)),
    equal: (p, g, o) => valuesEqual(p, (g as Rel).sides[1], o),
  },
  {
    // A gold "exact ≈ approximation" is its exact value.
    name: "approximated_gold",
    applies: (p, g) => g.kind === "rel" && p.kind !== "rel" && g.ops.length === 1 && g.ops[0] === "~",
    equal: (p, g, o) => isConstant((g as Rel).sides[0]) && valuesEqual(p, (g as Rel).sides[0], o),
  },
  {
    // A one-variable inequality (or inequalities joined by and/or/commas) and the equivalent interval, union
    // or ∅, both ways; two such joins (or a join and a chain) compare as sets of the same unknown.
    name: "inequality_interval",
    applies: (p, g) =>
      (asIntervals(g) !== null && isIntervalLike(p)) ||
      (asIntervals(p) !== null && (isIntervalLike(g) || isEmptySet(g))) ||
      ((isRelationJoin(p) || isRelationJoin(g)) && asPieces(p) !== null && asPieces(g) !== null),
    equal: (p, g, o) => {
      if (!isIntervalLike(p) && !isIntervalLike(g) && !isEmptySet(g)) {
        if (asPieces(p)!.unknown !== asPieces(g)!.unknown) return false;
      }
      const gi = isIntervalLike(g) || isEmptySet(g) ? g : asIntervals(g)!;
      const pi = isIntervalLike(p) ? p : asIntervals(p)!;
      return valuesEqual(pi, gi, o);
    },
  },
  {
    // "x = 2, y = 3" names the coordinates of the tuple (2, 3), in that order; both ways.
    name: "labelled_list_tuple",
    applies: (p, g) =>
      (labelledValues(p) !== null && g.kind === "tuple") ||
      (labelledValues(g) !== null && p.kind === "tuple"),
    equal: (p, g, o) => {
      const asTuple = (v: Value, like: Value): Value =>
        v.kind === "tuple"
          ? v
          : { ...(like as Extract<Value, { kind: "tuple" }>), items: labelledValues(v)! };
      return valuesEqual(asTuple(p, g), asTuple(g, p), o);
    },
  },
  {
    // Numerals in a base: 52_8 is not 52_{81} (that is compared as written) nor 42.
    name: "base_numeral",
    applies: (p, g) => p.kind === "numeral" || g.kind === "numeral",
    equal: numeralEqual,
  },
  {
    // Order: a tuple gold is ordered, so a bare list of three or more against it is compared in order
    // ("2, 3, 4" ≢ (2, 4, 3)); a bare list gold is a set (MATH's "enter all solutions, separated by commas"), and
    // a prediction that parenthesises it, (1, 2, 3) for 1, 2, 3, states the same members. Two members stay a
    // kind mismatch both ways: (2, 4) may be an interval.
    name: "list_tuple",
    applies: (p, g) =>
      (p.kind === "set" && p.form === "list" && isParenTuple(g)) ||
      (isParenTuple(p) && g.kind === "set" && g.form === "list"),
    equal: (p, g, o) => {
      const [pi, gi] = [p, g].map((v) => (v as { items: Value[] }).items);
      if (gi.length < 3) return false;
      if (g.kind === "set") return readsOrder(g, o) ? notReversedEqual(pi, gi, o) : multisetEqual(pi, gi, o);
      return pi.length === gi.length && gi.every((x, i) => valuesEqual(pi[i], x, o));
    },
  },
  {
    name: "single_member_set",
    applies: (p, g) => p.kind === "set" && p.items.length === 1 && g.kind !== "set",
    equal: (p, g, o) => valuesEqual((p as Extract<Value, { kind: "set" }>).items[0], g, o),
  },
  {
    // A vector written as a tuple against a column (or row) matrix, both ways: (1, 2, 3) for a 3×1 pmatrix.
    name: "column_vector",
    applies: (p, g) =>
      (vectorCells(g) !== null && p.kind === "tuple") || (vectorCells(p) !== null && g.kind === "tuple"),
    equal: (p, g, o) => {
      const [pi, gi] = [p, g].map((v) => vectorCells(v) ?? (v as Tuple).items);
      return pi.length === gi.length && gi.every((x, i) => valuesEqual(pi[i], x, o));
    },
  },
  { name: "kind_mismatch", applies: (p, g) => p.kind !== g.kind, equal: () => false },
  {
    name: "expression",
    applies: (_p, g) => g.kind === "expr",
    equal: (p, g, options) => {
      if (exprEqual(p as Expr, g as Expr, options)) return true;
      const constant = renamedConstant(p as Expr, g as Expr);
      return constant !== null && exprEqual(constant, g as Expr, options);
    },
  },
  {
    name: "text",
    applies: (_p, g) => g.kind === "text",
    equal: (p, g) => (p as { text: string }).text === (g as { text: string }).text,
  },
  {
    // Bracket types must match: (0,1] is not (0,1).
    name: "tuple_interval",
    applies: (_p, g) => g.kind === "tuple",
    equal: (pv, gv, o) => {
      const [p, g] = [pv, gv] as Extract<Value, { kind: "tuple" }>[];
      return p.open === g.open && p.close === g.close && p.items.length === g.items.length &&
        g.items.every((x, i) => valuesEqual(p.items[i], x, o));
    },
  },
  {
    name: "matrix",
    applies: (_p, g) => g.kind === "matrix",
    equal: (pv, gv, o) => {
      const [p, g] = [pv, gv] as Extract<Value, { kind: "matrix" }>[];
      return p.rows.length === g.rows.length &&
        g.rows.every((row, i) =>
          row.length === p.rows[i].length && row.every((x, j) => valuesEqual(p.rows[i][j], x, o))
        );
    },
  },
  {
    // Sets and "find all" lists must match in full (no any-match: 1728 does not pass "1331 and 1728").
    name: "set",
    applies: (_p, g) => g.kind === "set",
    equal: (p, g, o) => {
      const [pi, gi] = [p, g].map((v) => (v as Extract<Value, { kind: "set" }>).items);
      return readsOrder(g, o) ? notReversedEqual(pi, gi, o) : multisetEqual(pi, gi, o);
    },
  },
  {
    name: "union",
    applies: (_p, g) => g.kind === "union",
    equal: (p, g, o) =>
      multisetEqual(
        (p as Extract<Value, { kind: "union" }>).parts,
        (g as Extract<Value, { kind: "union" }>).parts,
        o,
      ),
  },
  {
    // Same labelled value on both sides (x = 5 vs x = 5.0, (a,b) = (1,4) twice), else equations and
    // inequalities compared as relations (proportional lhs − rhs, flipped and scaled forms match).
    name: "relation",
    applies: (_p, g) => g.kind === "rel",
    equal: (pv, gv, options) => {
      const [p, g] = [pv, gv] as Rel[];
      if (
        g.ops.length === 1 && g.ops[0] === "=" && p.ops.length === 1 && p.ops[0] === "=" &&
        isLabel(g.srcs[0]) && p.srcs[0].replace(/\s/g, "") === g.srcs[0].replace(/\s/g, "") &&
        valuesEqual(p.sides[1], g.sides[1], options)
      ) return true;
      // The same relation side by side (SRAC = LRAC, m_{\max} = n^2 - n - 1): also where a side is words.
      if (
        p.ops.length === g.ops.length && p.ops.every((op, i) => op === g.ops[i]) &&
        g.sides.every((side, i) => valuesEqual(p.sides[i], side, options))
      ) return true;
      // The same function defined in another variable: f(t) = 3t − 1 for f(x) = 3x − 1.
      const renamed = renamedDefinition(p, g);
      if (renamed !== null) return valuesEqual(renamed, g.sides[1], options);
      // The same label stated by a chain on either side (x = 5+5+1 = 11 vs x = 11): the final sides compare.
      const sameLabel = p.ops.length + g.ops.length > 2 && isLabel(g.srcs[0]) &&
        p.srcs[0].replace(/\s/g, "") === g.srcs[0].replace(/\s/g, "");
      if (sameLabel) {
        const [pv2, gv2] = [statedValue(p, options.strict ?? false), statedValue(g, false)];
        if (pv2 !== null && gv2 !== null) return valuesEqual(pv2, gv2, options);
      }
      return relationEqual(p, g);
    },
  },
];

/** The comparison that decides (pred, gold) and its verdict. */
export function compareValues(
  pred: Value,
  gold: Value,
  options: CompareOptions = {},
): { equal: boolean; by: string } {
  for (const c of COMPARISONS) {
    if (c.applies(pred, gold)) return { equal: c.equal(pred, gold, options), by: c.name };
  }
  return { equal: false, by: "none" };
}

/** Is `pred` equivalent to the reference `gold`? (The verdict of `compareValues`; `strict` reaches every member.) */
export function valuesEqual(pred: Value, gold: Value, options: CompareOptions = {}): boolean {
  return compareValues(pred, gold, options).equal;
}
