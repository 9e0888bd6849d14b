// Structured answers and their equivalence (after Qwen2.5-Math's math_equal and Math-Verify, docs/references.md):
// numbers, expressions, tuples, intervals, sets, matrices, unions and relations, compared through mathjs by
// evaluation at seeded points.
import { all, type BigNumber, create, type EvalFunction } from "mathjs";
import { Rng } from "../common/prng.ts";
import { latexToMathjs, type Translation } from "./latex.ts";

const math = create(all, {});
// mathjs' own factorial of 10^6 takes ~80 ms; beyond 170! a double overflows anyway, so stop there.
math.import({ fact: (n: number) => (typeof n === "number" && n > 170 ? Infinity : math.gamma(n + 1)) });
// Constants outside double range (1/2004! vs 1/2006!, 10^{400}) are re-evaluated with 64-digit decimals;
// factorials there are capped at 5000! so a 1000000! cannot stall the grader.
const big = create(all, { number: "BigNumber", precision: 64 });
big.import({
  fact: (n: unknown) => {
    if (!big.isBigNumber(n) || (n as unknown as { gt(x: number): boolean }).gt(5000)) {
      throw new Error("factorial cap");
    }
    return big.factorial(n as never);
  },
});

/** Tolerances: exact answers (no decimal literal) allow only float rounding; decimals a relative 1e-6. */
const TOLERANCE = { exactRel: 1e-9, decimalRel: 1e-6, zeroAbs: 1e-12, points: 8, minPoints: 3 };

/** A parsed answer. `expr` holds mathjs syntax; `rel` is a relation chain sides[0] ops[0] sides[1] … */
export type Value =
  | { kind: "expr"; src: string; fn: EvalFunction; vars: string[]; hasDecimal: boolean; infinite: boolean }
  | { kind: "text"; text: string }
  | { kind: "tuple"; open: string; close: string; items: Value[] }
  | { kind: "set"; items: Value[] }
  | { kind: "matrix"; rows: Value[][] }
  | { kind: "union"; parts: Value[] }
  | { kind: "rel"; ops: string[]; sides: Value[] };

const OPENERS = "([{";
const CLOSERS = ")]}";
// LaTeX relation → canonical operator (two-character forms before "<" and ">").
const RELATIONS: [string, string][] = [
  ["\\le", "<="],
  ["\\ge", ">="],
  ["\\ne", "!="],
  ["<", "<"],
  [">", ">"],
  ["=", "="],
];

/** Split at top-level occurrences of any separator (outside brackets); returns parts and the separators hit. */
export function splitTop(s: string, seps: readonly string[]): { parts: string[]; hits: string[] } {
  const parts: string[] = [];
  const hits: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === "\\" && (s[i + 1] === "{" || s[i + 1] === "}")) {
      depth += s[i + 1] === "{" ? 1 : -1;
      i++;
      continue;
    }
    if (OPENERS.includes(ch)) depth++;
    else if (CLOSERS.includes(ch)) depth--;
    else if (depth === 0) {
      const sep = seps.find((p) =>
        s.startsWith(p, i) && !(p.startsWith("\\") && /[a-zA-Z]/.test(s[i + p.length] ?? ""))
      );
      if (sep) {
        parts.push(s.slice(start, i).trim());
        hits.push(sep);
        i += sep.length - 1;
        start = i + 1;
      }
    }
  }
  parts.push(s.slice(start).trim());
  return { parts, hits };
}

// True when the bracket at 0 closes exactly at the last character (so "(1,2)" but not "(1)+(2)").
function outerPair(s: string): boolean {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === "\\" && (s[i + 1] === "{" || s[i + 1] === "}")) {
      depth += s[i + 1] === "{" ? 1 : -1;
      i++;
    } else if (OPENERS.includes(ch)) depth++;
    else if (CLOSERS.includes(ch)) depth--;
    if (depth === 0) return i === s.length - 1;
  }
  return false;
}

const KNOWN = new Set(["pi", "e", "i", "Infinity"]);

let frontEnd: (latex: string) => Translation = latexToMathjs;

/** Swap the LaTeX → mathjs front end (the benchmark's --frontend-compare); clears the parse cache. */
export function useFrontEnd(translate: (latex: string) => Translation = latexToMathjs): void {
  frontEnd = translate;
  cache.clear();
}

/** Forget cached parses (benchmarks measure cold-cache latency with this). */
export function clearParseCache(): void {
  cache.clear();
}

