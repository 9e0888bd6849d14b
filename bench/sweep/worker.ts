// Worker entry: imports one engine and runs one job (the shared `prepare`, or one run), reporting by message.
// A fresh worker per job keeps engine state (tfjs tensors, module caches) from leaking between runs.
import type { RunConfig } from "../engines/engine.ts";
import { type EngineSpec, loadEngine } from "../engines/registry.ts";

/** A job sent to the worker. */
export type WorkerJob =
  | { kind: "prepare"; spec: EngineSpec; settings: Record<string, unknown>; seed: number; sweepDir: string }
  | { kind: "run"; spec: EngineSpec; run: RunConfig; runDir: string; sweepDir: string };

/** What the worker reports back. */
export type WorkerReport =
  | { kind: "progress"; step: number; total: number }
  | { kind: "done" }
  | { kind: "error"; message: string; stack?: string };

// Typed view of the worker global, so this file checks without the deno.worker lib.
const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<WorkerJob>) => void) | null;
  postMessage(report: WorkerReport): void;
};

async function perform(job: WorkerJob): Promise<void> {
  const engine = await loadEngine(job.spec);
  const hooks = {
    onProgress: (step: number, total: number) => scope.postMessage({ kind: "progress", step, total }),
  };
  if (job.kind === "prepare") {
    await engine.prepare?.({ settings: job.settings, seed: job.seed }, job.sweepDir, hooks);
    return;
  }
  await engine.run(job.run, job.runDir, job.sweepDir, hooks);
}

scope.onmessage = (e) => {
  perform(e.data).then(
    () => scope.postMessage({ kind: "done" }),
    (err) => {
      const error = err instanceof Error ? err : new Error(String(err));
      scope.postMessage({ kind: "error", message: error.message, stack: error.stack });
    },
  );
};
