// Procedurally generated, verifiable math tasks: the training set small from-scratch transformers can learn.
//
// Train/test disjointness is a property of the problem text, not of the seed: every problem hashes to one
// split (20% test), and generation rejects draws that hash to the other split. So no seed's train set can
// contain any seed's test problem.
import { hash32, Rng } from "../common/prng.ts";
import type { MathRecord } from "./record.ts";

/** The synthetic task families. */
export type Family = keyof typeof DRAW;

/** Easiest difficulty knob value. */
export const MIN_DIFFICULTY = 1;
/** Hardest difficulty knob value. */
export const MAX_DIFFICULTY = 5;

/** Options for `generateTasks`. */
export interface TaskOptions {
  seed: number;
  split: "train" | "test";
  count: number;
  /** Families to draw from, round-robin (default: all). */
  families?: readonly Family[];
  /** 1 (single-digit operands, one step) .. 5 (more steps, larger operands); default 1. */
  difficulty?: number;
}

/** A drawn problem before it becomes a record. */
interface Drawn {
  problem: string;
  answer: string;
  params: Record<string, unknown>;
}

const TEST_PERCENT = 20;

/** The split a problem text belongs to (a fixed hash partition: about 20% test). */
export function splitOf(problem: string): "train" | "test" {
  return ((hash32(`acebench-synthetic|${problem}`) >>> 0) % 100) < TEST_PERCENT ? "test" : "train";
}

/** Greatest common divisor of |a| and |b| (gcd(0, 0) = 0). */
export function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

/** LaTeX for the fraction num/den in lowest terms with the sign in front; integers stay bare ("-7"). */
export function fracLatex(num: number, den: number): string {
  if (den === 0) throw new RangeError("fracLatex: zero denominator");
  const g = gcd(num, den);
  let p = num / g, q = den / g;
  if (q < 0) [p, q] = [-p, -q];
  if (q === 1) return String(p);
  return `${p < 0 ? "-" : ""}\\frac{${Math.abs(p)}}{${q}}`;
}

/** Uniform integer with up to `digits` decimal digits, in [0, 10^digits − 1]. */
function digitsInt(rng: Rng, digits: number): number {
  return rng.range(0, 10 ** digits - 1);
}

/** Signed number as it appears after an operator: "+5", "-5". */
function signed(n: number): string {
  return n < 0 ? `-${-n}` : `+${n}`;
}

/** Multi-step integer arithmetic with + − ×, usual precedence; d+1 operands, 1–3 digits. */
function drawArith(rng: Rng, d: number): Drawn {
  const digits = Math.ceil(d / 2);
  const terms = [digitsInt(rng, digits)];
  const ops: string[] = [];
  for (let i = 0; i < d; i++) {
    const op = rng.pick(["+", "-", "*"]);
    ops.push(op);
    // A one-digit right factor keeps products (and answers) short.
    terms.push(op === "*" ? rng.range(2, 9) : digitsInt(rng, digits));
  }
  const text = terms.map((t, i) => (i === 0 ? "" : ops[i - 1]) + t).join("");
  return { problem: `Compute ${text}.`, answer: String(evalArith(terms, ops)), params: { terms, ops } };
}

/** Evaluate terms joined by + − × with × binding tighter. */
export function evalArith(terms: readonly number[], ops: readonly string[]): number {
  let total = 0, product = terms[0], sign = 1;
  for (let i = 0; i < ops.length; i++) {
    if (ops[i] === "*") product *= terms[i + 1];
    else {
      total += sign * product;
      sign = ops[i] === "+" ? 1 : -1;
      product = terms[i + 1];
    }
  }
  return total + sign * product;
}

/** A fraction p·k / q·k to reduce to p/q (q ≥ 2); negative numerators from difficulty 4. */
function drawFrac(rng: Rng, d: number): Drawn {
  const max = 3 + 3 * d;
  let p = 0, q = 0;
  while (q < 2 || gcd(p, q) !== 1) [p, q] = [rng.range(1, max), rng.range(2, max)];
  const k = rng.range(2, 1 + 2 * d);
  const sign = d >= 4 && rng.int(2) === 1 ? -1 : 1;
  const num = sign * p * k, den = q * k;
  return { problem: `Simplify \\frac{${num}}{${den}}.`, answer: fracLatex(num, den), params: { num, den } };
}

/** Solve a·x + b = c (integer x); from difficulty 4, a·x + b = k·x + c. `c` is always the right-hand constant. */
function drawLinear(rng: Rng, d: number): Drawn {
  const xMax = d <= 2 ? 9 : 20 * (d - 2);
  const x = d >= 3 ? rng.range(-xMax, xMax) : rng.range(0, xMax);
  const a = rng.range(2, 3 + 2 * d);
  const b = d >= 3 ? rng.range(-10 * d, 10 * d) : rng.range(0, 10 * d);
  if (d < 4) {
    const c = a * x + b;
    return { problem: `Solve for x: ${a}x${signed(b)}=${c}.`, answer: String(x), params: { a, b, c, x } };
  }
  let k = a;
  while (k === a) k = rng.range(1, 3 + 2 * d);
  const c = (a - k) * x + b;
  const rhs = `${k === 1 ? "" : k}x${signed(c)}`;
  return { problem: `Solve for x: ${a}x${signed(b)}=${rhs}.`, answer: String(x), params: { a, b, k, c, x } };
}

