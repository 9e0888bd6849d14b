import { join } from "node:path";
import { assertClose, assertEquals, ok, rejects, throws } from "../../../assert.ts";
import { tempDir } from "../../../temp.ts";
import { exists, readJson, readJsonl } from "../../../../common/fs.ts";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import { engines } from "../../../../bench/engines/registry.ts";
import { checkSweepConfig } from "../../../../bench/sweep/mod.ts";
import {
  buildWorld,
  exactPassAtK,
  resolveSettings,
  tabularEngine,
  worldSeedOf,
  zeroParams,
} from "../../../../bench/engines/tabular/mod.ts";

const SMALL = {
  prompts: 40,
  strategies: 6,
  checkpointEvery: 5,
  rl: { steps: 20, promptsPerStep: 8, groupSize: 4 },
};

/** A run on world `seed` (base = seed, as a `bases` sweep with one seed per base has it). */
function spec(preset: string, seed: number, settings: Record<string, unknown> = SMALL): RunConfig {
  return {
    runId: `${preset}_b${seed}_s0`,
    engine: "tabular",
    method: preset,
    preset,
    seed: 0,
    base: seed,
    algo: resolveAlgo(preset),
    settings,
    eval: { n: 8, ks: [1, 2, 8], every: 10 },
  };
}
/** The run as the engine resolves it (what the sweep runner records as config.json and runs). */
const runConfig = (preset: string, seed: number, settings?: Record<string, unknown>) =>
  tabularEngine.resolve(spec(preset, seed, settings));

const noHooks = { onProgress() {} };
/** A file's text; for metrics.jsonl without the wall-clock fields, which legitimately differ between runs. */
const read = (dir: string, file: string) =>
  file === "metrics.jsonl"
    ? JSON.stringify(
      readJsonl<Record<string, unknown>>(join(dir, file)).map(({ sample_s: _s, update_s: _u, ...m }) => m),
    )
    : Deno.readTextFileSync(join(dir, file));

Deno.test("tabular settings: schema defaults fill every knob; bad or unknown fields name the field", () => {
  const s = resolveSettings({});
  assertEquals([s.prompts, s.strategies, s.rl.steps, s.rl.groupSize, s.rl.promptsPerStep], [
    200,
    12,
    200,
    8,
    32,
  ]);
  assertEquals(s.worldSeed, null);
  throws(() => resolveSettings({ prompts: 0 }, "cfg.json"), /cfg.json: prompts: must be >= 1/);
  throws(() => resolveSettings({ rl: { lr: -1 } }), /rl.lr: must be > 0/);
  throws(() => resolveSettings({ temperature: 1 }), /must NOT have additional properties 'temperature'/);
});

Deno.test("tabular world: the reference's pass@k is exact (hand check on a 1-prompt world)", () => {
  const world = {
    prompts: 1,
    strategies: 2,
    correct: Uint8Array.from([1, 0]),
    refNoise: Float64Array.from([0, Math.log(3)]),
  };
  // π(correct) = 1/(1+3) = 0.25; pass@k = 1 − 0.75^k
  const [p1, p4] = exactPassAtK(world, zeroParams(world), [1, 4]);
  assertClose(p1, 0.25, 1e-12);
  assertClose(p4, 1 - 0.75 ** 4, 1e-12);
  const built = buildWorld(resolveSettings({}), 0);
  assertEquals(built.correct.length, 200 * 12);
  assertEquals([...buildWorld(resolveSettings({}), 0).refNoise], [...built.refNoise]); // same seed, same world
});

Deno.test("tabular engine: resolves the run once, writes metrics per step, eval samples and exact pass@k", async () => {
  const dir = tempDir();
  const progress: number[] = [];
  const config = runConfig("ace-grpo", 1);
  await tabularEngine.run(config, dir, dir, { onProgress: (s) => progress.push(s) });
  assertEquals(progress, Array.from({ length: 21 }, (_, i) => i));
  assertEquals([config.engine, config.method, config.preset, config.seed, config.base], [
    "tabular",
    "ace-grpo",
    "ace-grpo",
    0,
    1,
  ]);
  assertEquals(config.algo.ace, { enabled: true, alpha: 1, phi: "softplus", aggregation: "sum", clip: null });
  assertEquals(config.settings.rl.lr, 8); // defaults recorded
  assertEquals(runConfig("dapo", 0).algo.overlong.enabled, false); // single actions have no length to shape
  ok(!exists(join(dir, "config.json")) && !exists(join(dir, "status.json")), "the sweep runner writes those");
  const metrics = readJsonl<Record<string, number>>(join(dir, "metrics.jsonl"));
  assertEquals(metrics.map((m) => m.step), progress.slice(1));
  for (
    const key of ["reward_mean", "groups_kept_frac", "entropy", "kl", "clipfrac", "clipfrac_lower", "loss"]
  ) {
    ok(metrics.every((m) => Number.isFinite(m[key])), key);
  }
  ok(metrics.every((m) => m.ace_multiplier === null || m.ace_multiplier > 1), "ACE scales penalties up");
  const evals = readJsonl<Record<string, unknown>>(join(dir, "eval.jsonl"));
  assertEquals(evals.length, 3 * 40 * 8); // steps 0, 10, 20 × prompts × n
  assertEquals(Object.keys(evals[0]).sort(), [
    "correct",
    "dataset",
    "extracted",
    "problemId",
    "sample",
    "status",
    "step",
  ]);
  assertEquals([evals[0].dataset, evals[0].problemId, evals[0].sample], ["tabular", "tabular/0", 0]);
  ok(evals.every((e) => (e.status === "correct") === e.correct));
  const exact = readJsonl<{ step: number; k: number; passAtK: number }>(join(dir, "exact.jsonl"));
  assertEquals([...new Set(exact.map((e) => e.step))], [0, 10, 20]);
  assertEquals(exact.filter((e) => e.step === 0).map((e) => e.k), [1, 2, 4, 8, 16, 32, 64, 128, 256]);
});

