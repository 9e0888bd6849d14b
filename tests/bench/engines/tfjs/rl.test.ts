// The RL update's two forms: one pass (log-probs read inside the loss closure) and two passes (webgpu's form).
import { assertEquals, ok } from "../../../assert.ts";
import {
  getOptimizerStateAsync,
  getWeightsAsync,
  initBackend,
} from "../../../../bench/engines/tfjs/model.ts";
import { rlStep, updatePolicy } from "../../../../bench/engines/tfjs/rl.ts";
import { PRESETS, resolveAlgo } from "../../../../bench/core/mod.ts";
import { rlContext, rolloutBatch } from "./fixtures.ts";

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
    const m = await rlStep(ctx, 1);
    ok(m.skipped !== undefined || Number.isFinite(m.loss as number), `${preset}: ${JSON.stringify(m)}`);
    ok(m.skipped !== undefined || Number.isFinite(m.grad_norm as number), `${preset}: grad_norm`);
  }
});
