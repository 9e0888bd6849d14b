// Hand-written LaTeX → mathjs-syntax translator for answer expressions (the front end the grader keeps; see
// docs/evaluators.md for its measured comparison with @cortex-js/compute-engine). Bounded: token count and
// nesting depth are capped, so any input fails fast with a LatexError instead of recursing without end.

/** Translation failed: the text is not an expression this front end understands. */
export class LatexError extends Error {}

/** Caps applied before anything reaches mathjs. */
const LATEX_LIMITS = { maxTokens: 600, maxDepth: 40 };

type Tok = { t: "num" | "id" | "cmd" | "op"; v: string };

// LaTeX functions → mathjs names (the rest are spelled alike).
const FUNCS: Record<string, string> = {
  ...Object.fromEntries("sin cos tan cot sec csc sinh cosh tanh exp".split(" ").map((f) => [f, f])),
  arcsin: "asin",
  arccos: "acos",
  arctan: "atan",
  ln: "log",
  log: "log10",
};
const CONSTS: Record<string, string> = { pi: "pi", infty: "Infinity" };
// Greek letters become plain variable names so `\alpha + 1` still parses as an expression in one variable.
export const GREEK = new Set(
  ("alpha beta gamma delta epsilon varepsilon zeta eta theta lambda mu nu xi rho sigma tau phi varphi chi psi omega " +
    // Capital Greek letters (a bare capital is a quantity: ΔE, Ω) and the reduced Planck constant.
    "Gamma Delta Theta Lambda Xi Sigma Phi Psi Omega hbar").split(" "),
);
const MUL_CMDS = new Set(["cdot", "times", "ast"]);

