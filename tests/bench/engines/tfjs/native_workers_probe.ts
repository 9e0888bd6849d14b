// Started by native.test.ts in a fresh process: runs 8 Deno Workers one after another, as a sweep runs its jobs,
// each one native sampling run on the Worker's own thread, and prints how many per-thread working buffers of
// the native library are alive once each Worker's thread has ended (waiting up to 20 s for it).
import { Rng } from "../../../../common/prng.ts";
import { createModel, initBackend, sample } from "../../../../bench/engines/tfjs/model.ts";
import { nativeKernels } from "../../../../bench/engines/tfjs/ops/native.ts";

/** The slice of a Worker's global scope used here (Deno's types describe the main thread's). */
const scope = self as unknown as { name?: string; postMessage(m: string): void };
await initBackend("blas");
if (scope.name === "job") {
  const model = createModel({ vocab: 64, dModel: 128, heads: 4, layers: 4, context: 64 }, Rng.seeded(1));
  const rows = 64, prompts = Int32Array.from({ length: rows * 16 }, (_, i) => (i * 7) % 64);
  sample(model, prompts, rows, { maxNew: 48, temperature: 1, topP: 1, rng: Rng.seeded(2) });
  scope.postMessage(String(nativeKernels()!.ace_scratch_buffers()));
} else {
  const alive: string[] = [];
  for (let i = 0; i < 8; i++) {
    const worker = new Worker(import.meta.url, { type: "module", name: "job" });
    const during = await new Promise<string>((done) => worker.onmessage = (e) => done(e.data));
    worker.terminate();
    const until = performance.now() + 20_000; // its thread ends after terminate returns
    while (nativeKernels()!.ace_scratch_buffers() > 0 && performance.now() < until) {
      await new Promise((later) => setTimeout(later, 20));
    }
    alive.push(`${during}/${nativeKernels()!.ace_scratch_buffers()}`);
  }
  console.log(alive.join(" "));
}
