import { join } from "node:path";
import { assertEquals, ok, rejects, throws } from "../../assert.ts";
import { checkSweepConfig, expandRuns, runSweep, writeSweepJson } from "../../../bench/sweep/mod.ts";
import { readJson, readJsonl } from "../../../common/fs.ts";
import { readStatus } from "../../../common/run_folder.ts";
import { fakeSpec } from "./fixtures/fake_spec.ts";

const fixture = new URL("./fixtures/fake_sweep.json", import.meta.url).pathname;

function fakeSweep(patch: Record<string, unknown> = {}) {
  const raw = { ...readJson<Record<string, unknown>>(fixture), ...patch };
  const sweep = checkSweepConfig(raw, "fake_sweep.json", fakeSpec);
  return { sweep, runs: expandRuns(sweep) };
}

Deno.test("runner: runs every run in workers, writes status/config, skips finished runs on re-run", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { sweep, runs } = fakeSweep({ settings: { stepMs: 0, problems: 2 }, rl: { steps: 4 } });
  writeSweepJson(out, sweep, runs);
  const first = await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(first.done.sort(), runs.map((r) => r.runId).sort());
  assertEquals(first.failed, []);
  for (const run of runs) {
    const dir = join(out, "runs", run.runId);
    assertEquals(readStatus(dir)?.state, "done");
    assertEquals(readJson<{ runId: string }>(join(dir, "config.json")).runId, run.runId);
    assertEquals(readJsonl(join(dir, "metrics.jsonl")).length, 4);
  }
  const sweepJson = readJson<{ configHash: string; machine: { cores: number }; versions: { deno: string } }>(
    join(out, "sweep.json"),
  );
  ok(/^[0-9a-f]{12}$/.test(sweepJson.configHash));
  ok(sweepJson.machine.cores >= 1 && sweepJson.versions.deno.length > 0);
  const again = await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(again.done, []);
  assertEquals(again.skipped.length, runs.length);
  Deno.removeSync(out, { recursive: true });
});

Deno.test("runner: a NaN-loss run is marked failed with its reason and the sweep goes on", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { sweep, runs } = fakeSweep({
    settings: { stepMs: 0, problems: 2, nanMethod: "ace-grpo", nanStep: 3 },
    rl: { steps: 4 },
  });
  const outcome = await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(outcome.done.sort(), ["grpo_s1", "grpo_s2"]);
  assertEquals(outcome.failed.map((f) => f.runId).sort(), ["ace-grpo_s1", "ace-grpo_s2"]);
  const status = readStatus(join(out, "runs", "ace-grpo_s1"))!;
  assertEquals(status.state, "failed");
  assertEquals(status.reason, "diverged: non-finite loss at step 3");
  Deno.removeSync(out, { recursive: true });
});

Deno.test("runner: an engine that throws fails only its run; a failed prepare stops the sweep", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { sweep, runs } = fakeSweep({ settings: { stepMs: 0, throwMethod: "grpo" }, rl: { steps: 3 } });
  const outcome = await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(outcome.failed.map((f) => f.reason), ["boom at step 2", "boom at step 2"]);
  assertEquals(outcome.done.length, 2);
  const broken = { ...fakeSpec, exportName: "noSuchExport" };
  await rejects(
    () => runSweep(sweep, runs, { out, workers: 1, engine: broken }),
    /fake prepare failed: .*no engine exported as 'noSuchExport'/,
  );
  Deno.removeSync(out, { recursive: true });
});

Deno.test("runner: the only writer of config.json (the engine's resolved run) and status.json (attempts kept, planned runs)", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { sweep, runs } = fakeSweep({
    settings: { stepMs: 0, problems: 2, planMethod: "ace-grpo", throwMethod: "grpo" },
    rl: { steps: 3 },
  });
  const first = await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(first.planned.sort(), ["ace-grpo_s1", "ace-grpo_s2"]);
  assertEquals(first.failed.length, 2);
  const config = readJson<{ settings: { resolvedBy?: string }; algo: { ace: unknown } }>(
    join(out, "runs", "grpo_s1", "config.json"),
  );
  assertEquals(config.settings.resolvedBy, "fake");
  ok(!("ace" in config) && config.algo.ace !== undefined, "ACE's options once, in algo.ace");
  const planned = readStatus(join(out, "runs", "ace-grpo_s1"))!;
  assertEquals([planned.state, planned.reason, planned.attempts], ["planned", undefined, 1]);
  await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  const failed = readStatus(join(out, "runs", "grpo_s1"))!;
  assertEquals([failed.state, failed.reason, failed.attempts], ["failed", "boom at step 2", 2]);
  Deno.removeSync(out, { recursive: true });
});

Deno.test("runner: a folder holding a different sweep config is refused", () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { sweep, runs } = fakeSweep();
  writeSweepJson(out, sweep, runs);
  writeSweepJson(out, sweep, runs); // same config: fine
  const other = fakeSweep({ seeds: [7] });
  throws(
    () => writeSweepJson(out, other.sweep, other.runs),
    /holds a different sweep \(configHash \w+ ≠ \w+\)/,
  );
  Deno.removeSync(out, { recursive: true });
});

Deno.test("runner: one prepare per base that pending runs need, with the base's seed, before its runs", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { seeds: _seeds, ...design } = readJson<Record<string, unknown>>(fixture);
  const sweep = checkSweepConfig(
    { ...design, bases: 3, settings: { stepMs: 0, problems: 2 }, rl: { steps: 2 } },
    "fake_sweep.json",
    fakeSpec,
  );
  const runs = expandRuns(sweep);
  const calls = () => readJsonl<{ base: number; seed: number }>(join(out, "base", "calls.jsonl"));
  const only1 = runs.filter((r) => r.base === 1);
  await runSweep(sweep, only1, { out, workers: 2, engine: fakeSpec });
  assertEquals(calls().map((c) => [c.base, c.seed]), [[1, 1]]);
  const all = await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(all.failed, []);
  assertEquals(all.skipped.sort(), only1.map((r) => r.runId).sort());
  assertEquals(calls().map((c) => [c.base, c.seed]).sort(), [[0, 0], [1, 1], [2, 2]]);
  for (const run of runs) {
    const config = readJson<{ base: number; seed: number }>(join(out, "runs", run.runId, "config.json"));
    assertEquals([config.base, config.seed], [run.base, 0]);
  }
  await runSweep(sweep, runs, { out, workers: 2, engine: fakeSpec });
  assertEquals(calls().length, 3, "nothing pending, nothing prepared");
  Deno.removeSync(out, { recursive: true });
});

Deno.test("runner: a base whose prepare fails stops the sweep, naming the base", async () => {
  const out = Deno.makeTempDirSync({ prefix: "sweep-" });
  const { seeds: _seeds, ...design } = readJson<Record<string, unknown>>(fixture);
  const sweep = checkSweepConfig(
    { ...design, bases: 3, settings: { stepMs: 0, failBase: 2 }, rl: { steps: 2 } },
    "fake_sweep.json",
    fakeSpec,
  );
  await rejects(
    () => runSweep(sweep, expandRuns(sweep), { out, workers: 2, engine: fakeSpec }),
    /fake prepare failed: base 2: no data for base 2/,
  );
  Deno.removeSync(out, { recursive: true });
});
