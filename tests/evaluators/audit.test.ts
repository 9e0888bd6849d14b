// The gold audit's renderer and verdict (evaluators/audit.ts): the rendering is written from the parsed value,
// not the gold's text, and a gold fails when its own rendering does not grade correct against it.
import { assertEquals, ok } from "../assert.ts";
import { auditGold, renderValue } from "../../evaluators/audit.ts";
import { parseValue } from "../../evaluators/forms.ts";
import { grade } from "../../evaluators/grade.ts";
import { normalizeAnswer } from "../../evaluators/normalize.ts";

Deno.test("renderValue: an independent LaTeX writing of each form that grades equal to the source", () => {
  const sources = [
    "\\frac{\\sqrt{3}}{2}",
    "(1, 2]",
    "\\{1, 3\\}",
    "1, 2, 3",
    "x \\ge 2",
    "x < -1 \\text{ or } x > 2",
    "(-\\infty, 1) \\cup (2, \\infty)",
    "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
    "1A_{16}",
    "\\binom{5}{2}",
    "5!",
    "\\rho_{0} r_{0}^{2}",
  ];
  for (const src of sources) {
    const rendered = renderValue(parseValue(normalizeAnswer(src).text));
    ok(rendered !== null, `${src}: no rendering`);
    ok(grade(`\\boxed{${rendered}}`, src, { strict: true }).correct, `${src}: ${rendered} not accepted`);
  }
});

Deno.test("auditGold: Python and stray variables fail, words and sound golds pass", () => {
  assertEquals(auditGold("np.arcsin(10/13)").failure, "unreadable");
  assertEquals(auditGold("t(0,4]").failure, "unreadable");
  assertEquals(auditGold("\\text{Navin}").failure, null);
  assertEquals(auditGold("\\arcsin(10/13)").failure, null);
  assertEquals(auditGold("").failure, "empty");
});
