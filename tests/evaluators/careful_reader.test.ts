// Forms a careful reader grades right (fixtures/careful_reader.jsonl, one `family` per class of near-miss): the
// hedges, rejected candidates, 100× percent readings, reversed sequences and malformed fractions strict mode must
// never pay, and the equivalent forms (complex parts, hex digits, dot-accent repetends, ℝ minus points, boxed
// parts, named coordinates, renamed variables, a clause after the marker) both modes must accept.
import { assertEquals, ok } from "../assert.ts";
import { grade } from "../../evaluators/mod.ts";
import { readLabelled } from "../../bench/perf/grader.ts";

const path = new URL("./fixtures/careful_reader.jsonl", import.meta.url).pathname;
const cases = readLabelled(path);

Deno.test("careful reader: every family has a wrong answer and a correct twin", () => {
  const families = new Set(cases.map((c) => c.family));
  ok(families.size >= 13, `only ${families.size} families`);
  for (const f of families) {
    const of = cases.filter((c) => c.family === f);
    ok(of.some((c) => c.label) && of.some((c) => !c.labelStrict), `family ${f} lacks a twin`);
  }
});

Deno.test("careful reader: every case grades as labelled in default and strict mode", () => {
  const failures: string[] = [];
  for (const c of cases) {
    for (const strict of [false, true]) {
      const want = strict ? c.labelStrict : c.label;
      const r = grade(c.prediction, c.gold, { strict, problem: c.problem });
      if (r.correct !== want) {
        failures.push(
          `line ${c.lineNo} [${c.family}] ${strict ? "strict" : "default"}: want ${want}, ${r.rule}`,
        );
      }
    }
  }
  assertEquals(failures, []);
});

Deno.test("careful reader: strict mode pays no wrong answer of any family", () => {
  const paid = cases.filter((c) =>
    !c.labelStrict && grade(c.prediction, c.gold, { strict: true, problem: c.problem }).correct
  );
  assertEquals(paid.map((c) => `line ${c.lineNo} [${c.family}]`), []);
});
