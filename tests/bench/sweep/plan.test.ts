import { join } from "node:path";
import { assertEquals, ok } from "../../assert.ts";
import {
  calibrate,
  checkSweepConfig,
  describePlan,
  engineSpec,
  estimateFromCalibration,
  evaluations,
  expandRuns,
  makespan,
  measuredSecondsPerStep,
  presetPath,
  storeCalibration,
  storedCalibrations,
} from "../../../bench/sweep/mod.ts";
import { exists, readJson, writeJson } from "../../../common/fs.ts";
import { tempDir } from "../../temp.ts";
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

Deno.test("plan: evaluations count step 0, each multiple of `every` and the last step", () => {
  assertEquals([evaluations(6, 6), evaluations(80, 40), evaluations(100, 30), evaluations(5, 0)], [
    2,
    3,
    5,
    2,
  ]);
});

Deno.test("plan: the calibrated estimate is prepare + SFT steps + the runs' steps and evaluations on the lanes", () => {
  const raw = readJson(new URL("./fixtures/fake_sweep.json", import.meta.url).pathname);
  const runs = expandRuns(checkSweepConfig(raw, "fake_sweep.json", fakeSpec));
  const cal = {
    steps: 3,
    stepSeconds: 0.5,
    evalSeconds: 2,
    prepareSeconds: 4,
    sftStepSeconds: 0.1,
    sftSteps: 20,
    wall: 9,
  };
  const steps = (runs[0].settings.rl as { steps: number }).steps;
  const perRun = steps * 0.5 + evaluations(steps, runs[0].eval.every) * 2;
  ok(runs.every((r) => (r.settings.rl as { steps: number }).steps === steps), "the fixture's runs are alike");
  // the fake engine has no SFT base model: prepare + ⌈runs / 2⌉ runs per lane
  assertEquals(estimateFromCalibration(cal, runs, 2), 4 + Math.ceil(runs.length / 2) * perRun);
});

Deno.test("plan: a calibration is stored by cost key, and the estimate gives the spread of the stored ones", async () => {
  const spec = engineSpec("tabular");
  const sweep = checkSweepConfig(readJson(presetPath("ci-tabular")), "ci-tabular.json", spec);
  const runs = expandRuns(sweep);
  const dir = tempDir(), costs = join(dir, "costs.json"), out = join(dir, "sweep");
  const cal = await calibrate(sweep, spec);
  ok(cal.steps === 3 && cal.stepSeconds > 0 && cal.sftSteps === null, JSON.stringify(cal));
  storeCalibration(sweep, cal, costs);
  storeCalibration(sweep, { ...cal, stepSeconds: 3 * cal.stepSeconds }, costs);
  // More steps or another name is the same cost key; another first method is not.
  assertEquals(storedCalibrations({ ...sweep, name: "x", rl: { steps: 99 } }, costs).length, 2);
  const other = { ...sweep, methods: [{ name: "d", preset: "dapo", overrides: {} }] };
  assertEquals(storedCalibrations(other, costs), []);
  const text = await describePlan(sweep, runs, out, 2, spec, storedCalibrations(sweep, costs));
  ok(
    /estimate: \d+ runs to do on 2 workers ≈ .+ \(range .+–.+ over 2 calibrations; from the stored cost model/
      .test(text),
    text,
  );
  ok(!exists(out), "the sweep folder is not made");
});
