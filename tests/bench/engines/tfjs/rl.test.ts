// The RL update's two forms: one pass (log-probs read inside the loss closure) and two passes (webgpu's form).
import { assertEquals, ok } from "../../../assert.ts";
import {
  getOptimizerStateAsync,
  getWeightsAsync,
  initBackend,
} from "../../../../bench/engines/tfjs/model.ts";
import { rlStep, tfjsPolicy } from "../../../../bench/engines/tfjs/rl.ts";
import { PRESETS, resolveAlgo } from "../../../../bench/core/mod.ts";
import { rlContext, rolloutBatch, updatePolicy } from "./fixtures.ts";
import { grade } from "../../../../evaluators/mod.ts";
import { engines, gradingOf } from "../../../../bench/engines/registry.ts";
import { writeProtocolSweep } from "../../../sweep_record.ts";
import { tempDir } from "../../../temp.ts";

await initBackend("wasm");

Deno.test("RL update: two passes (forward, await the read, backward) give bit-for-bit the one-pass update", async () => {
  const one = rlContext(false), two = rlContext(true);
  const batch = await rolloutBatch(one);
  assertEquals(await rolloutBatch(two), batch);
  // Two mini-batches: the second is off-policy after the first update, so ratios and clipping are exercised.
  const a = await updatePolicy(one, batch), b = await updatePolicy(two, batch);
  assertEquals(b, a);
  ok(a.gradNorm > 0 && a.metrics.kl! > 0 && a.metrics.entropy! > 0, JSON.stringify(a));
  assertEquals(await getWeightsAsync(two.model), await getWeightsAsync(one.model));
  assertEquals(await getOptimizerStateAsync(two.opt), await getOptimizerStateAsync(one.opt));
});

Deno.test("the baselines and ACE-DAPO run an RL step of the tfjs policy through the one loop", async () => {
  for (
    const preset of [
      "dr-grpo",
      "rloo",
      "passk",
      "w-reinforce",
      "nsr",
      "psr",
      "clip-cov",
      "kl-cov",
      "ace-allwrong",
      "ace-dapo",
    ]
  ) {
    ok(preset in PRESETS, preset);
    const ctx = rlContext();
    ctx.settings.rl.promptsPerStep = 4;
    ctx.algo = resolveAlgo(preset, { dynamicSampling: { maxRounds: 2, onExhausted: "partial" } });
    ctx.algo.overlong.buffer = 8; // fitted to the 32-token budget, as the engine's resolve records
    // An untrained policy answers every prompt wrong, which dynamic sampling would skip: every other answer is
    // graded correct, so every group is informative and every preset takes its step.
    let calls = 0;
    ctx.grade = () =>
      calls++ % 2 === 0
        ? { correct: true, status: "correct", extracted: "1", rule: "forced" }
        : { correct: false, status: "wrong", extracted: "2", rule: "forced" };
    const m = await rlStep(ctx, 1);
    assertEquals(m.skipped, undefined, `${preset}: the step was skipped: ${JSON.stringify(m)}`);
    ok(
      Number.isFinite(m.loss as number) && Number.isFinite(m.grad_norm as number),
      `${preset}: ${JSON.stringify(m)}`,
    );
  }
});

Deno.test("rollouts are keyed by (step, round): two policies of one seed draw the same prompts there", async () => {
  const one = rlContext(), two = rlContext();
  await updatePolicy(two, await rolloutBatch(two)); // a different policy, as ACE's is after its first update
  const ids = (groups: { record: { id: string } }[]) => groups.map((g) => g.record.id);
  const a = await tfjsPolicy(one).sampleGroups(5, 0);
  assertEquals(ids(await tfjsPolicy(two).sampleGroups(5, 0)), ids(a));
  assertEquals(await tfjsPolicy(one).sampleGroups(5, 0), a, "the run's stream is not advanced by sampling");
  for (const [step, round] of [[5, 1], [6, 0]]) {
    const other = ids(await tfjsPolicy(one).sampleGroups(step, round));
    ok(other.join() !== ids(a).join(), `step ${step} round ${round} drew the prompts of step 5 round 0`);
  }
});

Deno.test("a rollout the grader cannot grade is rewarded as not correct and counted per step as ungraded", async () => {
  const ctx = rlContext();
  ctx.settings.rl.promptsPerStep = 2;
  let calls = 0;
  ctx.grade = (prediction, gold, options) => {
    // Every third answer fails inside the grader (an internal error): unknown, not wrong.
    if (calls++ % 3 === 0) {
      return { correct: false, status: "error", extracted: null, rule: "internal: forced" };
    }
    return grade(prediction, gold, options);
  };
  const m = await rlStep(ctx, 1);
  const rollouts = 2 * ctx.settings.rl.groupSize;
  assertEquals(calls, rollouts);
  assertEquals(m.ungraded, Math.ceil(rollouts / 3));
  delete ctx.grade;
  assertEquals((await rlStep(ctx, 2)).ungraded, 0);
});

Deno.test("the reward grades as the sweep's recorded protocol says: changing the record's mode changes the grading", async () => {
  const settings = rlContext().settings as unknown as Record<string, unknown>;
  for (const mode of ["strict", "default"] as const) {
    const dir = tempDir();
    const protocol = engines.tfjs.protocol(settings, { n: 1, ks: [1] });
    protocol.grader.mode = mode;
    writeProtocolSweep(dir, protocol, { name: "x" });
    const ctx = rlContext();
    ctx.grader = gradingOf("tfjs", dir, settings);
    assertEquals(ctx.grader, { strict: mode === "strict", timeoutMs: null });
    const asked: (boolean | undefined)[] = [];
    ctx.grade = (prediction, gold, options) => {
      asked.push(options?.strict);
      return grade(prediction, gold, options);
    };
    await rlStep(ctx, 1);
    ok(asked.length > 0 && asked.every((s) => s === (mode === "strict")), `${mode}: ${asked}`);
  }
  // ...and the mode decides verdicts: a bare final number is an answer only outside strict mode.
  assertEquals([grade("so it is 7", "7", { strict: true }).correct, grade("so it is 7", "7").correct], [
    false,
    true,
  ]);
});
