// Numbers and expressions through mathjs: compiling translated expressions, evaluating them at seeded points,
// and the tolerances that decide when two values are equal (doubles, 64-digit decimals for extreme constants).
import { all, type BigNumber, create, type EvalFunction } from "mathjs";
import { Rng } from "../common/prng.ts";
import { decimalPlaces, exactValue, rat, ratEqual, type Rational, ratWithin } from "./rational.ts";

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

/**
 * Tolerances. Exact values (rationals, powers, factorials, binomials) compare exactly; irrational constants in
 * doubles at exactRel, confirmed in 64-digit decimals at bigRel; a decimal literal is an approximation only when
 * it is the other side rounded to its written places and within decimalRel (see `decimalMatches`).
 */
const TOLERANCE = {
  exactRel: 1e-9,
  bigRel: 1e-40,
  decimalRel: 1e-6,
  zeroAbs: 1e-12,
  points: 8,
  minPoints: 3,
};

/** A compiled expression in mathjs syntax: its free variables, whether a decimal literal appeared, ∞ written. */
export interface Expr {
  kind: "expr";
  src: string;
  fn: EvalFunction;
  vars: string[];
  hasDecimal: boolean;
  infinite: boolean;
  exact?: Rational | null; // the exact value of a constant, computed on first use (undefined = not yet)
  big?: BigNumber | null; // its 64-digit decimal value, likewise
}

const KNOWN = new Set(["pi", "e", "i", "Infinity"]);

type C = { re: number; im: number };

// Evaluate at a scope as a complex number; NaN for errors and non-numbers (booleans, matrices, units).
function evalAt(fn: EvalFunction, scope: Record<string, number>): C {
  try {
    const v = fn.evaluate({ ...scope });
    if (typeof v === "number") return { re: v, im: 0 };
    if (math.isComplex(v)) return { re: (v as C).re, im: (v as C).im };
  } catch {
    // an evaluation error has no value
  }
  return { re: NaN, im: NaN };
}

const finite = (z: C) => Number.isFinite(z.re) && Number.isFinite(z.im);

/** |a − b| within a relative tolerance (and an absolute floor next to zero). */
function closeC(a: C, b: C, rel: number): boolean {
  const d = Math.hypot(a.re - b.re, a.im - b.im);
  const scale = Math.max(Math.hypot(a.re, a.im), Math.hypot(b.re, b.im));
  return d <= rel * scale || d <= TOLERANCE.zeroAbs;
}

// n seeded points (scopes) for `vars`, the k-th value of each variable drawn by `draw(rng, k)` in order.
function seeded<T>(
  label: string,
  vars: string[],
  n: number,
  draw: (rng: Rng, k: number) => T,
): Record<string, T>[] {
  const rng = Rng.seeded(`${label}|${vars.join(",")}`);
  return Array.from({ length: n }, (_, k) => Object.fromEntries(vars.map((v) => [v, draw(rng, k)])));
}

// Evaluation points: positive values first (where √ and log are real), then negative ones.
const positivePoint = (k: number) => k < TOLERANCE.points / 2 + 1;
const points = (vars: string[]) =>
  seeded(
    "grader-points",
    vars,
    TOLERANCE.points,
    (rng, k) => (positivePoint(k) ? 1 : -1) * (0.3 + 2.4 * rng.float()),
  );

const tiny = (z: C) => Math.hypot(z.re, z.im) < 1e-200;

// The value of a real constant in 64-digit decimals, memoised on the (cached) parsed expression like its exact
// value; null when complex, non-finite, over a cap or unsupported.
function bigOf(e: Expr): BigNumber | null {
  if (e.big !== undefined) return e.big;
  try {
    const v: unknown = big.evaluate(e.src);
    e.big = big.isBigNumber(v) && (v as BigNumber).isFinite() ? v as BigNumber : null;
  } catch {
    e.big = null;
  }
  return e.big;
}

function bigClose(x: BigNumber, y: BigNumber, rel: number): boolean {
  const d = x.minus(y).abs();
  const scale = x.abs().gt(y.abs()) ? x.abs() : y.abs();
  return d.lte(scale.times(rel)) || d.isZero();
}

