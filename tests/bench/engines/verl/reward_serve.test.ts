// reward_serve.ts, the grading process reward.py talks to: one response line per request line, in order, strict
// verdicts identical to gradeMany's; bad requests are errors naming the line and item.
import { gradeMany } from "../../../../evaluators/mod.ts";
import { parseRequest, type RewardVerdict, serveRewards } from "../../../../bench/engines/verl/mod.ts";
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

Deno.test("verl reward_serve: stdin as reward.py sends it: a 64 MiB request line, a blank line, no final newline", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-env", "--allow-sys", "bench/engines/verl/reward_serve.ts"],
    cwd: new URL("../../../../", import.meta.url).pathname,
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const request = JSON.stringify([{ prediction: "Answer: 7.", gold: "7" }]);
  await writer.write(new TextEncoder().encode(`[${" ".repeat(64 * 2 ** 20)}]\n\n${request}`));
  await writer.close();
  const out = await child.output();
  assertEquals(out.code, 0);
  const answers = new TextDecoder().decode(out.stdout).trimEnd().split("\n").map((l) => JSON.parse(l));
  assertEquals(answers, [[], [{ correct: true, status: "correct", extracted: "7" }]]);
});
