// reward_serve.ts, the grading process reward.py talks to: one response line per request line, in order, strict
// verdicts identical to gradeMany's; bad requests are errors naming the line and item.
import { gradeMany } from "../../../../evaluators/mod.ts";
import {
  parseRequest,
  type RewardVerdict,
  serveRewards,
  splitLines,
} from "../../../../bench/engines/verl/mod.ts";
import { assertEquals, throws } from "../../../assert.ts";

async function* lines(items: string[]): AsyncIterable<string> {
  for (const line of items) yield line;
}

Deno.test("verl reward_serve: batches in, strict verdicts out, in order, as grade --strict gives them", async () => {
  const batches = [
    [{ prediction: "so \\boxed{\\dfrac{1}{2}}", gold: "\\frac12" }, { prediction: "Answer: 7.", gold: "7" }],
    [],
    [{ prediction: "the result is 3", gold: "3" }, { prediction: "**Answer:** 41", gold: "42" }],
  ];
  const out: RewardVerdict[][] = [];
  const n = await serveRewards(lines([...batches.map((b) => JSON.stringify(b)), ""]), (line) => {
    out.push(JSON.parse(line));
    return Promise.resolve();
  });
  assertEquals(n, 4);
  const want = await gradeMany(batches.flat().map((b) => ({ ...b, strict: true })), { workers: 0 });
  assertEquals(
    out.flat(),
    want.map(({ correct, status, extracted }) => ({ correct, status, extracted })),
  );
  assertEquals(out.map((b) => b.length), [2, 0, 2]);
  assertEquals(out.flat().map((v) => v.correct), [true, true, false, false]);
});

Deno.test("verl reward_serve: bad request lines are errors naming the line and item", () => {
  throws(() => parseRequest("{", 3), /stdin line 3: invalid JSON/);
  throws(() => parseRequest('{"prediction": "x"}', 4), /stdin line 4: expected a JSON array/);
  throws(() => parseRequest('[{"prediction": "x", "gold": 1}]', 5), /stdin line 5, item 0/);
});

Deno.test("verl reward_serve: lines split across chunks, one line of many chunks, no final newline", async () => {
  async function* chunks(items: string[]): AsyncIterable<string> {
    for (const c of items) yield c;
  }
  const collect = async (items: string[]) => {
    const out: string[] = [];
    for await (const line of splitLines(chunks(items))) out.push(line);
    return out;
  };
  assertEquals(await collect(["a\nb", "c\n", "\n", "d"]), ["a", "bc", "", "d"]);
  assertEquals(await collect(["x\n"]), ["x"]);
  assertEquals(await collect([]), []);
  // 64 MiB in 64 KiB chunks, as a pipe delivers a huge grade_batch request: linear, so about a second
  const piece = "y".repeat(65_536);
  const big = await collect([...Array.from({ length: 1024 }, () => piece), "\nz"]);
  assertEquals(big.map((l) => l.length), [1024 * 65_536, 1]);
});
