// `bench grader --labelled`: accuracy, false positives and false negatives against labelled pairs, per mode.
import { join } from "node:path";
import { assertEquals, throws } from "../../assert.ts";
import { main, readLabelled, scoreLabelled } from "../../../bench/perf/grader.ts";

const fixture = new URL("./fixtures/labelled_tiny.jsonl", import.meta.url).pathname;

Deno.test("bench grader --labelled: FP and FN per mode on a tiny labelled file", async () => {
  const cases = readLabelled(fixture);
  assertEquals(cases.map((c) => c.lineNo), [1, 2, 3, 4, 6]);
  const def = scoreLabelled(cases, false);
  assertEquals([def.n, def.agree, def.fp, def.fn], [5, 3, 1, 1]);
  assertEquals(def.misses.map((m) => m.c.lineNo), [3, 4]);
  const strict = scoreLabelled(cases, true);
  assertEquals([strict.n, strict.agree, strict.fp, strict.fn], [5, 2, 1, 2]);
  assertEquals(strict.misses.map((m) => m.c.lineNo), [3, 4, 6]);
  assertEquals(await main(["--labelled", fixture]), 0);
});

Deno.test("bench grader --labelled: a malformed line names the file, the line and the field", () => {
  const dir = Deno.makeTempDirSync({ prefix: "labelled-" });
  try {
    const file = join(dir, "bad.jsonl");
    Deno.writeTextFileSync(
      file,
      `{"prediction": "1", "gold": "1", "label": true}\n{"prediction": "1", "gold": "1", "label": "yes"}\n`,
    );
    throws(
      () => readLabelled(file),
      new RegExp(`${file}:2: field "label" \\(or "expected"\\) must be a boolean`),
    );
    Deno.writeTextFileSync(file, `{"prediction": 1, "gold": "1", "label": true}\n`);
    throws(() => readLabelled(file), new RegExp(`${file}:1: field "prediction" must be a string`));
    Deno.writeTextFileSync(file, `{oops\n`);
    throws(() => readLabelled(file), new RegExp(`${file}:1: invalid JSON`));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bench grader --labelled: reads expected/expectedStrict and prints per-family figures", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "labelled-" });
  const printed: string[] = [];
  const log = console.log;
  try {
    const file = join(dir, "families.jsonl");
    Deno.writeTextFileSync(
      file,
      [
        `{"prediction": "\\\\boxed{2}", "gold": "2", "expected": true, "family": "ints"}`,
        `{"prediction": "\\\\boxed{3}", "gold": "2", "expected": false, "family": "ints"}`,
        `{"prediction": "\\\\boxed{3, 2, 1}", "gold": "1, 2, 3", "expected": true, "expectedStrict": false, "family": "order"}`,
      ].join("\n") + "\n",
    );
    const cases = readLabelled(file);
    assertEquals(cases.map((c) => [c.label, c.labelStrict, c.family]), [
      [true, true, "ints"],
      [false, false, "ints"],
      [true, false, "order"],
    ]);
    assertEquals(scoreLabelled(cases, true).agree, 3);
    console.log = (...a: unknown[]) => printed.push(a.join(" "));
    assertEquals(await main(["--labelled", file]), 0);
  } finally {
    console.log = log;
    Deno.removeSync(dir, { recursive: true });
  }
  const rows = printed.join("\n").split("\n");
  assertEquals(rows.filter((r) => /^\| (ints|order) \|/.test(r)), [
    "| ints | 2 | 100.0% | 0 | 0 | 100.0% | 0 | 0 |",
    "| order | 1 | 100.0% | 0 | 0 | 100.0% | 0 | 0 |",
  ]);
});
