// Exact rational arithmetic (BigInt numerator/denominator) over the mathjs syntax the LaTeX translator emits:
// integers, decimals (read as the exact fraction they write), + − × ÷, integer powers, n!, binomials. Anything
// else (√, π, trig, a variable without a value) has no exact value here and the caller falls back to doubles.
// Bounded: results over RATIONAL_LIMITS.bits and factorials over RATIONAL_LIMITS.factorial give null.

/** An exact rational n/d in lowest terms, d > 0. */
export interface Rational {
  n: bigint;
  d: bigint;
}

/** Caps that keep exact evaluation far below a millisecond-scale budget: 3000! has ~30 000 bits. */
const RATIONAL_LIMITS = { bits: 40_000, factorial: 3000, tokens: 400 };

const abs = (x: bigint) => (x < 0n ? -x : x);

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

// Bit length of |x| (0 for 0), from its hex digits: exact, so a power's size estimate is not 4× too coarse.
function bitsOf(x: bigint): number {
  if (x === 0n) return 0;
  const hex = abs(x).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0], 16)));
}

/** n/d reduced, sign on the numerator; null on a zero denominator or past the size cap. */
export function rat(n: bigint, d: bigint = 1n): Rational | null {
  if (d === 0n) return null;
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d);
  if (g > 1n) [n, d] = [n / g, d / g];
  if (bitsOf(n) + bitsOf(d) > RATIONAL_LIMITS.bits) return null;
  return { n, d };
}

const add = (a: Rational, b: Rational) => rat(a.n * b.d + b.n * a.d, a.d * b.d);
const sub = (a: Rational, b: Rational) => rat(a.n * b.d - b.n * a.d, a.d * b.d);
const mul = (a: Rational, b: Rational) => rat(a.n * b.n, a.d * b.d);
const div = (a: Rational, b: Rational) => rat(a.n * b.d, a.d * b.n);

/** a = b exactly. */
export const ratEqual = (a: Rational, b: Rational) => a.n === b.n && a.d === b.d;

/** |a − b| ≤ c, exactly. */
export function ratWithin(a: Rational, b: Rational, c: Rational): boolean {
  const diff = sub(a, b);
  if (diff === null) return false;
  return abs(diff.n) * c.d <= c.n * diff.d;
}

/** The decimal literal "12.345" as the exact fraction 12345/1000. */
function ratFromDecimal(lit: string): Rational | null {
  const [whole, frac = ""] = lit.split(".");
  return rat(BigInt((whole || "0") + frac), 10n ** BigInt(frac.length));
}

// Integer power with the result size estimated before computing it, so 10^{10^{10}} returns null at once.
function pow(a: Rational, e: Rational): Rational | null {
  if (e.d !== 1n) return null;
  if (a.n === 0n) return e.n > 0n ? a : null;
  if (abs(a.n) === 1n && a.d === 1n) return rat(e.n % 2n === 0n ? 1n : a.n);
  const bits = (bitsOf(a.n) + bitsOf(a.d)) * Number(abs(e.n) > 1_000_000n ? 1_000_000n : abs(e.n));
  if (bits > RATIONAL_LIMITS.bits) return null;
  const k = abs(e.n);
  return e.n >= 0n ? rat(a.n ** k, a.d ** k) : rat(a.d ** k, a.n ** k);
}

function factorial(a: Rational): Rational | null {
  if (a.d !== 1n || a.n < 0n || a.n > BigInt(RATIONAL_LIMITS.factorial)) return null;
  let r = 1n;
  for (let i = 2n; i <= a.n; i++) r *= i;
  return rat(r);
}

function binomial(a: Rational, b: Rational): Rational | null {
  if (a.d !== 1n || b.d !== 1n || a.n < 0n || b.n < 0n || b.n > a.n) return null;
  const k = b.n > a.n - b.n ? a.n - b.n : b.n;
  if (k > BigInt(RATIONAL_LIMITS.factorial)) return null;
  let r = 1n;
  for (let i = 1n; i <= k; i++) r = (r * (a.n - k + i)) / i;
  return rat(r);
}

type Tok = { t: "num" | "id" | "op"; v: string };

const tokenCache = new Map<string, Tok[] | null>();

