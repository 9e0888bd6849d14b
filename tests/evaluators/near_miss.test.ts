// The near-miss corpus (fixtures/near_miss.jsonl, written by fixtures/near_miss.ts): no wrong-by-a-little
// answer is accepted in either mode (strict is the training reward), and every correct twin is accepted in both.
import { assertEquals, ok } from "../assert.ts";
import { grade } from "../../evaluators/mod.ts";
import { type NearMiss, nearMissJsonl } from "./fixtures/near_miss.ts";

const path = new URL("./fixtures/near_miss.jsonl", import.meta.url);
const text = Deno.readTextFileSync(path);
const cases: NearMiss[] = text.trim().split("\n").map((l) => JSON.parse(l));

Deno.test("near-miss corpus: the file is the generator's output, with ≥ 200 wrong answers and their twins", () => {
  assertEquals(
    text,
    nearMissJsonl(),
    "regenerate: deno run --allow-write tests/evaluators/fixtures/near_miss.ts",
  );
  const wrong = cases.filter((c) => !c.expected).length;
  ok(wrong >= 200, `only ${wrong} near-miss wrong answers`);
  ok(cases.length - wrong >= 100, `only ${cases.length - wrong} correct twins`);
});

Deno.test("near-miss corpus: 0 wrong answers accepted and every twin accepted, default and strict modes", () => {
  const failures: string[] = [];
  for (const [i, c] of cases.entries()) {
    for (const strict of [false, true]) {
      const r = grade(`so the answer is \\boxed{${c.prediction}}.`, c.gold, { strict });
      const expected = strict ? c.expectedStrict ?? c.expected : c.expected;
      if (r.correct !== expected) {
        failures.push(
          `line ${i + 1} [${c.note}] ${strict ? "strict" : "default"}: expected ${expected}, got ${r.status}`,
        );
      }
    }
  }
  assertEquals(failures, []);
});
