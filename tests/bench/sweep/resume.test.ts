// Kill a sweep process mid-run, re-run it, and check that nothing finished is redone and nothing is lost.
import { join } from "node:path";
import { assertEquals, ok } from "../../assert.ts";
import { readStatus } from "../../../common/run_folder.ts";
import { exists, readJson, readJsonl } from "../../../common/fs.ts";
import { taskPermissions } from "../../run_cli.ts";

const fixtures = new URL("./fixtures/", import.meta.url).pathname;
const runIds = ["grpo_s1", "grpo_s2", "ace-grpo_s1", "ace-grpo_s2"];
const steps = 12;

function spawnSweep(out: string) {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...taskPermissions("sweep"),
      join(fixtures, "run_fake_sweep.ts"),
      join(fixtures, "fake_sweep.json"),
      out,
      "2",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { CI: "true" },
  }).spawn();
}

function checkpointStep(out: string, runId: string): number {
  const path = join(out, "runs", runId, "checkpoints", "state.json");
  return exists(path) ? readJson<{ step: number }>(path).step : 0;
}

Deno.test("resume: a sweep killed mid-run redoes nothing finished and loses nothing", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-kill-" });
  const child = spawnSweep(out);
  // Wait until one run has finished and another is part-way, then kill the process (a crash, not Ctrl-C).
  const deadline = Date.now() + 60_000;
  const isDone = (id: string) => readStatus(join(out, "runs", id))?.state === "done";
  for (;;) {
    // Part-way with a few steps to go, so the run is still unfinished when the kill lands.
    const partway = runIds.some((id) =>
      !isDone(id) && checkpointStep(out, id) >= 2 && checkpointStep(out, id) <= 7
    );
    if (runIds.some(isDone) && partway) break;
    ok(Date.now() < deadline, "the sweep did not reach a mid-run state in 60 s");
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill("SIGKILL");
  await child.output();
  // The process is dead: what is on disk now is exactly what the re-run starts from.
  const finished = runIds.filter(isDone);
  ok(finished.length < runIds.length, "killed before the end");
  const before = new Map(
    finished.map((id) => [id, Deno.readTextFileSync(join(out, "runs", id, "metrics.jsonl"))]),
  );

  const rerun = await spawnSweep(out).output();
  assertEquals(rerun.code, 0, new TextDecoder().decode(rerun.stderr));
  const outcome = JSON.parse(new TextDecoder().decode(rerun.stdout).trim().split("\n").pop()!);
  assertEquals(outcome.skipped.sort(), [...finished].sort(), "finished runs are skipped");

  for (const id of runIds) {
    const dir = join(out, "runs", id);
    assertEquals(readStatus(dir)?.state, "done", id);
    const metricSteps = readJsonl<{ step: number }>(join(dir, "metrics.jsonl")).map((m) => m.step);
    assertEquals(
      metricSteps,
      Array.from({ length: steps }, (_, i) => i + 1),
      `${id}: every step exactly once`,
    );
    const evalSteps = readJsonl<{ step: number }>(join(dir, "eval.jsonl")).map((e) => e.step);
    assertEquals(evalSteps.length, 2 * 3 * 4, `${id}: two evaluations × 3 problems × n=4`);
    const calls = readJsonl<{ startStep: number }>(join(dir, "calls.jsonl"));
    if (before.has(id)) {
      assertEquals(calls.length, 1, `${id} finished before the kill and must not run again`);
      assertEquals(Deno.readTextFileSync(join(dir, "metrics.jsonl")), before.get(id));
    } else if (calls.length > 1) {
      ok(calls.slice(1).every((c) => c.startStep >= 0), id);
    }
  }
  const resumed = runIds.filter((id) => {
    const calls = readJsonl<{ startStep: number }>(join(out, "runs", id, "calls.jsonl"));
    return calls.length > 1 && calls[calls.length - 1].startStep > 0;
  });
  ok(resumed.length >= 1, "at least one interrupted run resumed from its checkpoint instead of step 0");
  Deno.removeSync(out, { recursive: true });
});

Deno.test("resume: Ctrl-C stops the workers, leaves unfinished runs resumable, and the re-run completes them", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-int-" });
  const child = spawnSweep(out);
  const deadline = Date.now() + 60_000;
  while (!runIds.some((id) => checkpointStep(out, id) >= 2 && checkpointStep(out, id) <= 7)) {
    ok(Date.now() < deadline, "the sweep did not start in 60 s");
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill("SIGINT");
  const result = await child.output();
  const outcome = JSON.parse(new TextDecoder().decode(result.stdout).trim().split("\n").pop()!);
  assertEquals(outcome.interrupted, true);
  const unfinished = runIds.filter((id) => readStatus(join(out, "runs", id))?.state !== "done");
  ok(unfinished.length >= 1);
  for (const id of unfinished) {
    const state = readStatus(join(out, "runs", id))?.state;
    ok(state === undefined || state === "running", `${id}: ${state}`);
  }
  const rerun = await spawnSweep(out).output();
  assertEquals(rerun.code, 0);
  for (const id of runIds) {
    const steps = readJsonl<{ step: number }>(join(out, "runs", id, "metrics.jsonl")).map((m) => m.step);
    assertEquals(steps, Array.from({ length: 12 }, (_, i) => i + 1), id);
  }
  Deno.removeSync(out, { recursive: true });
});