function tokenize(src: string): Tok[] | null {
  const out: Tok[] = [];
  const re = /\s*(?:(\d+(?:\.\d*)?|\.\d+)|([A-Za-z_][A-Za-z_0-9]*)|([-+*/^(),]))/y;
  let i = 0;
  while (i < src.length) {
    re.lastIndex = i;
    const m = re.exec(src);
    if (!m) return /^\s*$/.test(src.slice(i)) ? out : null;
    out.push(m[1] ? { t: "num", v: m[1] } : m[2] ? { t: "id", v: m[2] } : { t: "op", v: m[3] });
    if (out.length > RATIONAL_LIMITS.tokens) return null;
    i = re.lastIndex;
  }
  return out;
}

// Recursive descent with mathjs precedence (^ right-associative, above unary minus); null = no exact value.
class Evaluator {
  pos = 0;
  constructor(readonly toks: Tok[], readonly scope: Record<string, Rational>) {}
  isOp(v: string) {
    const t = this.toks[this.pos];
    return t !== undefined && t.t === "op" && t.v === v;
  }
  // Consume the operator v when it comes next.
  eat(v: string): boolean {
    if (!this.isOp(v)) return false;
    this.pos++;
    return true;
  }
  expr(): Rational | null {
    let a = this.term();
    while (a && (this.isOp("+") || this.isOp("-"))) {
      const op = this.toks[this.pos++].v;
      const b = this.term();
      a = b && (op === "+" ? add(a, b) : sub(a, b));
    }
    return a;
  }
  term(): Rational | null {
    let a = this.unary();
    while (a && (this.isOp("*") || this.isOp("/"))) {
      const op = this.toks[this.pos++].v;
      const b = this.unary();
      a = b && (op === "*" ? mul(a, b) : div(a, b));
    }
    return a;
  }
  unary(): Rational | null {
    if (!this.isOp("-") && !this.isOp("+")) return this.power();
    const negate = this.toks[this.pos++].v === "-";
    const a = this.unary();
    return a && negate ? rat(-a.n, a.d) : a;
  }
  power(): Rational | null {
    const a = this.primary();
    if (!a || !this.eat("^")) return a;
    const e = this.unary();
    return e && pow(a, e);
  }
  primary(): Rational | null {
    const t = this.toks[this.pos++];
    if (!t) return null;
    if (t.t === "num") return t.v.includes(".") ? ratFromDecimal(t.v) : rat(BigInt(t.v));
    if (t.t === "op") {
      if (t.v !== "(") return null;
      const a = this.expr();
      return this.eat(")") ? a : null;
    }
    if (this.eat("(")) {
      const args: Rational[] = [];
      do {
        const a = this.expr();
        if (!a) return null;
        args.push(a);
      } while (this.eat(","));
      if (!this.eat(")")) return null;
      if (t.v === "fact" && args.length === 1) return factorial(args[0]);
      if (t.v === "combinations" && args.length === 2) return binomial(args[0], args[1]);
      return null;
    }
    return this.scope[t.v] ?? null;
  }
}

/**
 * The exact value of a translated expression (mathjs syntax) at rational values of its variables, or null
 * when it uses anything but + − × ÷, integer powers, factorials and binomials, divides by zero or hits a cap.
 */
export function exactValue(src: string, scope: Record<string, Rational> = {}): Rational | null {
  let toks = tokenCache.get(src);
  if (toks === undefined) {
    // Tokens are kept per source: an expression is evaluated at several points and graded many times.
    if (tokenCache.size >= 20_000) tokenCache.clear();
    toks = tokenize(src);
    tokenCache.set(src, toks);
  }
  if (toks === null || toks.length === 0) return null;
  const ev = new Evaluator(toks, scope);
  try {
    const v = ev.expr();
    return ev.pos === toks.length ? v : null;
  } catch {
    return null; // a RangeError from an oversized BigInt: no exact value
  }
}

/** Decimal places written in the mathjs source's decimal literals (the most of any literal); 0 for none. */
export function decimalPlaces(src: string): number {
  let most = 0;
  for (const m of src.matchAll(/\d*\.(\d+)/g)) most = Math.max(most, m[1].length);
  return most;
}