// The exact rational value of a constant, memoised on the (cached) parsed expression.
function exactOf(e: Expr): Rational | null {
  if (e.exact === undefined) e.exact = e.vars.length === 0 ? exactValue(e.src) : null;
  return e.exact;
}

/**
 * The decimal rule, one for every mode: a side written with k decimal places (the coarser side when both have
 * decimals) approximates the other value v only if it is v rounded to k places (|d − v| ≤ ½·10^−k) and within
 * relative 1e-6 of v. So 0.3333333 ≡ 1/3, but 1.000001 ≢ 1 (1 to six places is 1.000000) and 0.333 ≢ 1/3.
 */
function decimalMatches(d: Rational, k: number, v: Rational): boolean {
  const halfUlp = rat(1n, 2n * 10n ** BigInt(k))!;
  const absV = v.n < 0n ? rat(-v.n, v.d)! : v;
  const rel = rat(absV.n, absV.d * 1_000_000n);
  return rel !== null && ratWithin(d, v, halfUlp) && ratWithin(d, v, rel);
}

// The decimal rule in doubles (one side irrational): the coarser decimal side is d, with k places.
function decimalMatchesFloat(d: number, k: number, v: number): boolean {
  const diff = Math.abs(d - v);
  const slack = 1 + 1e-12; // the double rounding of d and v themselves
  return diff <= 0.5 * 10 ** -k * slack && diff <= TOLERANCE.decimalRel * Math.abs(v) * slack;
}

// Which side is the approximation: the side with decimals (the fewer places when both have them).
function coarser(a: Expr, b: Expr): { d: Expr; v: Expr; k: number } {
  const ka = a.hasDecimal ? decimalPlaces(a.src) : Infinity;
  const kb = b.hasDecimal ? decimalPlaces(b.src) : Infinity;
  return ka <= kb ? { d: a, v: b, k: ka } : { d: b, v: a, k: kb };
}

