// The answer forms the comparer recognises, as one ordered list of named entries (FORMS): a normalised answer
// is parsed by the first entry that matches it (matrix, x ∈ S, union, list, relation chain, set, tuple or
// interval, ±, base subscript, words, expression, else text). Adding a form is one entry and its corpus cases.
import { latexToMathjs, type Translation } from "./latex.ts";
import { compileExpr, type Expr } from "./numeric.ts";
import { matchBrace } from "../common/latex.ts";

/** A parsed answer; `form` names the FORMS entry that produced it. `rel` is sides[0] ops[0] sides[1] … */
export type Value =
  & (
    | Expr
    | { kind: "text"; text: string }
    | { kind: "numeral"; digits: string; base: number }
    | { kind: "tuple"; open: string; close: string; items: Value[] }
    | { kind: "set"; items: Value[] }
    | { kind: "matrix"; rows: Value[][] }
    | { kind: "union"; parts: Value[] }
    | { kind: "rel"; ops: string[]; sides: Value[]; srcs: string[] }
  )
  & { form?: string };

const OPENERS = "([{";
const CLOSERS = ")]}";
// LaTeX relation → canonical operator (two-character forms before "<" and ">"); ≈ keeps the exact side.
export const RELATIONS: readonly [string, string][] = [
  ["\\approx", "~"],
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

/** An expression value of LaTeX source, or null when the front end or mathjs cannot read it. */
export function exprValue(src: string): Expr | null {
  try {
    const t = frontEnd(src);
    return compileExpr(t.expr, t.hasDecimal);
  } catch {
    return null;
  }
}

function textValue(s: string): Value {
  return { kind: "text", text: s.replace(/[\s{}]/g, "").toLowerCase() };
}

const CONNECTIVE = /\\l(?:and|or)(?![a-zA-Z])/;
const PLUS_MINUS = /\\(pm|mp)(?![a-zA-Z])/;
/** ± stands for both signs up to this many occurrences (2^4 values); more is read as plain text. */
const PM_LIMIT = 4;

/** What a form's matcher gets: the answer (trimmed) and the parser for its parts. */
export interface FormContext {
  rec: (part: string) => Value;
  expandPm: boolean;
}

/** One answer form: its name and a matcher returning the parsed value, or null when the form does not apply. */
export interface Form {
  name: string;
  match(s: string, ctx: FormContext): Value | null;
}

// Set members, with a ± member standing for both of its values ({1 ± √5, −2} has three members).
function setItems(parts: string[], ctx: FormContext): Value[] {
  return parts.filter((p) => p !== "").flatMap((p) => {
    const v = ctx.rec(p);
    return v.kind === "set" && ctx.expandPm && PLUS_MINUS.test(p) && !p.trim().startsWith("\\{")
      ? v.items
      : [v];
  });
}

const MATRIX = /^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^}]*\})?([\s\S]*)\\end\{\1\}$/;

function matrixValue(body: string, ctx: FormContext): Value {
  const rows = body.split(/\\\\/).map((r) => r.trim()).filter((r) => r !== "");
  return { kind: "matrix", rows: rows.map((r) => r.split("&").map((c) => ctx.rec(c))) };
}

const LABELLED = /^\s*([a-zA-Z](?:_\{?\w+\}?)?)\s*=\s*([^=<>]+)$/;

type Matrix = Extract<Value, { kind: "matrix" }>;

// Two matrices added, subtracted or multiplied (juxtaposed, \cdot, \times) and left unevaluated: their value,
// cell by cell as exact expressions; null when a cell is no expression or the shapes do not fit.
const MATRIX_PAIR =
  /^(\\begin\{([pbvB]?matrix)\}[\s\S]*?\\end\{\2\})\s*(\+|-|\\cdot|\\times)?\s*(\\begin\{([pbvB]?matrix)\}[\s\S]*\\end\{\5\})$/;
