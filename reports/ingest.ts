// Engines whose runs need converting before a report reads them: VERL writes validation dumps, not eval.jsonl.
import { join } from "node:path";
import { exists } from "../common/fs.ts";
import type { Ingest } from "./load.ts";

const verlModule = new URL("../bench/engines/verl/mod.ts", import.meta.url).href;

/** Ingest hooks by engine name; the VERL module is imported only when a VERL run folder has dumps to grade. */
export function engineIngest(): Record<string, Ingest> {
  return {
    verl: async (runDir) => {
      if (!exists(join(runDir, "val_generations"))) return; // planned, never launched: nothing to ingest
      const mod = await import(verlModule);
      await mod.ingestVerlDumps(runDir, { sweepDir: join(runDir, "..", "..") });
    },
  };
}
