// Worker entry: imports one engine and runs one job (the shared `prepare`, or one run), reporting by message
// (job.ts). A fresh worker per job keeps engine state (tfjs tensors, module caches) from leaking between runs.
import type { RunOutcome } from "../engines/engine.ts";
import { engineOf, loadEngine } from "../engines/registry.ts";
import { checkJob, type WorkerJob, type WorkerReport } from "./job.ts";

// Typed view of the worker global, so this file checks without the deno.worker lib.
const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<unknown>) => void) | null;
  postMessage(report: WorkerReport): void;
};

/** Prepare, or resolve the run once (reported, so the runner records it as config.json), then run it. */
async function perform(job: WorkerJob): Promise<RunOutcome> {
  const engine = await loadEngine(engineOf(job.engine));
  const hooks = {
    onProgress: (step: number, total: number) => scope.postMessage({ kind: "progress", step, total }),
  };
  if (job.kind === "prepare") {
    const { settings, seed, base } = job;
    await engine.prepare?.({ settings, seed, base, eval: job.eval }, job.sweepDir, hooks);
    return "done";
  }
  const run = engine.resolve ? engine.resolve(job.run) : job.run;
  scope.postMessage({ kind: "config", config: run });
  const outcome = await engine.run(run, job.runDir, job.sweepDir, {
    ...hooks,
    onRecord: (fields) => scope.postMessage({ kind: "record", fields }),
  });
  return outcome ?? "done";
}

scope.onmessage = (e) => {
  Promise.resolve().then(() => perform(checkJob(e.data))).then(
    (outcome) => scope.postMessage({ kind: "done", outcome }),
    (err) => {
      const { message, stack } = err instanceof Error ? err : new Error(String(err));
      scope.postMessage({ kind: "error", message, ...(stack ? { stack } : {}) });
    },
  );
};