function matrixArithmetic(s: string, ctx: FormContext): Value | null {
  // Exactly two matrices: a longer chain (A - B - C) would need precedence and associativity.
  const m = s.startsWith("\\begin{") ? MATRIX_PAIR.exec(s) : null;
  if (!m || m[4].indexOf("\\begin{", 1) >= 0) return null;
  const [a, b] = [m[1], m[4]].map((x) => ctx.rec(x));
  if (a.kind !== "matrix" || b.kind !== "matrix") return null;
  const cells = (x: Matrix) =>
    x.rows.every((r) => r.length === x.rows[0].length && r.every((c) => c.kind === "expr"));
  if (!cells(a) || !cells(b)) return null;
  const src = (v: Value) => `(${(v as Expr).src})`;
  const exact = (code: string, parts: Value[]) =>
    compileExpr(code, parts.some((v) => (v as Expr).hasDecimal));
  const op = m[3] ?? "";
  let rows: (Expr | null)[][];
  if (op === "+" || op === "-") {
    if (a.rows.length !== b.rows.length || a.rows[0].length !== b.rows[0].length) return null;
    rows = a.rows.map((r, i) =>
      r.map((c, j) => exact(`${src(c)} ${op} ${src(b.rows[i][j])}`, [c, b.rows[i][j]]))
    );
  } else {
    if (a.rows[0].length !== b.rows.length) return null;
    rows = a.rows.map((r) =>
      b.rows[0].map((_, j) =>
        exact(r.map((c, k) => `${src(c)} * ${src(b.rows[k][j])}`).join(" + "), [
          ...r,
          ...b.rows.map((x) => x[j]),
        ])
      )
    );
  }
  return rows.every((r) => r.every((c) => c !== null)) ? { kind: "matrix", rows: rows as Expr[][] } : null;
}

// Whether some \frac{…}{…} is followed directly (spaces aside) by a digit.
function digitAfterFraction(s: string): boolean {
  for (let at = s.indexOf("\\frac"); at >= 0; at = s.indexOf("\\frac", at + 1)) {
    let i = at + 5;
    for (let arg = 0; arg < 2; arg++) {
      while (s[i] === " ") i++;
      if (s[i] !== "{") break;
      i = matchBrace(s, i) + 1;
      if (i === 0) return false;
      if (arg === 1) {
        while (s[i] === " ") i++;
        if (/\d/.test(s[i] ?? "")) return true;
      }
    }
  }
  return false;
}

const REALS_MINUS =
  /^\(-\\infty,\s*\\infty\)\s*(?:\\setminus|\\smallsetminus|\\backslash|-)\s*(\\\{[\s\S]*\\\}|[([][^()[\]]*[)\]])$/;

/** The value of a real constant (an expression without variables; ±Infinity for ∞), else NaN. */
export function constantOf(v: Value | undefined): number {
  if (v?.kind !== "expr" || v.vars.length > 0) return NaN;
  try {
    const x = v.fn.evaluate({});
    return typeof x === "number" ? x : NaN;
  } catch {
    return NaN;
  }
}

// A finite real constant, else NaN.
function realOf(v: Value | undefined): number {
  const x = constantOf(v);
  return Number.isFinite(x) ? x : NaN;
}

/** A tuple or interval value. */
export type Tuple = Extract<Value, { kind: "tuple" }>;

/** The interval (or pair) open lo, hi close. */
export const interval = (open: string, lo: Value, hi: Value, close: string): Tuple => ({
  kind: "tuple",
  open,
  close,
  items: [lo, hi],
});

// ℝ without the points of a set of real constants: the open intervals between them, sorted; ℝ without one
// interval (a, b]: the two rays outside it, each end's bracket flipped, (-∞, a] ∪ (b, ∞). Null when an end or a
// point is no real constant.
function realsMinus(removed: Value): Value | null {
  const [negInf, inf] = [exprValue("-\\infty")!, exprValue("\\infty")!];
  if (removed.kind === "tuple") {
    const [a, b] = removed.items;
    if (removed.items.length !== 2 || !(realOf(a) < realOf(b))) return null;
    return {
      kind: "union",
      parts: [
        interval("(", negInf, a, removed.open === "(" ? "]" : ")"),
        interval(removed.close === ")" ? "[" : "(", b, inf, ")"),
      ],
    };
  }
  const points: { v: Value; x: number }[] = [];
  for (const v of removed.kind === "set" ? removed.items : [removed]) {
    const x = realOf(v);
    if (Number.isNaN(x)) return null;
    if (!points.some((p) => p.x === x)) points.push({ v, x });
  }
  if (points.length === 0) return null;
  points.sort((p, q) => p.x - q.x);
  const ends = [negInf, ...points.map((p) => p.v), inf];
  return { kind: "union", parts: ends.slice(1).map((hi, i) => interval("(", ends[i], hi, ")")) };
}

