// Engines whose jobs write their own outputs (VERL: validation dumps) declare an ingest step in their registry
// entry. Reports never run it: they refuse a folder with outputs not yet ingested, naming the command that does
// (`deno task report DIR --ingest`, which takes the folder's lock first). The engine also ingests when its job ends.
import { join } from "node:path";
import { exists } from "../common/fs.ts";
import { readRunConfig } from "../common/run_folder.ts";
import { engines, runIngest } from "../bench/engines/registry.ts";

/** Run folders of `dir` (a sweep, or one run folder), in name order. */
export function runFolders(dir: string): string[] {
  const runs = join(dir, "runs");
  if (!exists(runs)) return [dir];
  return [...Deno.readDirSync(runs)].filter((e) => e.isDirectory).map((e) => join(runs, e.name)).sort();
}

/** The run folders of `dir` whose engine has outputs newer than their eval.jsonl (not yet ingested). */
export function pendingIngest(dir: string): string[] {
  return runFolders(dir).filter((run) => {
    const spec = engines[String(readRunConfig(run)?.engine)];
    return spec?.ingest?.pending(run) ?? false;
  });
}

/** Throw, naming the runs and the command, when `dir` has outputs not yet ingested. */
export function checkIngested(dir: string): void {
  const pending = pendingIngest(dir);
  if (pending.length === 0) return;
  const names = pending.map((p) => p.split("/").pop()).join(", ");
  throw new Error(
    `${dir}: ${pending.length} run(s) have engine outputs not ingested yet (${names}); ` +
      `run \`deno task report ${dir} --ingest\` first`,
  );
}

/**
 * Ingest every pending run of `dir` (the caller holds the folder's lock); returns the ingested folders. `partial`
 * keeps runs whose outputs lack samples, their cells marked †.
 */
export async function ingestPending(dir: string, options: { partial?: boolean } = {}): Promise<string[]> {
  const pending = pendingIngest(dir);
  const sweepDir = exists(join(dir, "runs")) ? dir : join(dir, "..", "..");
  for (const run of pending) {
    await runIngest(engines[String(readRunConfig(run)?.engine)], run, sweepDir, options);
  }
  return pending;
}