function exprValue(src: string): Expr | null {
  try {
    const t = frontEnd(src);
    return compileExpr(t.expr, t.hasDecimal);
  } catch {
    return null;
  }
}

const cache = new Map<string, Value>();
const CACHE_MAX = 20_000;

/** Parse a normalised answer into a structured Value (cached); unparseable text becomes a `text` value. */
export function parseValue(s: string): Value {
  const hit = cache.get(s);
  if (hit) return hit;
  const v = parseUncached(s, 0);
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(s, v);
  return v;
}

function textValue(s: string): Value {
  return { kind: "text", text: s.replace(/[\s{}]/g, "").toLowerCase() };
}

const PLUS_MINUS = /\\(pm|mp)(?![a-zA-Z])/;

// Set members, with a ± member standing for both of its values ({1 ± √5, −2} has three members).
function setItems(parts: string[], rec: (x: string) => Value): Value[] {
  return parts.filter((p) => p !== "").flatMap((p) => {
    const v = rec(p);
    return v.kind === "set" && PLUS_MINUS.test(p) && !p.trim().startsWith("\\{") ? v.items : [v];
  });
}

function parseUncached(s: string, depth: number): Value {
  s = s.trim();
  if (depth > 12) return textValue(s);
  const rec = (x: string) => parseUncached(x, depth + 1);
  if (s === "\\emptyset") return { kind: "set", items: [] };
  const matrix = /^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^}]*\})?([\s\S]*)\\end\{\1\}$/.exec(s);
  if (matrix) {
    const rows = matrix[2].split(/\\\\/).map((r) => r.trim()).filter((r) => r !== "");
    return { kind: "matrix", rows: rows.map((r) => r.split("&").map((c) => rec(c))) };
  }
  const inSet = splitTop(s, ["\\in"]);
  if (inSet.parts.length === 2 && /^[a-zA-Z]$/.test(inSet.parts[0])) return rec(inSet.parts[1]);
  const union = splitTop(s, ["\\cup"]);
  if (union.parts.length > 1) return { kind: "union", parts: union.parts.map(rec) };
  const list = splitTop(s, [",", ";"]);
  if (list.parts.length > 1) return { kind: "set", items: setItems(list.parts, rec) };
  const rel = splitTop(s, RELATIONS.map(([l]) => l));
  if (rel.parts.length > 1) {
    const ops = rel.hits.map((h) => RELATIONS.find(([l]) => l === h)![1]);
    return { kind: "rel", ops, sides: rel.parts.map(rec) };
  }
  if (s.startsWith("\\{") && s.endsWith("\\}") && outerPair(s)) {
    const inner = s.slice(2, -2);
    return { kind: "set", items: setItems(splitTop(inner, [",", ";"]).parts, rec) };
  }
  if ("([".includes(s[0]) && ")]".includes(s[s.length - 1]) && outerPair(s)) {
    const inner = s.slice(1, -1);
    const items = splitTop(inner, [","]).parts;
    if (items.length > 1) return { kind: "tuple", open: s[0], close: s[s.length - 1], items: items.map(rec) };
    if (s[0] === "(" && s[s.length - 1] === ")") return rec(inner);
  }
  // a ± b stands for the set {a + b, a − b}, also inside a fraction: \frac{-1 \pm \sqrt5}{2}.
  const pm = PLUS_MINUS.exec(s);
  if (pm) {
    const [first, second] = pm[1] === "pm" ? ["+", "-"] : ["-", "+"];
    const at = (sign: string) => s.slice(0, pm.index) + sign + s.slice(pm.index + pm[0].length);
    return { kind: "set", items: [rec(at(first)), rec(at(second))] };
  }
  // A base subscript (2516_8) is graded on its digits: "2516_8", "2516_{8}" and "2516" agree.
  const base = /^(\d+)_\{?(\d+)\}?$/.exec(s);
  if (base) return exprValue(base[1]) ?? textValue(base[1]);
  // Words are text, not products of one-letter variables (else "Navin" ≡ "Nivan", an anagram).
  if (s === "\\ldots" || /^[A-Za-z]{3,}(?: [A-Za-z]+)*$|^[A-Za-z]+(?: [A-Za-z]+)+$/.test(s)) {
    return textValue(s);
  }
  return exprValue(s) ?? textValue(s);
}

type C = { re: number; im: number };

