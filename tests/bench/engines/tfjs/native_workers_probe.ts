// Started by native.test.ts in a fresh process (under `deno test` a finished Worker's memory is not returned at
// once): runs 16 Deno Workers one after another, as a sweep runs its jobs, each one native sampling run on the
// Worker's own thread, and prints this process's resident MB after each Worker ended.
import { Rng } from "../../../../common/prng.ts";
import { createModel, initBackend, sample } from "../../../../bench/engines/tfjs/model.ts";

/** The slice of a Worker's global scope used here (Deno's types describe the main thread's). */
const scope = self as unknown as { name?: string; postMessage(m: string): void };
if (scope.name === "job") {
  await initBackend("blas");
  const model = createModel({ vocab: 64, dModel: 128, heads: 4, layers: 4, context: 64 }, Rng.seeded(1));
  const rows = 64, prompts = Int32Array.from({ length: rows * 16 }, (_, i) => (i * 7) % 64);
  sample(model, prompts, rows, { maxNew: 48, temperature: 1, topP: 1, rng: Rng.seeded(2) });
  scope.postMessage("done");
} else {
  const mb: number[] = [];
  for (let i = 0; i < 16; i++) {
    const worker = new Worker(import.meta.url, { type: "module", name: "job" });
    await new Promise((done) => worker.onmessage = done);
    worker.terminate();
    await new Promise((ended) => setTimeout(ended, 100)); // its thread exits after terminate returns
    mb.push(Deno.memoryUsage().rss / 2 ** 20);
  }
  console.log(mb.map(Math.round).join(" "));
}
