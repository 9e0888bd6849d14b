// VERL's own per-step training metrics (its file logger, trainer.logger=[console,file]): one JSON line
// {"step": N, "data": {"actor/entropy": …, …}} per step, one file per start of the run (launch.sh names it, since
// the logger truncates its file). Here they become metrics.jsonl fields named as the RL core names them.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { exists, readJsonl } from "../../../common/fs.ts";

/** The run-folder subfolder VERL's file logger writes into (one <start time>-<pid>.jsonl per start). */
export const VERL_METRICS_DIR = "verl_metrics";

/** VERL metric → metrics.jsonl field (bench/core/diagnostics.ts names where one exists). */
const VERL_METRIC_FIELDS: Readonly<Record<string, string>> = {
  "actor/entropy": "entropy",
  "actor/pg_clipfrac": "clipfrac",
  "actor/pg_clipfrac_lower": "clipfrac_lower",
  "actor/ppo_kl": "ppo_kl",
  "actor/pg_loss": "pg_loss",
  "actor/kl_loss": "kl",
  "response_length/mean": "response_length",
  "response_length/clip_ratio": "response_clip_frac",
  "train/num_gen_batches": "gen_batches",
};

/**
 * The mapped metrics per training step from every file in `<runDir>/verl_metrics/` (files in name order, i.e. by
 * start time, so a resumed run's record of a step wins). Validation-only records (no actor metric) are skipped;
 * a line without an integer `step` or an object `data` is an error naming file and line. Empty when no folder.
 */
export function readVerlMetrics(runDir: string): Map<number, Record<string, number>> {
  const dir = join(runDir, VERL_METRICS_DIR);
  const byStep = new Map<number, Record<string, number>>();
  if (!exists(dir)) return byStep;
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl")).sort()) {
    const path = join(dir, name);
    readJsonl<{ step?: unknown; data?: unknown }>(path).forEach((line, i) => {
      if (!Number.isInteger(line.step) || typeof line.data !== "object" || line.data === null) {
        throw new Error(`${path}:${i + 1}: expected {"step": integer, "data": {…}} (VERL's file logger)`);
      }
      const data = line.data as Record<string, unknown>;
      const mapped: Record<string, number> = {};
      for (const [key, field] of Object.entries(VERL_METRIC_FIELDS)) {
        if (typeof data[key] === "number" && Number.isFinite(data[key])) mapped[field] = data[key] as number;
      }
      if (Object.keys(mapped).length > 0) byStep.set(line.step as number, mapped);
    });
  }
  return byStep;
}
