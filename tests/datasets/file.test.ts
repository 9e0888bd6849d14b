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

Deno.test("file dataset: ids from id/idx/unique_id or --id-key; repeats refused with both lines, or kept once", async () => {
  const withIds = write([{ id: "p-7", problem: "A", answer: "1" }, { id: 9, problem: "B", answer: "2" }]);
  const a = await loadFileDataset(withIds);
  assertEquals([a.idKey, a.records.map((r) => r.id)], ["id", ["file-set.v2/p-7", "file-set.v2/9"]]);
  const named = write([{ key: { n: "x1" }, idx: 0, problem: "A", answer: "1" }]);
  assertEquals((await loadFileDataset(named)).records[0].id, "file-set.v2/0", "idx where there is no id");
  assertEquals((await loadFileDataset(named, { idKey: "key.n" })).records[0].id, "file-set.v2/x1");
  await rejects(
    loadFileDataset(named, { idKey: "nope" }),
    /set\.v2\.jsonl:1: field 'nope' is missing.*--id-key/,
  );
  // Line 3 repeats line 1's text (whitespace aside); line 4 repeats line 2's id.
  const repeated = write([
    { id: "a", problem: "What is  1+1?", answer: "2" },
    { id: "b", problem: "B", answer: "3" },
    { id: "c", problem: "What is 1+1?", answer: "2" },
    { id: "b", problem: "C", answer: "4" },
  ]);
  await rejects(
    loadFileDataset(repeated),
    /2 repeated problem\(s\).*set\.v2\.jsonl:3 repeats line 1 \(the same problem text\); .*set\.v2\.jsonl:4 repeats line 2 \(the same id 'b'\); remove them, or pass --duplicates keep-first/,
  );
  const kept = await loadFileDataset(repeated, { duplicates: "keep-first" });
  assertEquals(kept.records.map((r) => r.id), ["file-set.v2/a", "file-set.v2/b"]);
  assertEquals(kept.warnings.length, 1);
  assertEquals(
    kept.warnings[0].startsWith("left out 2 repeated problem(s), keeping the first of each: "),
    true,
  );
  const noIds = write([{ problem: "Q", answer: "1" }, { problem: "Q", answer: "1" }]);
  await rejects(loadFileDataset(noIds), /:2 repeats line 1 \(the same problem text\)/);
});
