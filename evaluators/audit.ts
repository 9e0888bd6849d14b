// The gold audit: can a correct answer match this reference answer at all? Grading a gold against itself cannot
// tell (a gold written as Python, np.arcsin(10/13), matches itself), so each gold is parsed into the grader's
// canonical form and written out again by a second, independent renderer (mathjs' own LaTeX output for
// expressions), as a model would box it; that rendering must grade correct against the gold in strict mode.
import { parse } from "mathjs";
import { extractGold } from "./extract.ts";
import { normalizeAnswer } from "./normalize.ts";
import { parseValue, RELATIONS, type Value } from "./forms.ts";
import { grade } from "./grade.ts";
import { GREEK } from "./latex.ts";

// mathjs names the grader's front end uses for functions mathjs' LaTeX does not spell as LaTeX.
const TEX_FUNCTIONS: Record<string, (args: string[]) => string> = {
  fact: ([n]) => `(${n})!`,
  combinations: ([n, k]) => `\\binom{${n}}{${k}}`,
  log10: ([x]) => `\\log_{10}(${x})`,
  log: (a) => a.length === 2 ? `\\log_{${a[1]}}(${a[0]})` : `\\ln(${a[0]})`,
  nthRoot: ([x, n]) => `\\sqrt[${n}]{${x}}`,
  abs: ([x]) => `|${x}|`,
  floor: ([x]) => `\\lfloor ${x} \\rfloor`,
  ceil: ([x]) => `\\lceil ${x} \\rceil`,
};

const CONSTANTS: Record<string, string> = { pi: "\\pi", Infinity: "\\infty", e: "e", i: "i" };
// Canonical relation operators back to LaTeX (the parser's table read backwards).
const RELATION_TEX = Object.fromEntries(RELATIONS.map(([tex, op]) => [op, tex]));

// A symbol as LaTeX: pi → \pi, rho_0 → \rho_{0}, C_1 → C_{1} (mathjs would write \mathrm{…} and escape "_");
// the only multi-letter names are the Greek letters the front end reads.
function symbolTex(name: string): string {
  if (CONSTANTS[name]) return CONSTANTS[name];
  const [base, ...sub] = name.split("_");
  const head = GREEK.has(base) ? `\\${base}` : base;
  return sub.length ? `${head}_{${sub.join("_")}}` : head;
}

/** Canonical LaTeX of a parsed value, written from its structure (not its source text); null if a part has none. */
export function renderValue(v: Value): string | null {
  switch (v.kind) {
    case "expr":
      return exprTex(v.src);
    case "text":
      return v.text; // words inside a structure, as the form keeps them (lower case, unspaced)
    case "numeral":
      return `${v.digits}_{${v.base}}`;
    case "tuple":
      return join(v.items, ", ", v.open, v.close);
    case "set":
      if (v.items.length === 0) return "\\emptyset";
      if (v.form === "disjunction" || v.form === "conjunction") {
        return join(v.items, v.form === "disjunction" ? " \\lor " : " \\land ", "", "");
      }
      return join(v.items, ", ", v.form === "list" ? "" : "\\{", v.form === "list" ? "" : "\\}");
    case "union":
      return join(v.parts, " \\cup ", "", "");
    case "matrix": {
      const rows = v.rows.map((r) => join(r, " & ", "", ""));
      return rows.some((r) => r === null) ? null : `\\begin{pmatrix}${rows.join(" \\\\ ")}\\end{pmatrix}`;
    }
    case "rel": {
      const sides = v.sides.map(renderValue);
      if (sides.some((s) => s === null)) return null;
      return sides.reduce((acc, s, i) => `${acc} ${RELATION_TEX[v.ops[i - 1]]} ${s}`);
    }
  }
}

function join(items: Value[], sep: string, open: string, close: string): string | null {
  const parts = items.map(renderValue);
  return parts.some((p) => p === null) ? null : `${open}${parts.join(sep)}${close}`;
}

// mathjs' LaTeX of an expression in the grader's mathjs syntax, with the few functions it spells as names
// (fact, combinations, log) written as LaTeX.
function exprTex(src: string): string | null {
  try {
    return parse(src).toTex({
      parenthesis: "auto",
      implicit: "show",
      handler: (
        node: { type: string; name?: string; fn?: { name?: string }; args?: { toTex(o: unknown): string }[] },
        options: unknown,
      ) => {
        if (node.type === "SymbolNode") return ` ${symbolTex(node.name!)} `;
        const name = node.type === "FunctionNode" ? node.fn?.name : undefined;
        const f = name === undefined ? undefined : TEX_FUNCTIONS[name];
        return f ? f(node.args!.map((a) => a.toTex(options))) : undefined;
      },
    });
  } catch {
    return null;
  }
}

/** Audit one gold (see the file comment): its rendering, and why no correct answer can match it (null: fine). */
export function auditGold(gold: string): { rendered: string | null; failure: string | null } {
  const answer = extractGold(gold);
  if (answer === null) return { rendered: null, failure: "empty" };
  const text = normalizeAnswer(answer).text;
  const value = parseValue(text);
  if (value.kind === "text") {
    // Words are a gold a model can write ("Monday", "no"); text with math in it is a gold nothing can read.
    return /^[A-Za-z ,.'-]+$/.test(text)
      ? { rendered: text, failure: null }
      : { rendered: null, failure: "unreadable" };
  }
  const rendered = renderValue(value);
  if (rendered === null) return { rendered: null, failure: "no rendering" };
  const r = grade(`The final answer is $\\boxed{${rendered}}$.`, gold, { strict: true });
  return { rendered, failure: r.correct ? null : `rendering not accepted (${r.status})` };
}

/** Audit many golds (each distinct gold once): the ones no correct answer can match, with why. */
export function auditGolds(
  golds: readonly { id: string; answer: string }[],
): { id: string; answer: string; why: string }[] {
  const seen = new Map<string, ReturnType<typeof auditGold>>();
  return golds.flatMap(({ id, answer }) => {
    let a = seen.get(answer);
    if (a === undefined) seen.set(answer, a = auditGold(answer));
    return a.failure === null
      ? []
      : [{ id, answer, why: a.rendered ? `${a.failure}: ${a.rendered}` : a.failure }];
  });
}
