import { assert, assertEquals } from "../assert.ts";
import { join } from "node:path";
import { type DataIssue, issueLines } from "../../reports/completeness.ts";
import { runCli } from "../run_cli.ts";
import { copyFixture } from "./fixture.ts";

const absent = (runId: string): DataIssue => ({
  runId,
  method: "grpo",
  message: "never started (no run folder)",
});

Deno.test("issueLines: planned runs without a folder fold into one line; other issues keep a line each", () => {
  const issues = [absent("grpo_s3"), absent("grpo_s4"), absent("grpo_s5"), absent("grpo_s6"), {
    runId: "grpo_s1",
    method: "grpo",
    message: "no eval.jsonl",
  }];
  assertEquals(issueLines(issues, (i) => `${i.runId}: ${i.message}`), [
    "4 runs not in this selection (planned, no run folder: grpo_s3, grpo_s4, grpo_s5, …)",
    "grpo_s1: no eval.jsonl",
  ]);
  assertEquals(issueLines([absent("a_s1")], (i) => i.runId), [
    "1 run not in this selection (planned, no run folder: a_s1)",
  ]);
});

Deno.test("report on a subset sweep: one line for the runs not run, in summary.md and on stderr", async () => {
  const dir = copyFixture();
  try {
    const sweep = JSON.parse(Deno.readTextFileSync(join(dir, "sweep.json")));
    const extra = Array.from({ length: 40 }, (_, i) => `grpo_s${i + 10}`);
    sweep.runIds = [...sweep.runIds, ...extra];
    Deno.writeTextFileSync(join(dir, "sweep.json"), JSON.stringify(sweep));
    const { code, stderr } = await runCli(["report", dir]);
    assertEquals(code, 1, stderr); // incomplete without --partial
    const summary = Deno.readTextFileSync(join(dir, "summary.md"));
    for (const text of [summary, stderr]) {
      assert(text.includes("40 runs not in this selection"), text);
      assert(!text.includes("never started"), text);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
