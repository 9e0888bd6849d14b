import { assertEquals, ok } from "../assert.ts";
import { extractAnswer, grade, isEquivalent } from "../../evaluators/mod.ts";
import { Rng } from "../../common/prng.ts";
import { adversarialCases } from "../../bench/perf/grader.ts";

Deno.test("extract: each rule reports itself", () => {
  const rule = (text: string, strict = false) => extractAnswer(text, { strict }).rule;
  assertEquals(rule("so \\boxed{3}"), "boxed");
  assertEquals(rule("so \\boxed 3"), "boxed_bare");
  assertEquals(rule("so \\boxed{}"), "boxed_empty");
  assertEquals(rule("so \\boxed{3"), "boxed_unclosed");
  assertEquals(rule("work\nAnswer: 3"), "answer_line");
  assertEquals(rule("The final answer is $3$. I hope it is correct."), "final_answer_is");
  assertEquals(rule("so the answer is 3"), "answer_is");
  assertEquals(rule("We are done now.\n$$3$$"), "last_line_math");
  assertEquals(rule("3"), "bare");
  assertEquals(rule("3", true), "no_answer");
  assertEquals(rule("this is a long piece of prose with the number 3 in it", true), "no_answer");
  assertEquals(rule("this is a long piece of prose with the number 3 in it"), "final_sentence_number");
  assertEquals(rule("So the total is $42$."), "final_sentence_math");
  assertEquals(rule("The total is 42. I hope this helps!"), "final_sentence_number");
  assertEquals(rule("The total is 42. Then we stop here."), "no_answer");
  assertEquals(rule("So x = 14 and y = 15 is not a solution."), "no_answer");
  assertEquals(
    extractAnswer("The final answer is $\\frac{1}{2}$. I hope it is correct.").answer,
    "\\frac{1}{2}",
  );
  assertEquals(extractAnswer("\\boxed{\\{1, 2\\}}").answer, "\\{1, 2\\}");
});

Deno.test("grade: result shape and status classes", () => {
  assertEquals(grade("\\boxed{2}", "2"), { correct: true, status: "correct", extracted: "2", rule: "boxed" });
  assertEquals(grade("\\boxed{3}", "2").status, "wrong");
  assertEquals(grade("words words words words words", "2").status, "no_answer");
  assertEquals(grade("\\boxed{\\frac{}{}\\unknown}", "2").status, "parse_error");
  assertEquals(grade("\\boxed{2}", "").status, "parse_error");
  ok(isEquivalent("\\frac12", "0.5"));
  ok(!isEquivalent("\\frac12", "0.51"));
});

// The inputs that were once slow (bench/perf/grader.ts ADVERSARIAL; their latency is measured by `deno task bench
// grader`, never timed here): each gets a verdict and never throws.
for (const [family, cases] of Object.entries(adversarialCases())) {
  Deno.test(`grade: adversarial inputs (${family}) get a verdict`, () => {
    for (const c of cases) {
      const r = grade(c.prediction, c.gold);
      ok(["correct", "wrong", "no_answer", "parse_error"].includes(r.status), c.prediction.slice(0, 30));
    }
  });
}

Deno.test("grade: a repeated box and hundreds of \\pm grade right", () => {
  assertEquals(grade("\\boxed{1}".repeat(200_000), "1").correct, true);
  const pm = (n: number, d: string) => Array(n).fill(d).join("\\pm");
  // Up to four ± expand to every sign choice; more are compared as written.
  ok(grade("\\boxed{1 \\pm 2 \\pm 4}", "-5, -1, 3, 7").correct);
  ok(grade("\\boxed{" + pm(8, "1") + "}", pm(8, "1")).correct);
  ok(!grade("\\boxed{" + pm(8, "1") + "}", pm(8, "2")).correct);
});

