// The tfjs engine's pieces for the findings sweeps: the oracle control's rollouts (the correct method's trace on the
// step's prompts, trained as PSR), the error class of every sampled rollout, and an extra evaluation protocol
// (its own temperature, top-p, n and problems, under the dataset "<dataset>@<name>").
import { assertEquals, ok } from "../../../assert.ts";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import { rlStep } from "../../../../bench/engines/loop.ts";
import { evaluate } from "../../../../bench/engines/tfjs/policy.ts";
import { tfjsPolicy } from "../../../../bench/engines/tfjs/rl.ts";
import { taskSets } from "../../../../bench/engines/tfjs/settings.ts";
import { methodsOf, renderTrace } from "../../../../bench/engines/tfjs/traces.ts";
import { cutAtEos } from "../../../../bench/engines/tfjs/tokenizer.ts";
import { initBackend } from "../../../../bench/engines/tfjs/model.ts";
import { rlContext } from "./fixtures.ts";

await initBackend("wasm");

Deno.test("oracle: the step's prompts with the correct method's trace, all correct, trained as PSR", async () => {
  const ctx = rlContext();
  ctx.algo = resolveAlgo("oracle");
  const backend = tfjsPolicy(ctx);
  const groups = await backend.sampleGroups(1, 0);
  assertEquals(groups.length, ctx.settings.rl.promptsPerStep);
  const P = ctx.settings.model.promptLength, T = P + ctx.settings.rl.maxNewTokens;
  for (const g of groups) {
    const correct = methodsOf(g.record.meta.family as string).find((m) => m.correct)!;
    const trace = renderTrace(correct, g.record.meta.params ?? {}).text;
    const row = g.tokens.subarray(P, T);
    assertEquals(ctx.tok.decode(cutAtEos(ctx.tok, row).ids), trace);
    ok([...g.correct].every((c) => c === 1) && g.methods.every((m) => m === correct.name));
    ok(g.oldLogp.every((v, t) => (g.mask[t] ? v < 0 : v === 0)), "the policy's log-probs of the trace");
  }
  // The same prompts as a policy run of this seed draws at (step, round): common random numbers.
  ctx.algo = resolveAlgo("grpo");
  const sampled = await tfjsPolicy(ctx).sampleGroups(1, 0);
  assertEquals(sampled.map((g) => g.record.id), groups.map((g) => g.record.id));
  ctx.algo = resolveAlgo("oracle");
  const metrics = await rlStep(backend, ctx.algo, 1);
  assertEquals(metrics.accuracy, 1);
  ok(Number.isFinite(metrics.loss as number) && (metrics.loss as number) < 0, `loss ${metrics.loss}`);
});

Deno.test("sampled rollouts carry an error class; the step logs c per class of incorrect rollout", async () => {
  const ctx = rlContext();
  const groups = await tfjsPolicy(ctx).sampleGroups(1, 0);
  for (const g of groups) {
    assertEquals(g.errorClasses!.length, g.methods.length);
    g.methods.forEach((m, i) => {
      const method = methodsOf(g.record.meta.family as string).find((x) => x.name === m);
      assertEquals(g.errorClasses![i], method && !method.correct ? "shortcut" : "other");
    });
  }
  const metrics = await rlStep(tfjsPolicy(ctx), ctx.algo, 1);
  ok(typeof metrics.err_other_n === "number", "an untrained policy's errors are 'other' traces");
});

Deno.test("an extra evaluation protocol: its own sampling, n and problems, under '<dataset>@<name>'", async () => {
  const ctx = rlContext();
  const policy = { model: ctx.model, tokenizer: ctx.tok, settings: ctx.settings };
  const test = taskSets(ctx.settings).test;
  const protocol = { name: "T0.6", temperature: 0.6, topP: 0.95, n: 3, problems: 2 };
  const records = await evaluate(policy, test, 5, 7, 11, { strict: true }, protocol);
  assertEquals(records.length, 2 * 3);
  ok(records.every((r) => r.dataset === `${test[0].dataset}@T0.6` && r.step === 7));
  assertEquals([...new Set(records.map((r) => r.problemId))], test.slice(0, 2).map((r) => r.id));
  const main = await evaluate(policy, test, 5, 7, 11, { strict: true });
  assertEquals(main.length, test.length * 5);
  ok(main.every((r) => r.dataset === test[0].dataset));
});
