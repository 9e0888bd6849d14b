// The runner's side of engines whose runs are cluster jobs (VERL through Ray's job API): how many runs are in
// flight at once (what the cluster holds, not this machine's cores), and what happens to their jobs on Ctrl-C.
// The runs themselves go through the same Worker lanes as any engine's.
import { readStatus, runDir } from "../../common/run_folder.ts";
import type { RunConfig } from "../engines/engine.ts";
import type { EngineCluster } from "../engines/registry.ts";
import type { SweepConfig } from "./config.ts";

/**
 * Lanes for a sweep: the cluster's concurrency when the engine schedules one (else `workers`), at most the
 * pending runs, at least 1.
 */
export async function laneWidth(
  cluster: EngineCluster | null,
  sweep: SweepConfig,
  workers: number,
  pending: number,
): Promise<number> {
  const slots = cluster ? await cluster.concurrency(sweep.settings) : null;
  if (slots !== null) console.error(`sweep ${sweep.name}: up to ${slots} cluster jobs in flight`);
  return Math.max(1, Math.min(slots ?? workers, pending));
}

/** After Ctrl-C: the engine stops or detaches the job of every run the interrupted sweep left running. */
export async function interruptJobs(cluster: EngineCluster, out: string, runs: RunConfig[]): Promise<void> {
  for (const run of runs) {
    const dir = runDir(out, run.runId);
    if (readStatus(dir)?.state !== "running") continue;
    try {
      await cluster.interrupt(dir, run.settings);
    } catch (e) {
      console.error(`run ${run.runId}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
}