// A mathjs result as a complex number; anything else (booleans, matrices, units) is NaN.
function toComplex(v: unknown): C {
  if (typeof v === "number") return { re: v, im: 0 };
  if (math.isComplex(v)) return { re: (v as C).re, im: (v as C).im };
  return { re: NaN, im: NaN };
}

function evalAt(fn: EvalFunction, scope: Record<string, number>): C {
  try {
    return toComplex(fn.evaluate({ ...scope }));
  } catch {
    return { re: NaN, im: NaN };
  }
}

const finite = (z: C) => Number.isFinite(z.re) && Number.isFinite(z.im);

/** |a − b| within a relative tolerance (and an absolute floor next to zero). */
function closeC(a: C, b: C, rel: number): boolean {
  const d = Math.hypot(a.re - b.re, a.im - b.im);
  const scale = Math.max(Math.hypot(a.re, a.im), Math.hypot(b.re, b.im));
  return d <= rel * scale || d <= TOLERANCE.zeroAbs;
}

// Seeded evaluation points: positive values first (where √ and log are real), then negative ones.
function points(vars: string[]): { scope: Record<string, number>; positive: boolean }[] {
  const rng = Rng.seeded(`grader-points|${vars.join(",")}`);
  const out = [];
  for (let k = 0; k < TOLERANCE.points; k++) {
    const positive = k < TOLERANCE.points / 2 + 1;
    const scope: Record<string, number> = {};
    for (const v of vars) scope[v] = (positive ? 1 : -1) * (0.3 + 2.4 * rng.float());
    out.push({ scope, positive });
  }
  return out;
}

const tiny = (z: C) => Math.hypot(z.re, z.im) < 1e-200;