Deno.test("tabular engine: same seed gives identical files; a crash then resume is bit-identical", async () => {
  const [a, b, c] = [tempDir(), tempDir(), tempDir()];
  await tabularEngine.run(runConfig("ace-dapo", 2), a, a, noHooks);
  await tabularEngine.run(runConfig("ace-dapo", 2), b, b, noHooks);
  const crash = {
    onProgress: (s: number) => {
      if (s === 13) throw new Error("simulated crash at step 13");
    },
  };
  await rejects(tabularEngine.run(runConfig("ace-dapo", 2), c, c, crash), /simulated crash/);
  assertEquals(readJson<{ step: number }>(join(c, "checkpoints", "state.json")).step, 10);
  await tabularEngine.run(runConfig("ace-dapo", 2), c, c, noHooks);
  for (const file of ["metrics.jsonl", "eval.jsonl", "exact.jsonl", "checkpoints/state.json"]) {
    assertEquals(read(b, file), read(a, file), `${file}: same seed`);
    assertEquals(read(c, file), read(a, file), `${file}: resumed`);
  }
  const other = tempDir();
  await tabularEngine.run(runConfig("ace-dapo", 3), other, other, noHooks);
  ok(read(other, "metrics.jsonl") !== read(a, "metrics.jsonl"), "another base differs");
});

Deno.test("tabular engine: the world is the base (worldSeed + base); seeds of one base share it", () => {
  const s = resolveSettings({ prompts: 30 });
  const key = (w: ReturnType<typeof buildWorld>) => [...w.correct].join("") + [...w.refNoise].join(",");
  assertEquals(worldSeedOf(s, 3), 3);
  assertEquals(worldSeedOf(resolveSettings({ prompts: 30, worldSeed: 10 }), 3), 13);
  assertEquals(key(buildWorld(s, 2)), key(buildWorld(s, 2)));
  ok(key(buildWorld(s, 2)) !== key(buildWorld(s, 3)), "another base, another world");
  assertEquals(key(buildWorld(resolveSettings({ prompts: 30, worldSeed: 1 }), 1)), key(buildWorld(s, 2)));
});

Deno.test("tabular engine: GRPO learns (pass@1 rises well above the reference) and DAPO's filter keeps informative groups", async () => {
  const dir = tempDir();
  const settings = { prompts: 60, checkpointEvery: 100, rl: { steps: 60, promptsPerStep: 16 } };
  await tabularEngine.run(runConfig("grpo", 0, settings), dir, dir, noHooks);
  const exact = readJsonl<{ step: number; k: number; passAtK: number }>(join(dir, "exact.jsonl"));
  const p1 = (step: number) => exact.find((e) => e.step === step && e.k === 1)!.passAtK;
  ok(p1(60) > p1(0) + 0.2, `pass@1 ${p1(0)} → ${p1(60)}`);
  const dapo = tempDir();
  await tabularEngine.run(runConfig("dapo", 0, settings), dapo, dapo, noHooks);
  const m = readJsonl<{ groups_kept_frac: number; informative_frac: number; reward_mean: number }>(
    join(dapo, "metrics.jsonl"),
  );
  ok(m.every((r) => r.groups_kept_frac > 0 && r.groups_kept_frac <= 1 && r.informative_frac === 1));
  ok(
    m.every((r) => r.reward_mean > -1 && r.reward_mean < 1),
    "every kept group is mixed, so rewards are never all ±1",
  );
});

Deno.test("tabular engine: bad configs fail with a clear message", () => {
  throws(() => runConfig("grpo", 0, { prompts: -1 }), /grpo_b0_s0: settings: prompts/);
  // eval is checked once, by the sweep config's schema, before any run reaches the engine
  const sweep = {
    name: "t",
    engine: "tabular",
    seeds: [0],
    methods: [{ name: "grpo", preset: "grpo" }],
    rl: { steps: 5 },
  };
  const bad = (ev: Record<string, unknown>) => () =>
    checkSweepConfig({ ...sweep, eval: ev }, "sweep.json", engines.tabular);
  throws(bad({ n: 0, ks: [1] }), /sweep\.json: eval\.n: must be >= 1/);
  throws(bad({ n: 2, ks: [0] }), /sweep\.json: eval\.ks\[0\]: must be >= 1/);
  throws(bad({ n: 2, ks: [1], every: 0 }), /sweep\.json: eval\.every: must be >= 1/);
});