/** Modular arithmetic: a mod m; (a·b) mod m at 3; a^e mod m from 4. */
function drawMod(rng: Rng, d: number): Drawn {
  if (d <= 2) {
    const a = digitsInt(rng, d + 1), m = rng.range(2, d === 1 ? 9 : 13);
    return { problem: `Compute ${a} mod ${m}.`, answer: String(a % m), params: { a, m } };
  }
  if (d === 3) {
    const a = digitsInt(rng, 2), b = digitsInt(rng, 2), m = rng.range(2, 20);
    return { problem: `Compute ${a}*${b} mod ${m}.`, answer: String((a * b) % m), params: { a, b, m } };
  }
  const a = rng.range(2, d === 4 ? 19 : 99),
    e = rng.range(2, d === 4 ? 9 : 29),
    m = rng.range(2, d === 4 ? 20 : 50);
  return { problem: `Compute ${a}^${e} mod ${m}.`, answer: String(powMod(a, e, m)), params: { a, e, m } };
}

/** a^e mod m by square-and-multiply (m < 2^26 keeps products exact in doubles). */
export function powMod(a: number, e: number, m: number): number {
  let result = 1 % m, base = a % m;
  for (; e > 0; e >>= 1) {
    if (e & 1) result = (result * base) % m;
    base = (base * base) % m;
  }
  return result;
}

/** gcd(g·x, g·y) with a shared factor g, so the answer is usually not 1. */
function drawGcd(rng: Rng, d: number): Drawn {
  const g = rng.range(1, 3 * d + 2), max = 4 * d + 5;
  const a = g * rng.range(1, max), b = g * rng.range(1, max);
  return { problem: `Compute gcd(${a},${b}).`, answer: String(gcd(a, b)), params: { a, b } };
}

const DRAW = {
  arith: drawArith,
  frac: drawFrac,
  linear: drawLinear,
  mod: drawMod,
  gcd: drawGcd,
};

/** All families, in the round-robin order `generateTasks` uses. */
export const FAMILIES = Object.keys(DRAW) as readonly Family[];

/** Fresh draws tried before a family counts as exhausted at this difficulty (then repeats are allowed). */
const FRESH_ATTEMPTS = 2000;

/**
 * Generate `count` synthetic records; a pure function of the options. Families rotate round-robin; problems
 * are distinct within a call until a family's problem space (for the split and difficulty) runs out, after
 * which that family repeats problems. A call with a larger count extends the smaller one (same prefix).
 */
export function generateTasks(options: TaskOptions): MathRecord[] {
  const { seed, split, count } = options;
  const families = options.families ?? FAMILIES;
  const difficulty = options.difficulty ?? MIN_DIFFICULTY;
  checkOptions(options, families, difficulty);
  const streams = new Map(families.map((f) => [f, stream(seed, `${split}|${f}|${difficulty}`)]));
  const seen = new Set<string>();
  const exhausted = new Set<Family>();
  const out: MathRecord[] = [];
  for (let i = 0; i < count; i++) {
    const family = families[i % families.length];
    const rng = streams.get(family)!;
    let drawn: Drawn | null = null;
    for (let attempt = 0; drawn === null; attempt++) {
      const d = DRAW[family](rng, difficulty);
      if (splitOf(d.problem) !== split) continue;
      if (!seen.has(d.problem) || exhausted.has(family)) drawn = d;
      else if (attempt >= FRESH_ATTEMPTS) {
        exhausted.add(family);
        drawn = d;
      }
    }
    seen.add(drawn.problem);
    out.push({
      id: `synthetic/${family}/${split}/${i}`,
      dataset: "synthetic",
      problem: drawn.problem,
      answer: drawn.answer,
      template: "raw",
      meta: { family, difficulty, params: drawn.params, split, seed },
    });
  }
  return out;
}

/** The stream for one (seed, label). A freshly seeded xoroshiro128+ gives nearly equal first draws for
 * nearby seeds (Rng.seeded(s).float() ≈ 1 for small s), so the first 16 draws are skipped. */
function stream(seed: number, label: string): Rng {
  const rng = Rng.seeded(seed).derive(label);
  for (let i = 0; i < 16; i++) rng.float();
  return rng;
}

/** Reject bad options with a one-line error naming the field. */
function checkOptions(
  { seed, split, count }: TaskOptions,
  families: readonly Family[],
  difficulty: number,
): void {
  const fail = (why: string): never => {
    throw new RangeError(`generateTasks: ${why}`);
  };
  if (!Number.isInteger(seed)) fail(`seed must be an integer, got ${seed}`);
  if (split !== "train" && split !== "test") fail(`split must be "train" or "test", got '${split}'`);
  if (!Number.isInteger(count) || count < 0) fail(`count must be a non-negative integer, got ${count}`);
  if (!Number.isInteger(difficulty) || difficulty < MIN_DIFFICULTY || difficulty > MAX_DIFFICULTY) {
    fail(`difficulty must be an integer in [${MIN_DIFFICULTY}, ${MAX_DIFFICULTY}], got ${difficulty}`);
  }
  if (families.length === 0) fail("families must not be empty");
  const unknown = families.find((f) => !(f in DRAW));
  if (unknown !== undefined) fail(`unknown family '${unknown}' (known: ${FAMILIES.join(", ")})`);
}