function sameVars(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

type Big = BigNumber;

// A real constant in 64-digit decimal arithmetic, or null (complex, non-finite, over a cap, unsupported).
function bigEval(src: string): Big | null {
  try {
    const v: unknown = big.evaluate(src);
    return big.isBigNumber(v) && (v as Big).isFinite() ? v as Big : null;
  } catch {
    return null;
  }
}

function bigClose(x: Big, y: Big, rel: number): boolean {
  const d = x.minus(y).abs();
  const scale = x.abs().gt(y.abs()) ? x.abs() : y.abs();
  return d.lte(scale.times(rel)) || d.isZero();
}

type Expr = Extract<Value, { kind: "expr" }>;

// Constants: doubles when both are in range, 64-digit decimals when not, and ∞ only when written as \infty.
function constantsEqual(a: Expr, b: Expr, rel: number): boolean {
  const x = evalAt(a.fn, {});
  const y = evalAt(b.fn, {});
  const inRange = (z: C) => finite(z) && (z.re === 0 || (Math.abs(z.re) > 1e-250 && Math.abs(z.re) < 1e250));
  const bothZero = x.re === 0 && y.re === 0 && x.im === 0 && y.im === 0;
  if (inRange(x) && inRange(y) && !bothZero) {
    // Integers are exact in a double below 2^53: 10^9 + 1 is not 10^9.
    const exact = !a.hasDecimal && !b.hasDecimal && x.im === 0 && y.im === 0;
    if (exact && Number.isInteger(x.re) && Number.isInteger(y.re)) return x.re === y.re;
    return closeC(x, y, rel);
  }
  if (!a.infinite && !b.infinite) {
    const bx = bigEval(a.src);
    const by = bigEval(b.src);
    if (bx !== null && by !== null) return bigClose(bx, by, rel);
    return finite(x) && finite(y) && closeC(x, y, rel);
  }
  // Never from an overflowing 10^{10^{10}}: both sides must have written \infty.
  return a.infinite && b.infinite && x.re === y.re && x.im === 0 && y.im === 0;
}

/** Two expressions are equal if they agree at every seeded point (constants: at the single point). */
function exprEqual(a: Expr, b: Expr): boolean {
  if (a.src === b.src) return true;
  // Long integer literals beyond double precision compare digit by digit.
  if (/^\d+$/.test(a.src) && /^\d+$/.test(b.src)) return BigInt(a.src) === BigInt(b.src);
  const rel = a.hasDecimal || b.hasDecimal ? TOLERANCE.decimalRel : TOLERANCE.exactRel;
  // Variables may cancel (sin²x + cos²x ≡ 1), so evaluate over the union; x² vs y² still differ at the points.
  const vars = [...new Set([...a.vars, ...b.vars])].sort();
  if (vars.length === 0) return constantsEqual(a, b, rel);
  let agreed = 0;
  for (const { scope, positive } of points(vars)) {
    const x = evalAt(a.fn, scope);
    const y = evalAt(b.fn, scope);
    // Overflow and underflow points say nothing: (x+1)^{100000} and (x+1)^{100001} are both 0 near x = −1.
    if (!finite(x) || !finite(y) || (tiny(x) && tiny(y))) continue;
    // At negative points only real results are compared, so √(1/n) ≡ 1/√n (branch cuts) but |x| ≢ x.
    if (!positive && (Math.abs(x.im) > 1e-12 || Math.abs(y.im) > 1e-12)) continue;
    if (!closeC(x, y, Math.max(rel, 1e-8))) return false;
    agreed++;
  }
  return agreed >= TOLERANCE.minPoints;
}

function exprOf(v: Value, wrap: (src: string) => string): Expr | null {
  if (v.kind !== "expr") return null;
  return compileExpr(wrap(v.src), v.hasDecimal);
}

// Parse mathjs syntax once, note its free variables (function names excluded) and compile it.
function compileExpr(src: string, hasDecimal: boolean): Expr | null {
  try {
    const node = math.parse(src);
    const vars = new Set<string>();
    node.traverse((n, _p, parent) => {
      if (n.type === "SymbolNode" && !KNOWN.has((n as unknown as { name: string }).name)) {
        const isFn = parent?.type === "FunctionNode" && (parent as unknown as { fn: unknown }).fn === n;
        if (!isFn) vars.add((n as unknown as { name: string }).name);
      }
    });
    return {
      kind: "expr",
      src,
      fn: node.compile(),
      vars: [...vars].sort(),
      hasDecimal,
      infinite: src.includes("Infinity"),
    };
  } catch {
    return null;
  }
}

const isLoneSymbol = (v: Value) =>
  v.kind === "expr" && /^[a-zA-Z](_\w+)?$|^[a-z]+$/.test(v.src) && v.vars.length === 1;
const isConstant = (v: Value) => v.kind === "expr" && v.vars.length === 0;

// lhs − rhs of a two-sided relation, oriented so "<" / "<=" become ">" / ">=".
function relationForm(lhs: Value, op: string, rhs: Value): { op: string; f: Expr } | null {
  if (lhs.kind !== "expr" || rhs.kind !== "expr") return null;
  const flip = op === "<" || op === "<=";
  const [hi, lo] = flip ? [rhs, lhs] : [lhs, rhs];
  const f = compileExpr(`(${hi.src}) - (${lo.src})`, lhs.hasDecimal || rhs.hasDecimal);
  return f && { op: flip ? (op === "<" ? ">" : ">=") : op, f };
}

// f ≡ λ·g for a constant λ (nonzero; positive for inequalities), checked at the seeded points.
function proportional(f: Expr, g: Expr, positive: boolean): boolean {
  if (!sameVars(f.vars, g.vars)) return false;
  let ratio: number | null = null;
  let agreed = 0;
  for (const { scope } of points(f.vars)) {
    const x = evalAt(f.fn, scope);
    const y = evalAt(g.fn, scope);
    if (!finite(x) || !finite(y) || Math.abs(x.im) > 1e-12 || Math.abs(y.im) > 1e-12) continue;
    if (Math.abs(y.re) < 1e-9) {
      if (Math.abs(x.re) > 1e-9) return false;
      continue;
    }
    const r = x.re / y.re;
    if (ratio === null) ratio = r;
    else if (Math.abs(r - ratio) > 1e-7 * Math.max(1, Math.abs(ratio))) return false;
    agreed++;
  }
  return ratio !== null && Math.abs(ratio) > 1e-12 && (!positive || ratio > 0) &&
    agreed >= TOLERANCE.minPoints;
}

function relationEqual(p: Extract<Value, { kind: "rel" }>, g: Extract<Value, { kind: "rel" }>): boolean {
  if (p.ops.length !== g.ops.length) return false;
  const forms = (r: typeof p) => r.ops.map((op, i) => relationForm(r.sides[i], op, r.sides[i + 1]));
  const fp = forms(p);
  let fg = forms(g);
  // A chain a < x < b may be written b > x > a: compare against the reversed chain too.
  const tryMatch = () =>
    fp.every((a, i) =>
      a && fg[i] && a.op === fg[i]!.op && proportional(a.f, fg[i]!.f, a.op !== "=" && a.op !== "!=")
    );
  if (tryMatch()) return true;
  fg = [...fg].reverse();
  return tryMatch();
}

// A one-variable inequality as an interval: x > 2 → (2, ∞); 1 ≤ x < 3 → [1, 3).
function inequalityToInterval(g: Extract<Value, { kind: "rel" }>): Value | null {
  const inf = exprValue("\\infty")!;
  const negInf = exprValue("-\\infty")!;
  const varIdx = g.sides.findIndex(isLoneSymbol);
  if (varIdx < 0 || g.ops.some((op) => op === "=" || op === "!=")) return null;
  if (!g.sides.every((s, i) => i === varIdx || isConstant(s))) return null;
  let lo: Value = negInf, hi: Value = inf, open = "(", close = ")";
  const bound = (side: Value, op: string, varOnLeft: boolean) => {
    const greater = (op === ">" || op === ">=") === varOnLeft; // x > c or c < x: c is a lower bound
    if (greater) [lo, open] = [side, op.endsWith("=") ? "[" : "("];
    else [hi, close] = [side, op.endsWith("=") ? "]" : ")"];
  };
  if (varIdx > 0) bound(g.sides[varIdx - 1], g.ops[varIdx - 1], false);
  if (varIdx < g.sides.length - 1) bound(g.sides[varIdx + 1], g.ops[varIdx], true);
  return { kind: "tuple", open, close, items: [lo, hi] };
}

/**
 * Is `pred` equivalent to the reference `gold`? Asymmetric on purpose: `x = v` in the prediction matches a
 * value gold, and a gold inequality matches a prediction interval, but not the reverse.
 */
export function valuesEqual(pred: Value, gold: Value): boolean {
  if (pred.kind === "rel" && gold.kind !== "rel") {
    // x = v (or a chain x = a = v): the last side is the answer when the first is a lone symbol.
    if (pred.ops.every((op) => op === "=") && isLoneSymbol(pred.sides[0])) {
      return valuesEqual(pred.sides[pred.sides.length - 1], gold);
    }
    return false;
  }
  if (gold.kind === "rel" && pred.kind !== "rel") {
    if (
      gold.ops.length === 1 && gold.ops[0] === "=" && isLoneSymbol(gold.sides[0]) && isConstant(gold.sides[1])
    ) {
      return valuesEqual(pred, gold.sides[1]);
    }
    const interval = inequalityToInterval(gold);
    return interval !== null && (pred.kind === "tuple" || pred.kind === "union") &&
      valuesEqual(pred, interval);
  }
  if (pred.kind === "set" && pred.items.length === 1 && gold.kind !== "set") {
    return valuesEqual(pred.items[0], gold);
  }
  if (pred.kind !== gold.kind) return false;
  switch (gold.kind) {
    case "expr":
      return exprEqual(pred as Expr, gold);
    case "text":
      return (pred as typeof gold).text === gold.text;
    case "tuple": {
      const p = pred as typeof gold;
      return p.open === gold.open && p.close === gold.close && p.items.length === gold.items.length &&
        gold.items.every((g, i) => valuesEqual(p.items[i], g));
    }
    case "matrix": {
      const p = pred as typeof gold;
      return p.rows.length === gold.rows.length &&
        gold.rows.every((row, i) =>
          row.length === p.rows[i].length && row.every((g, j) => valuesEqual(p.rows[i][j], g))
        );
    }
    case "set":
      return multisetEqual((pred as typeof gold).items, gold.items);
    case "union":
      return multisetEqual((pred as typeof gold).parts, gold.parts);
    case "rel": {
      const p = pred as typeof gold;
      if (
        gold.ops.length === 1 && gold.ops[0] === "=" && p.ops.length === 1 && isLoneSymbol(gold.sides[0]) &&
        isLoneSymbol(p.sides[0]) && (p.sides[0] as Expr).src === (gold.sides[0] as Expr).src &&
        valuesEqual(p.sides[1], gold.sides[1])
      ) return true;
      return relationEqual(p, gold);
    }
  }
}

// Order-free, all-or-nothing: every gold item is matched by a distinct predicted item and nothing is left over.
function multisetEqual(pred: Value[], gold: Value[]): boolean {
  if (pred.length !== gold.length) return false;
  const used = new Array(pred.length).fill(false);
  for (const g of gold) {
    const j = pred.findIndex((p, k) => !used[k] && valuesEqual(p, g));
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

/** The same value scaled by 1/100 (for percent answers), or null if it is not a scalar expression. */
export function percentScaled(v: Value): Value | null {
  return exprOf(v, (src) => `(${src}) / 100`);
}
