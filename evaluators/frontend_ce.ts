// The alternative LaTeX front end measured by `deno task bench grader --frontend-compare`:
// @cortex-js/compute-engine parses LaTeX to MathJSON, which is serialised here to mathjs syntax so both
// front ends feed the same comparison code.
import { ComputeEngine } from "@cortex-js/compute-engine";
import { LatexError, type Translation } from "./latex.ts";

let engine: ComputeEngine | null = null;

const SYMBOLS: Record<string, string> = {
  Pi: "pi",
  ExponentialE: "e",
  ImaginaryUnit: "i",
  PositiveInfinity: "Infinity",
  NegativeInfinity: "-Infinity",
  ComplexInfinity: "Infinity",
  Half: "0.5",
};
// MathJSON heads of one argument → mathjs functions (the rest are the head in lower case).
const UNARY: Record<string, string> = {
  ...Object.fromEntries("Sqrt Abs Sin Cos Tan Cot Sec Csc Exp".split(" ").map((h) => [h, h.toLowerCase()])),
  Arcsin: "asin",
  Arccos: "acos",
  Arctan: "atan",
  Ln: "log",
  Factorial: "fact",
};
const INFIX: Record<string, string> = {
  Add: " + ",
  Multiply: " * ",
  InvisibleOperator: " * ", // non-canonical implicit product: 3\sqrt{13}, 2k
  Subtract: " - ",
  Divide: " / ",
};

// The other heads, by their arguments (undefined: a form this serialiser does not handle).
const HEADS: Record<string, (a: string[]) => string | undefined> = {
  Negate: ([x]) => `-(${x})`,
  Power: ([x, y]) => `(${x})^(${y})`,
  Square: ([x]) => `(${x})^2`,
  Root: ([x, n]) => `nthRoot(${x}, ${n})`,
  Rational: ([p, q]) => `((${p}) / (${q}))`,
  Complex: ([re, im]) => `(${re} + ${im} * i)`,
  Binomial: ([n, k]) => `combinations(${n}, ${k})`,
  Lb: ([x]) => `log(${x}, 2)`,
  Lg: ([x]) => `log10(${x})`,
  Log: (a) => (a.length === 2 ? `log(${a[0]}, ${a[1]})` : `log10(${a[0]})`),
  Delimiter: (a) => (a.length === 1 ? `(${a[0]})` : undefined),
};

type Json = number | string | { num: string } | Json[];

function serialise(j: Json, state: { hasDecimal: boolean }): string {
  if (typeof j === "number") {
    if (!Number.isInteger(j)) state.hasDecimal = true;
    return j < 0 ? `(${j})` : String(j);
  }
  if (typeof j === "string") {
    if (j in SYMBOLS) return SYMBOLS[j];
    if (/^'.*'$/.test(j)) throw new LatexError(`string ${j}`);
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(j)) throw new LatexError(`symbol ${j}`);
    return j;
  }
  if (!Array.isArray(j)) {
    if (j.num.includes(".")) state.hasDecimal = true;
    return `(${j.num.replace(/[dn]$/, "")})`;
  }
  const [head, ...args] = j as [string, ...Json[]];
  const a = args.map((x) => serialise(x, state));
  if (head in INFIX) return `(${a.join(INFIX[head])})`;
  if (head in UNARY && a.length === 1) return `${UNARY[head]}(${a[0]})`;
  const out = Object.hasOwn(HEADS, head) ? HEADS[head](a) : undefined;
  if (out === undefined) throw new LatexError(`unsupported MathJSON head ${head}`);
  return out;
}

/** Translate LaTeX to mathjs syntax through compute-engine's parser (non-canonical, so no evaluation here). */
export function computeEngineToMathjs(latex: string): Translation {
  engine ??= new ComputeEngine();
  const expr = engine.parse(latex, { form: "raw" });
  const state = { hasDecimal: false };
  return { expr: serialise(expr.json as Json, state), hasDecimal: state.hasDecimal };
}