// One token after spacing: a command (letters, else one character such as \{ or \,), a number, a letter, an
// operator; else the character no token starts with, or the end.
const TOKEN = /[ \t\n]*(?:\\([a-zA-Z]+|[\s\S]?)|([0-9.]+)|([a-zA-Z])|([-+*/^_!()[\]{}|,=<>'])|([\s\S])|$)/y;

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    const [, cmd, num, id, op, bad] = TOKEN.exec(src)!;
    if (bad !== undefined) throw new LatexError(`unexpected character '${bad}'`);
    if (cmd === "{" || cmd === "}") out.push({ t: "op", v: cmd === "{" ? "(" : ")" });
    else if (cmd !== undefined) {
      if (!",;:! ".includes(cmd)) out.push({ t: "cmd", v: cmd });
    } else if (num !== undefined) {
      if (num === "." || (num.match(/\./g) ?? []).length > 1) throw new LatexError(`bad number '${num}'`);
      out.push({ t: "num", v: num.startsWith(".") ? "0" + num : num });
    } else if (id !== undefined) out.push({ t: "id", v: id });
    else if (op !== undefined) out.push({ t: "op", v: op });
    if (out.length > LATEX_LIMITS.maxTokens) throw new LatexError("expression too long");
  }
  return out;
}

/** The translated expression plus what the comparison needs to know about it. */
export interface Translation {
  expr: string; // mathjs syntax
  hasDecimal: boolean; // a decimal literal appeared (compare with tolerance, not exactly)
}

class Parser {
  pos = 0;
  depth = 0;
  hasDecimal = false;
  inAbs = 0;
  constructor(readonly toks: Tok[]) {}

  peek(): Tok | undefined {
    return this.toks[this.pos];
  }
  isOp(v: string): boolean {
    const t = this.peek();
    return t !== undefined && t.t === "op" && t.v === v;
  }
  isCmd(...names: string[]): boolean {
    const t = this.peek();
    return t !== undefined && t.t === "cmd" && names.includes(t.v);
  }
  // Consume the operator v when it comes next.
  eat(v: string): boolean {
    if (!this.isOp(v)) return false;
    this.pos++;
    return true;
  }
  expect(v: string): void {
    if (!this.eat(v)) throw new LatexError(`expected '${v}'`);
  }
  enter(): void {
    if (++this.depth > LATEX_LIMITS.maxDepth) throw new LatexError("expression nested too deeply");
  }

  expr(): string {
    this.enter();
    let out = this.term();
    while (this.isOp("+") || this.isOp("-")) {
      const op = this.toks[this.pos++].v;
      out = `${out} ${op} ${this.term()}`;
    }
    this.depth--;
    return out;
  }

  term(): string {
    let out = this.unary();
    for (;;) {
      if (this.isOp("*") || this.isCmd(...MUL_CMDS)) {
        this.pos++;
        out = `${out} * ${this.unary()}`;
      } else if (this.isOp("/") || this.isCmd("div")) {
        this.pos++;
        out = `${out} / ${this.unary()}`;
      } else if (this.startsAtom()) {
        out = `${out} * ${this.power()}`;
      } else break;
    }
    return out;
  }

  unary(): string {
    if (!this.isOp("-") && !this.isOp("+")) return this.power();
    const negate = this.toks[this.pos++].v === "-";
    return negate ? `-(${this.unary()})` : this.unary();
  }

  startsAtom(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.t === "num" || t.t === "id") return true;
    if (t.t === "op") return t.v === "(" || t.v === "[" || t.v === "{" || (t.v === "|" && this.inAbs === 0);
    return !MUL_CMDS.has(t.v) && !["div", "right", "end", "rfloor", "rceil"].includes(t.v);
  }

  power(): string {
    const base = this.postfix();
    if (!this.eat("^")) return base;
    return `(${base})^(${this.eat("-") ? `-(${this.group()})` : this.group()})`;
  }

  postfix(): string {
    let out = this.atom();
    while (this.eat("!")) out = `fact(${out})`;
    if (this.isOp("'")) throw new LatexError("primes are not expressions");
    return out;
  }

  // A braced group, or a single token (as in x^2 or \frac12).
  group(): string {
    if (this.eat("{")) {
      const inner = this.expr();
      this.expect("}");
      return inner;
    }
    const t = this.peek();
    if (t?.t === "num") {
      // \frac12 and x^23: a bare group argument is a single digit.
      this.pos++;
      if (t.v.length > 1 && !t.v.includes(".")) {
        this.toks.splice(this.pos, 0, { t: "num", v: t.v.slice(1) });
        return t.v[0];
      }
      if (t.v.includes(".")) this.hasDecimal = true;
      return t.v;
    }
    return this.atom();
  }

  atom(): string {
    this.enter();
    const out = this.atomInner();
    this.depth--;
    return out;
  }

  atomInner(): string {
    const t = this.peek();
    if (!t) throw new LatexError("unexpected end of expression");
    this.pos++;
    if (t.t === "num") {
      if (t.v.includes(".")) this.hasDecimal = true;
      return t.v;
    }
    if (t.t === "id") return this.subscripted(t.v);
    if (t.t === "op") {
      if (t.v === "(" || t.v === "[" || t.v === "{") {
        const inner = this.expr();
        this.expect(t.v === "(" ? ")" : t.v === "[" ? "]" : "}");
        return `(${inner})`;
      }
      if (t.v === "|") {
        this.inAbs++;
        const inner = this.expr();
        this.inAbs--;
        this.expect("|");
        return `abs(${inner})`;
      }
      throw new LatexError(`unexpected '${t.v}'`);
    }
    return this.command(t.v);
  }

  subscripted(name: string): string {
    if (!this.eat("_")) return name;
    const t = this.peek();
    let sub = "";
    if (this.eat("{")) {
      while (this.peek() && !this.isOp("}")) {
        const s = this.toks[this.pos++];
        if (s.t !== "num" && s.t !== "id") throw new LatexError("complex subscript");
        sub += s.v;
      }
      this.expect("}");
    } else if (t && (t.t === "num" || t.t === "id")) {
      this.pos++;
      sub = t.v;
    } else throw new LatexError("bad subscript");
    return `${name}_${sub}`;
  }

  command(name: string): string {
    if (name === "frac") return `(${this.group()}) / (${this.group()})`;
    if (name === "sqrt") {
      if (this.eat("[")) {
        const index = this.expr();
        this.expect("]");
        return `nthRoot(${this.group()}, ${index})`;
      }
      return `sqrt(${this.group()})`;
    }
    if (name === "binom") return `combinations(${this.group()}, ${this.group()})`;
    if (name === "lfloor" || name === "lceil") {
      const inner = this.expr();
      if (!this.isCmd(name === "lfloor" ? "rfloor" : "rceil")) throw new LatexError(`unclosed \\${name}`);
      this.pos++;
      return `${name === "lfloor" ? "floor" : "ceil"}(${inner})`;
    }
    if (name === "left" || name === "right") return this.atom();
    if (name === "lvert" || name === "vert") {
      this.pos--;
      this.toks[this.pos] = { t: "op", v: "|" };
      return this.atom();
    }
    if (name in FUNCS) return this.func(FUNCS[name], name === "log");
    if (name in CONSTS) return CONSTS[name];
    if (GREEK.has(name)) return this.subscripted(name);
    throw new LatexError(`unsupported command \\${name}`);
  }

  // \sin x, \sin(x), \sin^2 x, \log_2 8: the argument is a parenthesised group or an implicit product.
  func(fn: string, isLog: boolean): string {
    let base: string | null = null;
    let power: string | null = null;
    if (isLog && this.eat("_")) base = this.group();
    if (this.eat("^")) power = this.group();
    const braced = this.isOp("(") || this.isOp("{");
    let arg = braced ? this.atom() : this.power();
    while (!braced && (this.peek()?.t === "id" || this.peek()?.t === "num")) arg = `${arg} * ${this.power()}`;
    const call = base !== null ? `log(${arg}, ${base})` : `${fn}(${arg})`;
    return power !== null ? `(${call})^(${power})` : call;
  }
}

/** Translate a normalised LaTeX expression into mathjs syntax; throws LatexError when it cannot. */
export function latexToMathjs(latex: string): Translation {
  const toks = tokenize(latex);
  if (toks.length === 0) throw new LatexError("empty expression");
  const p = new Parser(toks);
  const expr = p.expr();
  if (p.pos < toks.length) throw new LatexError(`unexpected '${toks[p.pos].v}'`);
  return { expr, hasDecimal: p.hasDecimal };
}