// A power, a factorial, a binomial or a literal of 6+ digits.
const mayHideDifference = (src: string) => /\^|fact\(|combinations\(|\d{6}/.test(src);

/** How to compare: `strict` is the training reward, where a decimal is never an approximation of an exact gold. */
export interface ExprOptions {
  strict?: boolean;
}

// Is the decimal side allowed to stand for a rounding of the other value? Default mode: when the coarser side
// is one plain decimal number ("0.3333333", not "\sqrt{8.0000001}"). Strict mode (training reward): only when
// the gold b is itself written with decimals; otherwise a decimal is the exact fraction it writes.
function roundingAllowed(a: Expr, b: Expr, options: ExprOptions): boolean {
  if (!a.hasDecimal && !b.hasDecimal) return false;
  if (options.strict && !b.hasDecimal) return false;
  return PLAIN_DECIMAL.test(coarser(a, b).d.src);
}
const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;

// Constants: exactly when both have an exact value; otherwise doubles when both are in range, 64-digit decimals
// when not (and to confirm a double match of exact irrational forms), and ∞ only when written as \infty.
function constantsEqual(a: Expr, b: Expr, options: ExprOptions): boolean {
  const x = evalAt(a.fn, {});
  const y = evalAt(b.fn, {});
  const inRange = (z: C) => finite(z) && (z.re === 0 || (Math.abs(z.re) > 1e-250 && Math.abs(z.re) < 1e250));
  const rounding = roundingAllowed(a, b, options);
  // A decimal that may not stand for a rounding is the exact fraction it writes: in strict mode it must equal
  // an irrational gold in 64 digits (3.14159265358979 ≢ π, 0.5π ≡ π/2).
  const exactDecimal = !rounding && (a.hasDecimal || b.hasDecimal);
  // Doubles first: values apart by more than any rule allows are different whatever their exact values.
  if (inRange(x) && inRange(y) && !closeC(x, y, rounding ? 2 * TOLERANCE.decimalRel : 1e-6)) return false;
  const ea = exactOf(a);
  const eb = exactOf(b);
  if (ea !== null && eb !== null) {
    if (ratEqual(ea, eb)) return true;
    if (!rounding) return false;
    const { d, v, k } = coarser(a, b);
    return decimalMatches(exactOf(d)!, k, exactOf(v)!);
  }
  // a + bi with rational parts (0.5 + 1.5i ≡ \frac12 + \frac32 i): the parts compare exactly.
  const [ca, cb] = [complexParts(a), complexParts(b)];
  if (ca !== null && cb !== null) return ratEqual(ca[0], cb[0]) && ratEqual(ca[1], cb[1]);
  const bothZero = x.re === 0 && y.re === 0 && x.im === 0 && y.im === 0;
  if (inRange(x) && inRange(y) && !bothZero) {
    if (rounding) {
      if (x.im !== 0 || y.im !== 0) return closeC(x, y, TOLERANCE.decimalRel);
      const { d, k } = coarser(a, b);
      return d === a ? decimalMatchesFloat(x.re, k, y.re) : decimalMatchesFloat(y.re, k, x.re);
    }
    if (!closeC(x, y, TOLERANCE.exactRel)) return false;
    // Doubles cannot tell √(2^{106}+1) from 2^{53}: confirm in 64-digit decimals where both evaluate there.
    // Only large literals, powers and factorials can hide a difference below double rounding (√3/2 vs
    // sin 60° cannot), so only those pay for the confirmation (~0.3 ms); so does an exact decimal.
    if (!exactDecimal && !mayHideDifference(a.src) && !mayHideDifference(b.src)) return true;
    const bx = bigOf(a);
    const by = bigOf(b);
    if (bx === null || by === null) return !exactDecimal;
    return bigClose(bx, by, TOLERANCE.bigRel);
  }
  if (!a.infinite && !b.infinite) {
    // Outside double range without an exact value: no relative tolerance can tell 10^{10^{10}} from
    // 10^{10^{10}} + 1, so the two must have the same exact structure (terms that cancel, the rest exact).
    if (bothZero && bigOf(a)?.isZero() && bigOf(b)?.isZero()) return true;
    return sameStructure(a.src, b.src);
  }
  // Never from an overflowing 10^{10^{10}}: both sides must have written \infty.
  return a.infinite && b.infinite && x.re === y.re && x.im === 0 && y.im === 0;
}

// The exact parts [re, im] of a constant linear in i (f(i) = re + im·i: f(0), f(1) − f(0), and f(2) checks the
// line), or null: not written with i, a part not rational, or i squared somewhere (i² = −1, not a line).
function complexParts(e: Expr): [Rational, Rational] | null {
  if (e.vars.length > 0 || !/\bi\b/.test(e.src)) return null;
  const at = (k: bigint) => exactValue(e.src, { i: rat(k)! });
  const [f0, f1, f2] = [at(0n), at(1n), at(2n)];
  if (f0 === null || f1 === null || f2 === null) return null;
  const im = rat(f1.n * f0.d - f0.n * f1.d, f1.d * f0.d);
  const line = im && rat(f0.n * im.d + 2n * im.n * f0.d, f0.d * im.d); // f(0) + 2·im
  return im !== null && line !== null && ratEqual(line, f2) ? [f0, im] : null;
}

// Parts of a mathjs source split at the depth-0 characters `cut` accepts; a kept cut character starts the next
// part (a term's sign), a dropped one is removed (a factor's "*").
function splitOuter(s: string, cut: (i: number, start: number) => boolean, keep: boolean): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "(") depth++;
    else if (s[i] === ")") depth--;
    else if (depth === 0 && cut(i, start)) {
      out.push(s.slice(start, i));
      start = keep ? i : i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

// Top-level terms of a mathjs source (sign kept), each with its top-level factors sorted, whitespace dropped.
function terms(src: string): string[] {
  const s = src.replace(/\s+/g, "");
  const sign = (i: number, start: number) => "+-".includes(s[i]) && i > start && !/[*/^(,eE]/.test(s[i - 1]);
  return splitOuter(s, sign, true).filter((t) => t !== "" && t !== "+" && t !== "-").map((t) => {
    const body = t[0] === "-" || t[0] === "+" ? t.slice(1) : t;
    return (t[0] === "-" ? "-" : "+") + splitOuter(body, (i) => body[i] === "*", false).sort().join("*");
  });
}

/**
 * Equal by exact structure (values past double range without an exact value): identical terms (factors in any
 * order) cancel, and what remains on both sides must have equal exact values (nothing left on either side is 0).
 */
function sameStructure(a: string, b: string): boolean {
  const ta = terms(a);
  const tb = terms(b);
  for (let i = ta.length - 1; i >= 0; i--) {
    const j = tb.indexOf(ta[i]);
    if (j >= 0) {
      tb.splice(j, 1);
      ta.splice(i, 1);
    }
  }
  if (ta.length === 0 && tb.length === 0) return true;
  const rest = (ts: string[]) => (ts.length === 0 ? rat(0n) : exactValue(ts.join("")));
  const [ra, rb] = [rest(ta), rest(tb)];
  return ra !== null && rb !== null && ratEqual(ra, rb);
}

// Seeded rational points for exact comparison of polynomial and rational expressions (Schwartz–Zippel: two
// different rational functions agree at 6 random points with 10^4-sized numerators with negligible chance).
const pointCache = new Map<string, Record<string, Rational>[]>();

// Small-integer points (|v| ≤ 12) keep (a − x)^{6000} within the size cap where 10^4-sized rationals do not;
// they are tried only when the rational points give no verdict.
function rationalPoints(vars: string[], small = false): Record<string, Rational>[] {
  const key = `${small ? "small|" : ""}${vars.join(",")}`;
  const hit = pointCache.get(key);
  if (hit) return hit;
  if (pointCache.size >= 1000) pointCache.clear();
  const out = seeded(`grader-rational-points${small ? "|small" : ""}`, vars, 6, (rng, k) => {
    const sign = BigInt(k % 2 === 0 ? 1 : -1);
    return small
      ? rat(sign * BigInt(1 + rng.int(12)))!
      : rat(sign * BigInt(1 + rng.int(9999)), BigInt(1 + rng.int(97)))!;
  });
  pointCache.set(key, out);
  return out;
}

// Exact verdict for expressions in variables built from + − × ÷ and integer powers; null when not such.
const ZERO_AFTER_LETTER = /[A-Za-z]\s*\*\s*0(?![.\d])/;

// Two sides zero at every point are both the zero function (0·a ≡ 0); zero at only some points says nothing.
function exactOverPoints(a: Expr, b: Expr, vars: string[], small = false): boolean | null {
  let agreed = 0;
  let zeros = 0;
  const pts = rationalPoints(vars, small);
  for (const scope of pts) {
    const x = exactValue(a.src, scope);
    const y = exactValue(b.src, scope);
    if (x === null || y === null) {
      // Past the size cap at 10^4-sized points ((a − x)^{6000}): try small integers before the doubles.
      return small ? null : exactOverPoints(a, b, vars, true);
    }
    if (!ratEqual(x, y)) return false;
    if (x.n !== 0n) agreed++;
    else zeros++;
  }
  // Only the 10^4-sized points may show the zero function (a product of (x − k) vanishes at small integers),
  // and only where no zero follows a letter: "N0" is a name (N_0, "No"), not N times 0.
  if (zeros === pts.length && !small) return !ZERO_AFTER_LETTER.test(a.src) && !ZERO_AFTER_LETTER.test(b.src);
  return agreed >= TOLERANCE.minPoints ? true : null;
}

/**
 * Two expressions (a the prediction, b the gold) are equal if they agree at every seeded point (constants: at
 * the single point). Where both sides are built from + − × ÷ and integer powers the verdict is exact, at
 * rational points, whatever the doubles say: doubles overflow ((a − x)^{6000}) or cancel (an expanded degree-13
 * polynomial). Strict mode: a decimal is never a rounding of a gold written without decimals.
 */
export function exprEqual(a: Expr, b: Expr, options: ExprOptions = {}): boolean {
  if (a.src === b.src) return true;
  // Long integer literals beyond double precision compare digit by digit.
  if (/^\d+$/.test(a.src) && /^\d+$/.test(b.src)) return BigInt(a.src) === BigInt(b.src);
  // Variables may cancel (sin²x + cos²x ≡ 1), so evaluate over the union; x² vs y² still differ at the points.
  const vars = [...new Set([...a.vars, ...b.vars])].sort();
  if (vars.length === 0) return constantsEqual(a, b, options);
  if (!stepsAgree(a, b, vars)) return false;
  const rounding = (a.hasDecimal || b.hasDecimal) && !(options.strict && !b.hasDecimal);
  const close = closeOverPoints(a, b, vars, rounding ? TOLERANCE.decimalRel : TOLERANCE.exactRel);
  // Exact at rational points where both sides have exact values (x^{53} + 1 and x^{53} agree in doubles; the
  // expanded and factored polynomial disagree in them). A decimal that may stand for a rounding is left to the
  // doubles' tolerance.
  // After a disagreement only where doubles can cancel (a 4+-digit literal or an exponent ≥ 10): small
  // coefficients and powers at |x| ≤ 2.7 stay far inside double precision, and skipping them keeps wrong answers
  // in variables (most of them) as cheap as before.
  if (!rounding && (close !== false || mayCancel(a.src) || mayCancel(b.src))) {
    const exact = exactOverPoints(a, b, vars);
    if (exact !== null) return exact;
  }
  return close === true;
}

// Floor and ceiling are constant between integers, so the seeded points (|v| < 2.7) can miss where two step
// functions differ (⌊n/2⌋ and ⌊√(n−1)⌋ agree at all of them): with either, both sides must also agree at 24
// seeded integer points in 1..60 (where both are finite).
function stepsAgree(a: Expr, b: Expr, vars: string[]): boolean {
  if (!/\b(?:floor|ceil)\(/.test(a.src) && !/\b(?:floor|ceil)\(/.test(b.src)) return true;
  for (const scope of seeded("grader-step-points", vars, 24, (rng) => 1 + rng.int(60))) {
    const [x, y] = [evalAt(a.fn, scope), evalAt(b.fn, scope)];
    if (finite(x) && finite(y) && !closeC(x, y, TOLERANCE.exactRel)) return false;
  }
  return true;
}

const mayCancel = (src: string) => /\d{4}|\^\s*\(*\d{2}/.test(src);

// Agreement at the seeded double points (over- and underflow points skipped, ≥ minPoints informative); null
// when too few points were informative.
function closeOverPoints(a: Expr, b: Expr, vars: string[], rel: number): boolean | null {
  let agreed = 0;
  for (const [k, scope] of points(vars).entries()) {
    const x = evalAt(a.fn, scope);
    const y = evalAt(b.fn, scope);
    // Overflow and underflow points say nothing: (x+1)^{100000} and (x+1)^{100001} are both 0 near x = −1.
    if (!finite(x) || !finite(y) || (tiny(x) && tiny(y))) continue;
    // At negative points only real results are compared, so √(1/n) ≡ 1/√n (branch cuts) but |x| ≢ x.
    if (!positivePoint(k) && (Math.abs(x.im) > 1e-12 || Math.abs(y.im) > 1e-12)) continue;
    if (!closeC(x, y, Math.max(rel, 1e-8))) return false;
    agreed++;
  }
  return agreed >= TOLERANCE.minPoints ? true : null;
}

/** Parse mathjs syntax once, note its free variables (function names excluded) and compile it; null if invalid. */
export function compileExpr(src: string, hasDecimal: boolean): Expr | null {
  try {
    const node = math.parse(src);
    const vars = new Set<string>();
    node.traverse((n, _p, parent) => {
      const isFn = parent !== null && math.isFunctionNode(parent) && parent.fn === n;
      if (math.isSymbolNode(n) && !KNOWN.has(n.name) && !isFn) vars.add(n.name);
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

/** f ≡ λ·g for a constant λ (nonzero; positive for inequalities), checked at the seeded points. */
export function proportional(f: Expr, g: Expr, positive: boolean): boolean {
  if (f.vars.join(",") !== g.vars.join(",")) return false;
  let ratio: number | null = null;
  let agreed = 0;
  for (const scope of points(f.vars)) {
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
