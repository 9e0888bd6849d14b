import { join } from "node:path";
import { assertEquals, ok } from "../../assert.ts";
import {
  checkSweepConfig,
  describePlan,
  expandRuns,
  makespan,
  measuredSecondsPerStep,
} from "../../../bench/sweep/mod.ts";
import { readJson, writeJson } from "../../../common/fs.ts";
import { fakeSpec } from "./fixtures/fake_spec.ts";

Deno.test("plan: makespan packs runs longest-first onto the workers", () => {
  assertEquals(makespan([10, 10, 10, 10], 2), 20);
  assertEquals(makespan([30, 10, 10, 10], 2), 30);
  assertEquals(makespan([5], 4), 5);
});

Deno.test("plan: the estimate uses seconds per step measured by finished first attempts only", async () => {
  const raw = readJson(new URL("./fixtures/fake_sweep.json", import.meta.url).pathname);
  const sweep = checkSweepConfig(raw, "fake_sweep.json", fakeSpec);
  const runs = expandRuns(sweep);
  const out = Deno.makeTempDirSync();
  assertEquals(measuredSecondsPerStep(out, runs), null);
  // 12 steps in 6 s → 0.5 s/step; a resumed run (attempts 2) is ignored.
  writeJson(join(out, "runs/grpo_s1/status.json"), {
    state: "done",
    startedAt: "x",
    seconds: 6,
    attempts: 1,
  });
  writeJson(join(out, "runs/grpo_s2/status.json"), {
    state: "done",
    startedAt: "x",
    seconds: 1,
    attempts: 2,
  });
  assertEquals(measuredSecondsPerStep(out, runs), 0.5);
  const text = await describePlan(sweep, runs, out, 2, fakeSpec);
  // Two runs left × 12 steps × 0.5 s on 2 workers = 6 s.
  ok(text.includes("estimate: 2 runs to do on 2 workers ≈ 6 s (0.50 s/step"), text);
  ok(/^grpo_s1\s+done/m.test(text) && /^ace-grpo_s1\s+new/m.test(text), text);
  Deno.removeSync(out, { recursive: true });
});
