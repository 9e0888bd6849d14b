// Compact prompts and solution traces for the synthetic families, with several solution methods each.
//
// Every family has one correct method and "tempting" ones that agree with it on part of the problems and are
// systematically wrong on the rest (left-to-right evaluation ignores precedence; a subtraction that drops the
// minus sign; a last-digit modulus shortcut that only holds for small numbers or m in {2, 5}; ...). The base
// model is trained on a mix of them, so its samples disagree with each other and are sometimes wrong, and RL
// that rewards a shortcut where it happens to be right also pushes it up where it is wrong.
import type { MathRecord } from "../../../datasets/mod.ts";

/** A solution method of one family: the trace it writes and the answer that trace ends in. */
export interface Method {
  family: string;
  name: string;
  /** True for the method that is right on every problem. */
  correct: boolean;
  /** Short description for docs and reports. */
  about: string;
  /** Steps of the trace (joined by ";") and the final answer; throws on params the method cannot handle. */
  solve(params: Record<string, unknown>): { steps: string[]; answer: string };
}

/** Families the traces support, with the difficulties whose params they understand. */
export const TRACE_FAMILIES: Readonly<Record<string, { maxDifficulty: number }>> = {
  arith: { maxDifficulty: 5 },
  mod: { maxDifficulty: 2 },
  linear: { maxDifficulty: 3 },
  gcd: { maxDifficulty: 5 },
};

/** Integer parameter `key`, or a one-line error naming it. */
function int(params: Record<string, unknown>, key: string): number {
  const v = params[key];
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new Error(`trace params: '${key}' must be an integer`);
  }
  return v;
}

/** One binary step "x op y=z" with its value; `dropSign` writes |x − y| for a negative difference. */
function step(x: number, op: string, y: number, dropSign = false): { text: string; value: number } {
  let value = op === "+" ? x + y : op === "-" ? x - y : x * y;
  if (dropSign && value < 0) value = -value;
  return { text: `${x}${op}${y}=${value}`, value };
}

/** Evaluate an arith record's terms/ops: products first (when `precedence`), then left to right, by steps. */
function arithSteps(p: Record<string, unknown>, precedence: boolean, dropSign: boolean) {
  const steps: string[] = [], { terms, ops } = arithParams(p);
  let ts = [...terms], os = [...ops];
  if (precedence) {
    for (let i = 0; i < os.length;) {
      if (os[i] !== "*") {
        i++;
        continue;
      }
      const s = step(ts[i], "*", ts[i + 1]);
      steps.push(s.text);
      ts = [...ts.slice(0, i), s.value, ...ts.slice(i + 2)];
      os = [...os.slice(0, i), ...os.slice(i + 1)];
    }
  }
  let acc = ts[0];
  for (let i = 0; i < os.length; i++) {
    const s = step(acc, os[i], ts[i + 1], dropSign);
    steps.push(s.text);
    acc = s.value;
  }
  return { steps, answer: String(acc) };
}

/** Terms and ops of an arith record. */
function arithParams(p: Record<string, unknown>): { terms: number[]; ops: string[] } {
  const terms = p.terms, ops = p.ops;
  if (!Array.isArray(terms) || !Array.isArray(ops) || terms.length !== ops.length + 1) {
    throw new Error("trace params: arith needs terms (n+1 integers) and ops (n of + - *)");
  }
  return { terms: terms as number[], ops: ops as string[] };
}

/** Euclid's remainders "x%y=r" from (max, min) until r = 0; the answer is the last divisor. */
function euclid(a: number, b: number): { steps: string[]; answer: string } {
  let x = Math.max(a, b), y = Math.min(a, b);
  const steps: string[] = [];
  while (y > 0) {
    steps.push(`${x}%${y}=${x % y}`);
    [x, y] = [y, x % y];
  }
  return { steps, answer: String(x) };
}

/** `a mod m` by the largest multiple of m not above a: "m*q=mq;a-mq=r". */
function divideMod(a: number, m: number): { steps: string[]; answer: string } {
  const q = Math.floor(a / m);
  return { steps: [`${m}*${q}=${m * q}`, `${a}-${m * q}=${a - m * q}`], answer: String(a - m * q) };
}

/** Integer division toward zero, as the shortcut methods write it. */
function divide(x: number, y: number): { text: string; value: number } {
  const value = Math.trunc(x / y);
  return { text: `${x}/${y}=${value}`, value };
}

