// Worker entry: imports one engine and runs one job (the shared `prepare`, or one run), reporting by message.
// A fresh worker per job keeps engine state (tfjs tensors, module caches) from leaking between runs.
import type { EvalSpec, RunConfig, RunOutcome } from "../engines/engine.ts";
import { type EngineSpec, loadEngine } from "../engines/registry.ts";

/** A job sent to the worker. */
export type WorkerJob =
  | {
    kind: "prepare";
    spec: EngineSpec;
    settings: Record<string, unknown>;
    seed: number;
    base: number;
    eval: EvalSpec;
    sweepDir: string;
  }
  | { kind: "run"; spec: EngineSpec; run: RunConfig; runDir: string; sweepDir: string };

/** What the worker reports back. */
export type WorkerReport =
  | { kind: "progress"; step: number; total: number }
  | { kind: "config"; config: RunConfig<unknown> }
  | { kind: "record"; fields: Record<string, unknown> }
  | { kind: "done"; outcome: RunOutcome }
  | { kind: "error"; message: string; stack?: string };

// Typed view of the worker global, so this file checks without the deno.worker lib.
const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<WorkerJob>) => void) | null;
  postMessage(report: WorkerReport): void;
};

/** Prepare, or resolve the run once (reported, so the runner records it as config.json), then run it. */
async function perform(job: WorkerJob): Promise<RunOutcome> {
  const engine = await loadEngine(job.spec);
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
  perform(e.data).then(
    (outcome) => scope.postMessage({ kind: "done", outcome }),
    (err) => {
      const error = err instanceof Error ? err : new Error(String(err));
      scope.postMessage({ kind: "error", message: error.message, stack: error.stack });
    },
  );
};
