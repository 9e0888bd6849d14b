// The labelled corpus (tests/evaluators/fixtures/corpus.jsonl): every case must grade as labelled.
import { assertEquals, ok } from "../assert.ts";
import { grade } from "../../evaluators/mod.ts";
import { readJsonl } from "../../common/fs.ts";

interface Case {
  prediction: string;
  gold: string;
  expected: boolean;
  note: string;
  strict?: boolean;
}

const corpusPath = new URL("./fixtures/corpus.jsonl", import.meta.url).pathname;
/** Load the corpus (shared with the grader benchmark). */
export const corpus = readJsonl<Case>(corpusPath);

Deno.test("corpus: at least 300 labelled cases, both labels well represented", () => {
  ok(corpus.length >= 300, `only ${corpus.length} cases`);
  const positives = corpus.filter((c) => c.expected).length;
  ok(positives > 100 && corpus.length - positives > 100, `${positives} positives of ${corpus.length}`);
});

// Latency (far below the 2 s pool timeout) is measured by `deno task bench grader`, never timed here.
Deno.test("corpus: every case grades as labelled and never throws", () => {
  const failures: string[] = [];
  for (const [i, c] of corpus.entries()) {
    const r = grade(c.prediction, c.gold, { strict: c.strict });
    if (r.correct !== c.expected) {
      failures.push(
        `line ${i + 1} [${c.note}] expected ${c.expected}, got ${r.status} (${r.rule}; ${r.extracted})`,
      );
    }
    assertEquals(r.correct, r.status === "correct");
  }
  assertEquals(failures, []);
});
