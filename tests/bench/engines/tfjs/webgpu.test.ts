// The engine on webgpu (Deno's WebGPU; on a CPU machine through Mesa's lavapipe): numerics against wasm, then
// SFT + RL end to end. Skipped, with a message, where no WebGPU adapter exists.
import * as tf from "@tensorflow/tfjs-core";
import { join } from "node:path";
import { assertClose, assertEquals, ok } from "../../../assert.ts";
import { readJson, readJsonl } from "../../../../common/fs.ts";
import { tfjsEngine } from "../../../../bench/engines/tfjs/engine.ts";
import {
  getWeightsAsync,
  initBackend,
  type Model,
  tokenLogProbs,
} from "../../../../bench/engines/tfjs/model.ts";
import { presetSettings } from "../../../../bench/engines/tfjs/settings.ts";
import { metricsOf, rlContext, rolloutBatch, runConfig, updatePolicy } from "./fixtures.ts";
import { skipping } from "../../../external_inputs.ts";

const gpu = (navigator as { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
const ignore = skipping(
  "the webgpu tests",
  adapter ? null : "no WebGPU adapter (CPU machine: apt-get install -y mesa-vulkan-drivers)",
);

/** Run `f` on webgpu, then return to wasm (the other test files' backend). */
async function onWebgpu<T>(f: () => Promise<T>): Promise<T> {
  assertEquals(await initBackend("webgpu"), "webgpu");
  try {
    return await f();
  } finally {
    await initBackend("wasm");
  }
}

/** Largest |a − b| over two weight maps. */
function maxDiff(a: Record<string, { data: Float32Array }>, b: Record<string, { data: Float32Array }>) {
  let d = 0;
  for (const k of Object.keys(b)) b[k].data.forEach((v, i) => (d = Math.max(d, Math.abs(a[k].data[i] - v))));
  return d;
}

Deno.test({
  name: "webgpu: log-probs and a two-mini-batch RL update agree with wasm",
  ignore,
  fn: async () => {
    await initBackend("wasm");
    const cpu = rlContext(), batch = await rolloutBatch(cpu);
    const P = cpu.settings.model.promptLength, T = P + batch.N;
    const logp = async (model: Model) => {
      const t = tf.tidy(() => tokenLogProbs(model, tf.tensor2d(batch.tokens, [batch.B, T], "int32")).logp);
      const values = await t.array();
      t.dispose();
      return values;
    };
    const onWasm = await logp(cpu.model);
    const expected = await updatePolicy(cpu, batch);
    const gpuCtx = rlContext();
    const { onGpu, got, gpuWeights } = await onWebgpu(async () => {
      const onGpu = await logp(gpuCtx.model), got = await updatePolicy(gpuCtx, batch);
      return { onGpu, got, gpuWeights: await getWeightsAsync(gpuCtx.model) };
    });
    onGpu.forEach((r, b) => r.forEach((v, t) => assertClose(v, onWasm[b][t], 1e-4, `logp[${b}][${t}]`)));
    assertClose(got.loss, expected.loss, 1e-5, "loss");
    // The clipping norm: tfjs-webgpu's addN once returned a stale buffer here (the norm read back as the loss).
    assertClose(got.gradNorm, expected.gradNorm, 1e-4 * expected.gradNorm, "gradient norm");
    assertClose(got.metrics.kl!, expected.metrics.kl!, 1e-5, "kl");
    const moved = maxDiff(await getWeightsAsync(rlContext().model), await getWeightsAsync(cpu.model));
    const apart = maxDiff(gpuWeights, await getWeightsAsync(cpu.model));
    ok(apart < moved / 100, `webgpu weights differ from wasm by ${apart}; the update moved them by ${moved}`);
  },
});

Deno.test({
  name: "webgpu: SFT then RL end to end; the same seed gives the same numbers",
  ignore,
  fn: async () => {
    const settings = presetSettings("tiny") as unknown as Record<string, Record<string, unknown>>;
    settings.backend = "webgpu" as unknown as Record<string, unknown>;
    Object.assign(settings.sft, { steps: 40 });
    Object.assign(settings.rl, { steps: 2, promptsPerStep: 4, groupSize: 4 });
    const sweep = Deno.makeTempDirSync({ prefix: "tfjs-webgpu-" });
    const run = (id: string) => runConfig(settings, "ace-grpo", 1, { n: 2, ks: [1, 2], every: 2 }, id);
    try {
      await onWebgpu(async () => {
        await tfjsEngine.prepare!({ settings, seed: 0, base: 0 }, sweep);
        const base = readJson<{ backend: string; finalLoss: number }>(join(sweep, "base", "0", "base.json"));
        const sft = readJsonl<{ loss: number; gradNorm: number }>(
          join(sweep, "base", "0", "sft_metrics.jsonl"),
        );
        assertEquals(base.backend, "webgpu");
        ok(sft.at(-1)!.loss < sft[0].loss, `SFT loss ${sft[0].loss} -> ${sft.at(-1)!.loss}`);
        for (const id of ["a", "b"]) {
          await tfjsEngine.run(run(id), join(sweep, "runs", id), sweep, { onProgress() {} });
        }
      });
      const a = metricsOf(join(sweep, "runs", "a"));
      assertEquals(a.map((m) => m.step), [1, 2]);
      ok(a.every((m) => Number.isFinite(m.loss) && Number.isFinite(m.grad_norm)), JSON.stringify(a));
      assertEquals(metricsOf(join(sweep, "runs", "b")), a);
      const evals = readJsonl<{ step: number }>(join(sweep, "runs", "a", "eval.jsonl"));
      assertEquals([...new Set(evals.map((e) => e.step))], [0, 2]);
      assertEquals(readJsonl(join(sweep, "runs", "b", "eval.jsonl")), evals);
    } finally {
      Deno.removeSync(sweep, { recursive: true });
    }
  },
});