/** The forms, in the order they are tried. */
export const FORMS: readonly Form[] = [
  { name: "empty_set", match: (s) => s === "\\emptyset" ? { kind: "set", items: [] } : null },
  { name: "matrix_arithmetic", match: matrixArithmetic },
  {
    name: "matrix",
    match: (s, ctx) => {
      // \left[\begin{array}{cc}…\end{array}\right] arrives here as "[\begin{array}…\end{array}]".
      const inner = /^[[(]\s*(\\begin\{[\s\S]*\})\s*[\])]$/.exec(s)?.[1] ?? s;
      const m = MATRIX.exec(inner);
      return m ? matrixValue(m[2], ctx) : null;
    },
  },
  {
    name: "element_of",
    match: (s, ctx) => {
      const inSet = splitTop(s, ["\\in"]);
      return inSet.parts.length === 2 && /^[a-zA-Z]$/.test(inSet.parts[0]) ? ctx.rec(inSet.parts[1]) : null;
    },
  },
  {
    // Relations joined by \lor / \land ("or" / "and" between inequalities, see normalize.ts): a disjunction
    // of conjunctions ("and" binds tighter), compared as the union / intersection it states (compare.ts).
    name: "connective",
    match: (s, ctx) => {
      if (!CONNECTIVE.test(s)) return null;
      const or = splitTop(s, ["\\lor"]);
      if (or.parts.length > 1) return { kind: "set", form: "disjunction", items: or.parts.map(ctx.rec) };
      const and = splitTop(s, ["\\land"]);
      return and.parts.length > 1
        ? { kind: "set", form: "conjunction", items: and.parts.map(ctx.rec) }
        : null;
    },
  },
  {
    // ℝ without finitely many points, \mathbb{R}\setminus\{-1, 3\} (ℝ is (-\infty,\infty) by now): the union of
    // the open intervals between them, (-∞, -1) ∪ (-1, 3) ∪ (3, ∞), as the same set is usually written.
    name: "reals_minus_points",
    match: (s, ctx) => {
      const m = REALS_MINUS.exec(s);
      return m ? realsMinus(ctx.rec(m[1])) : null;
    },
  },
  {
    name: "union",
    match: (s, ctx) => {
      const union = splitTop(s, ["\\cup"]);
      return union.parts.length > 1 ? { kind: "union", parts: union.parts.map(ctx.rec) } : null;
    },
  },
  {
    // Solutions written as groups of labelled values, "p=5,q=2; p=7,q=2": each group is the ordered tuple of its
    // values (every group names the same unknowns in the same order), and the groups are a set: (5,2), (7,2).
    name: "labelled_groups",
    match: (s, ctx) => {
      const groups = splitTop(s, [";"]).parts.map((g) =>
        splitTop(g, [","]).parts.map((x) => LABELLED.exec(x))
      );
      if (groups.length < 2 || groups[0].length < 2) return null;
      const names = (g: (RegExpExecArray | null)[]) => g.map((m) => m?.[1]).join(",");
      const first = names(groups[0]);
      if (groups.some((g) => g.some((m) => m === null) || names(g) !== first)) return null;
      const items = groups.map((g): Value => ({
        kind: "tuple",
        open: "(",
        close: ")",
        items: g.map((m) => ctx.rec(m![2])),
      }));
      return { kind: "set", items };
    },
  },
  {
    name: "list",
    match: (s, ctx) => {
      const list = splitTop(s, [",", ";"]);
      return list.parts.length > 1 ? { kind: "set", items: setItems(list.parts, ctx) } : null;
    },
  },
  {
    name: "relation",
    match: (s, ctx) => {
      const rel = splitTop(s, RELATIONS.map(([l]) => l));
      if (rel.parts.length < 2) return null;
      const ops = rel.hits.map((h) => RELATIONS.find(([l]) => l === h)![1]);
      return { kind: "rel", ops, sides: rel.parts.map(ctx.rec), srcs: rel.parts };
    },
  },
  {
    name: "set",
    match: (s, ctx) => {
      if (s.startsWith("\\{") && s.endsWith("\\}") && outerPair(s)) {
        // Set-builder notation {x | x > 2} (also \mid, :) is its condition, compared as an inequality.
        const builder = /^\s*[a-zA-Z]\s*(?:\||\\mid|:)\s*([\s\S]+)$/.exec(s.slice(2, -2));
        if (builder) return ctx.rec(builder[1]);
        return { kind: "set", items: setItems(splitTop(s.slice(2, -2), [",", ";"]).parts, ctx) };
      }
      // "{1,3}" for \{1,3\}: plain braces holding a top-level comma are a set too.
      if (s.startsWith("{") && s.endsWith("}") && outerPair(s)) {
        const parts = splitTop(s.slice(1, -1), [",", ";"]).parts;
        return parts.length > 1 ? { kind: "set", items: setItems(parts, ctx) } : null;
      }
      return null;
    },
  },
  {
    name: "tuple_interval",
    match: (s, ctx) => {
      if (!("([".includes(s[0]) && ")]".includes(s[s.length - 1]) && outerPair(s))) return null;
      const inner = s.slice(1, -1);
      const items = splitTop(inner, [",", ";"]).parts;
      if (items.length > 1) {
        return { kind: "tuple", open: s[0], close: s[s.length - 1], items: items.map(ctx.rec) };
      }
      return s[0] === "(" && s[s.length - 1] === ")" ? ctx.rec(inner) : null;
    },
  },
  {
    // a ± b stands for the set {a + b, a − b}, also inside a fraction: \frac{-1 \pm \sqrt5}{2}.
    name: "plus_minus",
    match: (s, ctx) => {
      const pm = PLUS_MINUS.exec(s);
      if (!pm || !ctx.expandPm) return null;
      const [first, second] = pm[1] === "pm" ? ["+", "-"] : ["-", "+"];
      const at = (sign: string) => s.slice(0, pm.index) + sign + s.slice(pm.index + pm[0].length);
      // Several ± give every sign choice: 1 ± 2 ± 4 is {7, -1, 3, -5}, not a set of sets.
      const items = [ctx.rec(at(first)), ctx.rec(at(second))]
        .flatMap((v) => v.kind === "set" && v.form === "plus_minus" ? v.items : [v]);
      return { kind: "set", items };
    },
  },
  {
    // A base subscript (2516_8) is a numeral in that base (2 to 36, every digit below the base); anything else
    // (52_{81}, 19_8) is compared exactly as written. A bare "2516" against 2516_8 is read in base 8.
    name: "base_subscript",
    match: (s) => {
      const base = /^([\dA-Z]+)_\{?(\d+)\}?$/.exec(s);
      if (!base) return null;
      const b = Number(base[2]);
      const valid = b >= 2 && b <= 36 && [...base[1]].every((c) => parseInt(c, 36) < b);
      // Letter digits (1A_{16}) only where they are valid: P_{20}, A_{12}… stay names (the expression form).
      if (/[A-Z]/.test(base[1])) {
        return valid && b > 10 ? { kind: "numeral", digits: base[1], base: b } : null;
      }
      return valid ? { kind: "numeral", digits: base[1], base: b } : textValue(`${base[1]}_${base[2]}`);
    },
  },
  {
    // Permutations and combinations written nPr / nCr ("5P0", "10C3"): their values, not products of letters.
    name: "permutation_notation",
    match: (s) => {
      const m = /^(\d+)\s*([PC])\s*(\d+)$/.exec(s);
      if (!m || Number(m[3]) > Number(m[1])) return null;
      return m[2] === "C"
        ? exprValue(`\\binom{${m[1]}}{${m[3]}}`)
        : exprValue(`\\frac{${m[1]}!}{${Number(m[1]) - Number(m[3])}!}`);
    },
  },
  {
    // Words are text, not products of one-letter variables (else "Navin" ≡ "Nivan", an anagram).
    name: "words",
    match: (s) =>
      s === "\\ldots" || /^[A-Za-z]{3,}(?: [A-Za-z]+)*$|^[A-Za-z]+(?: [A-Za-z]+)+$/.test(s)
        ? textValue(s)
        : null,
  },
  {
    // A digit glued after a fraction, \frac{5}{6}1: a malformed answer (a mixed number puts the whole part
    // first, 1\frac{5}{6}), far likelier than the product 5/6 · 1 it would read as; kept as text, never a value.
    name: "digit_after_fraction",
    match: (s) => s.includes("\\frac") && digitAfterFraction(s) ? textValue(s) : null,
  },
  { name: "expression", match: (s) => exprValue(s) },
  { name: "text", match: (s) => textValue(s) },
];

const cache = new Map<string, Value>();
const CACHE_MAX = 20_000;

/** Parse a normalised answer into a structured Value (cached); unparseable text becomes a `text` value. */
export function parseValue(s: string): Value {
  const hit = cache.get(s);
  if (hit) return hit;
  const count = s.match(/\\(?:pm|mp)(?![a-zA-Z])/g)?.length ?? 0;
  const v = parseForms(s, 0, count <= PM_LIMIT);
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(s, v);
  return v;
}

function parseForms(s: string, depth: number, expandPm: boolean): Value {
  s = s.trim();
  if (depth > 12) return { ...textValue(s), form: "text" };
  const ctx: FormContext = { rec: (x) => parseForms(x, depth + 1, expandPm), expandPm };
  for (const form of FORMS) {
    const v = form.match(s, ctx);
    if (v) return v.form ? v : { ...v, form: form.name };
  }
  return textValue(s); // unreachable: the last form always matches
}
