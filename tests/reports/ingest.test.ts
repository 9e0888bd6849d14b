// Reports never write into run folders: a VERL run whose validation dumps are not ingested yet is refused with the
// command that ingests it; `deno task report DIR --ingest` does it as the folder's one writer; `power` reads only.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, ok, rejects } from "../assert.ts";
import type { MathRecord } from "../../datasets/mod.ts";
import { resolveAlgo } from "../../bench/core/mod.ts";
import { exportVerlData, validateVerlSettings } from "../../bench/engines/verl/mod.ts";
import { readStatus, runFile, writeRunConfig, writeStatus } from "../../common/run_folder.ts";
import { exists } from "../../common/fs.ts";
import { buildReport, pendingIngest } from "../../reports/mod.ts";
import { main as reportMain } from "../../reports/cli.ts";
import { main as powerMain } from "../../reports/power.ts";

const fixtures = fileURLToPath(new URL("../bench/engines/verl/fixtures/", import.meta.url));
const records: MathRecord[] = JSON.parse(readFileSync(join(fixtures, "records.json"), "utf8"));

/** Every file under `dir` with its bytes, to show a command changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) Object.assign(out, snapshot(p));
    else out[p] = Deno.readTextFileSync(p);
  }
  return out;
}

Deno.test("report: un-ingested VERL dumps are refused; report --ingest ingests under the lock; power writes nothing", async () => {
  const sweepDir = Deno.makeTempDirSync({ prefix: "ingest-" });
  try {
    await exportVerlData(
      sweepDir,
      validateVerlSettings({}),
      (name) => Promise.resolve(records.filter((r) => r.dataset === name)),
    );
    const dir = join(sweepDir, "runs", "ace-grpo_s0");
    writeRunConfig(dir, {
      runId: "ace-grpo_s0",
      engine: "verl",
      method: "ace-grpo",
      preset: "ace-grpo",
      seed: 0,
      base: 0,
      algo: { ...resolveAlgo("ace-grpo") },
      settings: { rl: { steps: 20 } },
      eval: { n: 3, ks: [1, 2, 3], every: 20 },
      record: null,
    });
    writeStatus(dir, { state: "planned", startedAt: "2026-01-01T00:00:00.000Z" });
    // The job ran by hand (settings.launch "none"): its dumps land in the run folder.
    mkdirSync(join(dir, "val_generations"));
    for (const f of ["0.jsonl", "20.jsonl"]) {
      copyFileSync(join(fixtures, "verl_run", "val_generations", f), join(dir, "val_generations", f));
    }
    assertEquals(pendingIngest(sweepDir), [dir]);
    const before = snapshot(sweepDir);
    await rejects(
      buildReport(sweepDir, { iters: 100 }),
      new RegExp(
        `1 run\\(s\\) have engine outputs not ingested yet \\(ace-grpo_s0\\); run .deno task report ${sweepDir} --ingest.`,
      ),
    );
    await rejects(powerMain([sweepDir]), /not ingested yet/);
    assertEquals(snapshot(sweepDir), before, "report and power wrote nothing");
    assertEquals(await reportMain([sweepDir, "--ingest", "--partial", "--iters", "100"]), 0);
    ok(exists(runFile(dir, "eval")), "eval.jsonl written by the ingest");
    assertEquals(readStatus(dir)?.state, "done", "the dumps reach the last step");
    assertEquals(pendingIngest(sweepDir), []);
    ok(!exists(join(sweepDir, ".lock")), "the ingest released the folder");
    // Ingested: a plain report now reads it, and changes no run file.
    const runFiles = snapshot(join(sweepDir, "runs"));
    assertEquals(await reportMain([sweepDir, "--partial", "--iters", "100"]), 0);
    assertEquals(snapshot(join(sweepDir, "runs")), runFiles);
  } finally {
    Deno.removeSync(sweepDir, { recursive: true });
  }
});