/** All methods, by family. */
const METHODS: readonly Method[] = [
  {
    family: "arith",
    name: "precedence",
    correct: true,
    about: "products first, then sums and differences left to right",
    solve: (p) => arithSteps(p, true, false),
  },
  {
    family: "arith",
    name: "left-to-right",
    correct: false,
    about: "every operation left to right, ignoring precedence (wrong when a product follows + or -)",
    solve: (p) => arithSteps(p, false, false),
  },
  {
    family: "arith",
    name: "drop-sign",
    correct: false,
    about: "correct order, but a negative difference loses its minus sign (wrong when a step goes below 0)",
    solve: (p) => arithSteps(p, true, true),
  },
  {
    family: "mod",
    name: "divide",
    correct: true,
    about: "subtract the largest multiple of m",
    solve: (p) => divideMod(int(p, "a"), int(p, "m")),
  },
  {
    family: "mod",
    name: "last-digit",
    correct: false,
    about: "reduce only the last digit (right for a < 10, or m = 2, 5; wrong otherwise)",
    solve: (p) => {
      const a = int(p, "a"), m = int(p, "m"), d = a % 10;
      return { steps: [`${a}->${d}`, ...divideMod(d, m).steps], answer: String(d % m) };
    },
  },
  {
    family: "linear",
    name: "isolate",
    correct: true,
    about: "move b across (c - b), then divide by a",
    solve: (p) => {
      const a = int(p, "a"), b = int(p, "b"), c = int(p, "c");
      const s = b < 0 ? step(c, "+", -b) : step(c, "-", b), d = divide(s.value, a);
      return { steps: [s.text, d.text], answer: String(d.value) };
    },
  },
  {
    family: "linear",
    name: "wrong-side",
    correct: false,
    about: "moves b across without flipping its sign (c + b), then divides (right only when b = 0)",
    solve: (p) => {
      const a = int(p, "a"), b = int(p, "b"), c = int(p, "c");
      const s = b < 0 ? step(c, "-", -b) : step(c, "+", b), d = divide(s.value, a);
      return { steps: [s.text, d.text], answer: String(d.value) };
    },
  },
  {
    family: "gcd",
    name: "euclid",
    correct: true,
    about: "Euclid's algorithm by remainders",
    solve: (p) => euclid(int(p, "a"), int(p, "b")),
  },
  {
    family: "gcd",
    name: "difference",
    correct: false,
    about: "answers |a - b| (right when the difference is the gcd, e.g. 12,18; wrong for 8,20 or a = b)",
    solve: (p) => {
      const s = step(Math.max(int(p, "a"), int(p, "b")), "-", Math.min(int(p, "a"), int(p, "b")));
      return { steps: [s.text], answer: String(s.value) };
    },
  },
  {
    family: "gcd",
    name: "smaller",
    correct: false,
    about: "answers the smaller number (right when it divides the larger one)",
    solve: (p) => {
      const x = Math.max(int(p, "a"), int(p, "b")), y = Math.min(int(p, "a"), int(p, "b"));
      return { steps: [`${x}>${y}`], answer: String(y) };
    },
  },
];

/** Methods of one family (throws for a family without traces). */
export function methodsOf(family: string): Method[] {
  const out = METHODS.filter((m) => m.family === family);
  if (out.length === 0) {
    throw new Error(
      `traces: family '${family}' has no methods (known: ${Object.keys(TRACE_FAMILIES).join(", ")})`,
    );
  }
  return out;
}

/** The "compact" prompt template: the problem text is the engine's compact prompt itself, nothing around it. */
export const COMPACT_TEMPLATE = { name: "compact", text: "{problem}" } as const;

/** The compact prompt for a synthetic record, e.g. "3+4*5=", "47%6=", "3x+4=19", "gcd(12,18)=". */
export function renderPrompt(record: MathRecord): string {
  const p = record.meta.params ?? {};
  // The compact forms and the methods cover only the simplest shape of each family; a harder shape would be
  // rendered as a different problem with a different answer, so refuse it instead.
  const extra = { mod: ["b", "e"], linear: ["k"] }[record.meta.family as string]?.filter((key) => key in p);
  if (extra?.length) {
    throw new Error(
      `traces: record ${record.id} (${record.meta.family}, difficulty ${record.meta.difficulty}) uses '${
        extra.join("', '")
      }', which the compact prompts do not express; lower tasks.difficulty for this family`,
    );
  }
  switch (record.meta.family) {
    case "arith": {
      const { terms, ops } = arithParams(p);
      return terms.map((t, i) => (i === 0 ? "" : ops[i - 1]) + t).join("") + "=";
    }
    case "mod":
      return `${int(p, "a")}%${int(p, "m")}=`;
    case "linear": {
      const b = int(p, "b");
      return `${int(p, "a")}x${b < 0 ? "-" : "+"}${Math.abs(b)}=${int(p, "c")}`;
    }
    case "gcd":
      return `gcd(${int(p, "a")},${int(p, "b")})=`;
    default:
      throw new Error(
        `traces: record ${record.id} has family '${record.meta.family}' without a compact prompt`,
      );
  }
}

/** The response text of a method: its steps, then the answer in a strict-mode marker, e.g. "4*5=20;3+20=23;\boxed{23}". */
export function renderTrace(method: Method, params: Record<string, unknown>) {
  const { steps, answer } = method.solve(params);
  return { text: [...steps, `\\boxed{${answer}}`].join(";"), answer };
}
