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
  switch (head) {
    case "Negate":
      return `-(${a[0]})`;
    case "Power":
      return `(${a[0]})^(${a[1]})`;
    case "Square":
      return `(${a[0]})^2`;
    case "Root":
      return `nthRoot(${a[0]}, ${a[1]})`;
    case "Rational":
      return `((${a[0]}) / (${a[1]}))`;
    case "Complex":
      return `(${a[0]} + ${a[1]} * i)`;
    case "Binomial":
      return `combinations(${a[0]}, ${a[1]})`;
    case "Lb":
      return `log(${a[0]}, 2)`;
    case "Lg":
      return `log10(${a[0]})`;
    case "Log":
      return a.length === 2 ? `log(${a[0]}, ${a[1]})` : `log10(${a[0]})`;
    case "Delimiter":
      if (a.length === 1) return `(${a[0]})`;
  }
  throw new LatexError(`unsupported MathJSON head ${head}`);
}

/** Translate LaTeX to mathjs syntax through compute-engine's parser (non-canonical, so no evaluation here). */
export function computeEngineToMathjs(latex: string): Translation {
  engine ??= new ComputeEngine();
  const expr = engine.parse(latex, { form: "raw" });
  const state = { hasDecimal: false };
  return { expr: serialise(expr.json as Json, state), hasDecimal: state.hasDecimal };
}
