// datasets/file.ts: a user's problem file read with default and named fields (the eval CLI path is
// tests/bench/external/eval_file.test.ts).
import { assertEquals, rejects } from "../assert.ts";
import { join } from "node:path";
import { isDatasetFile, loadFileDataset } from "../../datasets/file.ts";
import { tempDir } from "./helpers.ts";

const write = (lines: unknown[]) => {
  const path = join(tempDir(), "set.v2.jsonl");
  Deno.writeTextFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return path;
};

Deno.test("file dataset: nested keys, numeric answers, the gsm8k and boxed modes", async () => {
  const nested = write([
    { prompt: { text: "P1" }, reward_model: { ground_truth: 3 } },
    { prompt: { text: "P2" }, reward_model: { ground_truth: "x+1" } },
  ]);
  const a = await loadFileDataset(nested, {
    problemKey: "prompt.text",
    answerKey: "reward_model.ground_truth",
  });
  assertEquals(a.name, "file-set.v2");
  assertEquals(a.records.map((r) => [r.id, r.problem, r.answer]), [["file-set.v2/1", "P1", "3"], [
    "file-set.v2/2",
    "P2",
    "x+1",
  ]]);
  const gsm = write([{ question: "Q", answer: "steps\n#### 1,000" }]);
  assertEquals((await loadFileDataset(gsm, { answerKey: "answer:gsm8k" })).records[0].answer, "1000");
  const boxed = write([{ problem: "Q", solution: "so \\boxed{\\frac{1}{2}}", answer: "" }]);
  assertEquals(
    (await loadFileDataset(boxed, { answerKey: "solution:boxed" })).records[0].answer,
    "\\frac{1}{2}",
  );
  await rejects(loadFileDataset(boxed), /set\.v2\.jsonl:1: field 'answer' is empty, expected the answer/);
  const array = write([{ problem: ["a"], answer: "1" }]);
  await rejects(loadFileDataset(array), /:1: field 'problem' is an array, expected the problem text/);
  assertEquals([isDatasetFile("x.JSONL"), isDatasetFile("x.parquet"), isDatasetFile("math500")], [
    true,
    true,
    false,
  ]);
});
