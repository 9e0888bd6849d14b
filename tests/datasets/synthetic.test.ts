import { assertEquals, ok, throws } from "../assert.ts";
import {
  evalArith,
  FAMILIES,
  fracLatex,
  gcd,
  generateTasks,
  MAX_DIFFICULTY,
  powMod,
  splitOf,
} from "../../datasets/synthetic.ts";
import type { MathRecord } from "../../datasets/record.ts";

/** Recompute a record's answer from its params, independently of the generator's own bookkeeping. */
function solve(r: MathRecord): string {
  const p = r.meta.params as Record<string, number> & { terms: number[]; ops: string[] };
  switch (r.meta.family) {
    case "arith":
      return String(
        Function(`"use strict"; return (${p.terms.map((t, i) => (i ? p.ops[i - 1] : "") + t).join("")});`)(),
      );
    case "frac":
      return fracLatex(p.num, p.den);
    case "linear":
      return String(p.x);
    case "mod":
      return String(p.e !== undefined ? powMod(p.a, p.e, p.m) : ((p.b ?? 1) * p.a) % p.m);
    case "gcd":
      return String(gcd(p.a, p.b));
  }
  throw new Error(`unknown family ${r.meta.family}`);
}

Deno.test("synthetic: same options give identical records; another seed differs", () => {
  const a = generateTasks({ seed: 7, split: "train", count: 200, difficulty: 3 });
  const b = generateTasks({ seed: 7, split: "train", count: 200, difficulty: 3 });
  const c = generateTasks({ seed: 8, split: "train", count: 200, difficulty: 3 });
  assertEquals(a, b);
  ok(a.filter((r, i) => r.problem !== c[i].problem).length > 150);
});

Deno.test("synthetic: a larger count extends a smaller one", () => {
  const small = generateTasks({ seed: 3, split: "test", count: 40 });
  const large = generateTasks({ seed: 3, split: "test", count: 120 });
  assertEquals(large.slice(0, 40), small);
});

Deno.test("synthetic: train and test are disjoint across seeds and difficulties", () => {
  const test = new Set<string>();
  const train = new Set<string>();
  for (let d = 1; d <= MAX_DIFFICULTY; d++) {
    for (const seed of [1, 2]) {
      for (const r of generateTasks({ seed, split: "test", count: 100, difficulty: d })) test.add(r.problem);
      for (const r of generateTasks({ seed, split: "train", count: 300, difficulty: d })) {
        train.add(r.problem);
      }
    }
  }
  ok(test.size > 500 && train.size > 1500, `${test.size} test, ${train.size} train`);
  for (const p of test) ok(!train.has(p), `problem in both splits: ${p}`);
  for (const p of test) assertEquals(splitOf(p), "test");
});

Deno.test("synthetic: every answer matches an independent recomputation from params", () => {
  for (let d = 1; d <= MAX_DIFFICULTY; d++) {
    for (const r of generateTasks({ seed: 11, split: "train", count: 250, difficulty: d })) {
      assertEquals(r.answer, solve(r), `${r.id}: ${r.problem}`);
      assertEquals(r.meta.difficulty, d);
      assertEquals(r.dataset, "synthetic");
      assertEquals(r.template, "raw");
    }
  }
});

Deno.test("synthetic: linear answers satisfy the stated equation", () => {
  for (
    const r of generateTasks({ seed: 5, split: "train", count: 100, families: ["linear"], difficulty: 5 })
  ) {
    const m = r.problem.match(/^Solve for x: (\d+)x([+-]\d+)=(\d*)x([+-]\d+)\.$/);
    ok(m, r.problem);
    const x = Number(r.answer), c = m[3] === "" ? 1 : Number(m[3]);
    assertEquals(Number(m[1]) * x + Number(m[2]), c * x + Number(m[4]), r.problem);
  }
});

Deno.test("synthetic: linear params read a·x + b = k·x + c at every difficulty (k absent means 0)", () => {
  for (let d = 1; d <= MAX_DIFFICULTY; d++) {
    for (
      const r of generateTasks({ seed: 2, split: "test", count: 40, families: ["linear"], difficulty: d })
    ) {
      const p = r.meta.params as { a: number; b: number; c: number; k?: number; x: number };
      assertEquals(p.a * p.x + p.b, (p.k ?? 0) * p.x + p.c, r.problem);
      assertEquals(String(p.x), r.answer);
    }
  }
});

Deno.test("synthetic: ids, families round-robin, distinct problems, short prompts at difficulty 1", () => {
  const rs = generateTasks({ seed: 0, split: "train", count: 100 });
  assertEquals(rs.map((r) => r.meta.family), rs.map((_, i) => FAMILIES[i % FAMILIES.length]));
  assertEquals(rs[17].id, `synthetic/${FAMILIES[17 % FAMILIES.length]}/train/17`);
  assertEquals(new Set(rs.map((r) => r.problem)).size, 100);
  for (const r of rs) ok(r.problem.length + r.answer.length <= 40, r.problem);
});

Deno.test("synthetic: fraction answers are in lowest terms with the sign in front", () => {
  assertEquals(fracLatex(6, 8), "\\frac{3}{4}");
  assertEquals(fracLatex(-6, 8), "-\\frac{3}{4}");
  assertEquals(fracLatex(6, -8), "-\\frac{3}{4}");
  assertEquals(fracLatex(-14, 2), "-7");
  assertEquals(evalArith([2, 3, 4, 5], ["+", "*", "-"]), 9);
  assertEquals(powMod(3, 4, 5), 1);
});

Deno.test("synthetic: an exhausted problem space repeats instead of looping forever", () => {
  // arith at difficulty 1 has 300 problems, about 60 of them in test.
  const rs = generateTasks({ seed: 1, split: "test", count: 200, families: ["arith"] });
  assertEquals(rs.length, 200);
  const distinct = new Set(rs.map((r) => r.problem)).size;
  ok(distinct > 40 && distinct < 100, `${distinct} distinct`);
});

Deno.test("synthetic: bad options throw one-line errors naming the field", () => {
  throws(() => generateTasks({ seed: 1, split: "train", count: 1, difficulty: 9 }), /difficulty/);
  throws(() => generateTasks({ seed: 1, split: "dev" as "train", count: 1 }), /split/);
  throws(() => generateTasks({ seed: 1, split: "train", count: -1 }), /count/);
  throws(() => generateTasks({ seed: 1, split: "train", count: 1, families: ["trig" as "arith"] }), /trig/);
});
