// SFT checkpoints: an SFT interrupted after some steps and started again ends with exactly the weights and log of
// an uninterrupted one, in one process and data-parallel.
import { join } from "node:path";
import { assertEquals, ok, rejects } from "../../../assert.ts";
import { exists, readJson } from "../../../../common/fs.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  createModel,
  disposeModel,
  getWeightsAsync,
  initBackend,
} from "../../../../bench/engines/tfjs/model.ts";
import {
  modelConfig,
  presetSettings,
  settingsTokenizer,
  taskSets,
} from "../../../../bench/engines/tfjs/settings.ts";
import { trainSft } from "../../../../bench/engines/tfjs/sft.ts";

await initBackend("wasm");

/** SFT of the tiny settings for 10 steps with `workers`; `stopAt` throws from the progress hook at that step. */
async function sft(workers: number, dir?: string, stopAt?: number) {
  const s = presetSettings("tiny");
  s.sft.steps = 10;
  s.sft.workers = workers;
  s.sft.checkpointEvery = 4;
  const tok = settingsTokenizer(s);
  const rng = Rng.seeded(5).derive("sft");
  const model = createModel(modelConfig(s, tok), rng.derive("init"));
  const seen: number[] = [];
  const onStep = (step: number) => {
    seen.push(step);
    if (step === stopAt) throw new Error(`interrupted at step ${step}`);
  };
  try {
    const log = await trainSft(
      model,
      tok,
      taskSets(s).train,
      s,
      rng,
      onStep,
      dir,
    );
    const weights = Object.entries(await getWeightsAsync(model)).map(([k, v]) => [k, [...v.data]]);
    return { log, weights, seen };
  } finally {
    disposeModel(model);
  }
}

for (const workers of [1, 2]) {
  Deno.test(`SFT (${workers} worker(s)): interrupted after 6 steps and resumed, it ends bit-for-bit as one that ran through`, async () => {
    const dir = join(Deno.makeTempDirSync({ prefix: "sft-ckpt-" }), "sft-checkpoints");
    try {
      const whole = await sft(workers);
      await rejects(sft(workers, dir, 6), /interrupted at step 6/);
      // Steps 1–4 are saved (every 4 steps); steps 5 and 6 are lost and done again.
      assertEquals(readJson<{ step: number }>(join(dir, "latest.json")).step, 4);
      const resumed = await sft(workers, dir);
      assertEquals(resumed.seen[0], 4, "progress restarts at the checkpoint");
      assertEquals(resumed.log, whole.log);
      assertEquals(resumed.weights, whole.weights);
      ok(exists(join(dir, "step-000008")), "the newest checkpoint replaced the older one");
      ok(!exists(join(dir, "step-000004")));
    } finally {
      Deno.removeSync(join(dir, ".."), { recursive: true });
    }
  });
}