Deno.test("grade: never throws on seeded random junk built from LaTeX fragments", () => {
  const rng = Rng.seeded(2024);
  const parts = [
    "\\frac",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\\sqrt",
    "^",
    "_",
    "1",
    "x",
    "\\pi",
    "=",
    ",",
    "\\pm",
    "\\{",
    "\\}",
    "\\boxed{",
    "\\left(",
    "\\right]",
    "!",
    "-",
    "+",
    "\\infty",
    "\\cup",
    "<",
    "\\le",
    "&",
    "\\\\",
    "\\begin{pmatrix}",
    "\\end{pmatrix}",
    "$",
    "\\text{",
    "0.5",
    "%",
    "i",
    "e",
    "|",
    "\\cdot",
    "/",
    " ",
  ];
  for (let t = 0; t < 1500; t++) {
    const len = 1 + rng.int(25);
    const s = Array.from({ length: len }, () => rng.pick(parts)).join("");
    const gold = Array.from({ length: 1 + rng.int(8) }, () => rng.pick(parts)).join("");
    const r = grade(`\\boxed{${s}}`, gold);
    ok(
      typeof r.correct === "boolean" && r.correct === (r.status === "correct"),
      JSON.stringify([s, gold, r]),
    );
    // Every answer matches itself (the gold is extracted the same way) unless it is unreadable; junk that
    // closes the box and opens another ("…}, \\boxed{…") is several boxes, which may read as a hedge.
    const oneBox = !s.includes("\\boxed");
    if (oneBox && r.status !== "no_answer" && grade(`\\boxed{${s}}`, `\\boxed{${s}}`).status === "wrong") {
      throw new Error(`self-match failed for ${JSON.stringify(s)}`);
    }
  }
});

Deno.test("grade: explain names the extraction rule, normalised sides, their forms, rules fired, the comparison", () => {
  const r = grade("Thus Charlie earns \\(\\$440\\) in all.", "440", { explain: true });
  assertEquals(r.status, "correct");
  assertEquals(r.explain?.extraction, "final_sentence_math");
  assertEquals(r.explain?.prediction, {
    normalized: "440",
    form: "expression",
    rules: ["currency", "unit=USD"],
  });
  assertEquals(r.explain?.gold?.normalized, "440");
  assertEquals(r.explain?.comparison, "same_string");
  const eq = grade("\\boxed{x = 2+3 = 5}", "5", { explain: true }).explain;
  assertEquals([eq?.prediction?.form, eq?.comparison], ["relation", "stated_value"]);
  const hedge = grade("\\boxed{3} or \\boxed{4}", "4", { explain: true });
  assertEquals([hedge.status, hedge.rule, hedge.explain?.comparison], [
    "wrong",
    "boxed_hedge",
    "boxed_hedge",
  ]);
  // Without the option the result has exactly the four fields it always had.
  assertEquals(Object.keys(grade("\\boxed{2}", "2")), ["correct", "status", "extracted", "rule"]);
});

Deno.test("grade: a decimal comma against a written decimal in both modes, everywhere else only behind the option", () => {
  for (const strict of [false, true]) {
    assertEquals(grade("\\boxed{1,5}", "1.5", { strict }).rule, "boxed");
    assertEquals(
      grade("\\boxed{1,5}", "1.5", { strict, explain: true }).explain?.comparison,
      "decimal_comma",
    );
    assertEquals(grade("\\boxed{2.75}", "2,75", { strict }).correct, true);
    assertEquals(grade("\\boxed{1,500}", "1.5", { strict }).correct, false); // thousands: 1500
    assertEquals(grade("\\boxed{1.5}", "1,500", { strict }).correct, false);
    assertEquals(grade("\\boxed{1,5}", "1, 5", { strict }).correct, true); // a list against a list
  }
  assertEquals(grade("\\boxed{1,5}", "\\frac32").correct, false);
  assertEquals(grade("\\boxed{1,5}", "\\frac32", { decimalComma: true }).correct, true);
  assertEquals(grade("\\boxed{1,5}", "1, 5", { decimalComma: true }).correct, false);
});
