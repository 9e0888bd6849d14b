import { assertEquals, ok } from "../assert.ts";
import { explainLine, main, parseInput } from "../../evaluators/cli.ts";

Deno.test("grade cli: malformed lines are reported with line numbers and skipped", () => {
  const { lines, errors } = parseInput(
    '{"prediction":"1","gold":"1"}\nnope\n\n[1]\n{"prediction":"1"}\n',
    "in.jsonl",
  );
  assertEquals(lines.map((l) => l.lineNo), [1]);
  assertEquals(errors.length, 3);
  ok(errors[0].startsWith("in.jsonl:2: invalid JSON"));
  assertEquals(errors[1], "in.jsonl:4: expected a JSON object");
  assertEquals(errors[2], 'in.jsonl:5: field "gold" must be a string');
});

Deno.test("grade cli: output adds the verdict and passes other fields through; exit 1 on malformed lines", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const input = `${dir}/in.jsonl`;
    Deno.writeTextFileSync(
      input,
      [
        JSON.stringify({
          prediction: "\\boxed{\\frac12}",
          gold: "0.5",
          expected: true,
          id: "a",
          meta: { k: [1] },
        }),
        "{broken",
        JSON.stringify({ prediction: "42", gold: "42", strict: true, expected: false }),
      ].join("\n"),
    );
    const code = await main(["--input", input, "--output", `${dir}/out.jsonl`, "--workers", "0"]);
    assertEquals(code, 1);
    const out = Deno.readTextFileSync(`${dir}/out.jsonl`).trim().split("\n").map((l) => JSON.parse(l));
    assertEquals(out[0], {
      prediction: "\\boxed{\\frac12}",
      gold: "0.5",
      expected: true,
      id: "a",
      meta: { k: [1] },
      correct: true,
      status: "correct",
      extracted: "\\frac12",
      rule: "boxed",
    });
    assertEquals(out[1].status, "no_answer");
    Deno.writeTextFileSync(input, JSON.stringify({ prediction: "1", gold: "1" }) + "\n");
    assertEquals(await main(["--input", input, "--output", `${dir}/out.jsonl`]), 0);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("grade cli: --explain adds the explanation to each line and prints one line per input", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const input = `${dir}/in.jsonl`;
    Deno.writeTextFileSync(input, JSON.stringify({ prediction: "So the total is $42$.", gold: "42" }) + "\n");
    const code = await main([
      "--input",
      input,
      "--output",
      `${dir}/out.jsonl`,
      "--workers",
      "0",
      "--explain",
    ]);
    assertEquals(code, 0);
    const out = JSON.parse(Deno.readTextFileSync(`${dir}/out.jsonl`));
    assertEquals(out.explain.extraction, "final_sentence_math");
    assertEquals(out.explain.comparison, "same_string");
    assertEquals(
      explainLine("in.jsonl", 1, out),
      'in.jsonl:1: correct | extraction final_sentence_math | prediction "42" [expression] | ' +
        'gold "42" [expression] | comparison same_string',
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
