// verlEngine.run end to end without VERL: a stand-in "python" plays the trainer (it writes validation dumps where
// the overrides say), then the engine ingests them; with launch "none" the run is planned and reported as such.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { atomicWrite, exists, readJson, readJsonl, writeJson } from "../../../../common/fs.ts";
import type { MathRecord } from "../../../../datasets/mod.ts";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import {
  DEFAULT_VERL_VERSION,
  exportVerlData,
  ingestVerlDumps,
  validateVerlSettings,
  verlEngine,
} from "../../../../bench/engines/verl/mod.ts";
import { assertEquals, ok } from "../../../assert.ts";
import { readStatus } from "../../../../common/run_folder.ts";
import { sha256 } from "../../../../common/hash.ts";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const records: MathRecord[] = JSON.parse(readFileSync(join(fixtures, "records.json"), "utf8"));

// Finds trainer.validation_data_dir="…" among its arguments and copies the fixture dumps there, like a VERL run.
const FAKE_TRAINER = `#!/usr/bin/env bash
set -euo pipefail
if [ "$1" = -c ]; then echo ${DEFAULT_VERL_VERSION}; exit 0; fi  # launch.sh's version check
for arg in "$@"; do
  case "$arg" in trainer.validation_data_dir=*) dir="\${arg#*=}"; dir="\${dir%\\"}"; dir="\${dir#\\"}";; esac
done
mkdir -p "$dir" && cp "$DUMPS"/*.jsonl "$dir"/
`;

function run(settings: Record<string, unknown>): RunConfig {
  return {
    runId: "ace-grpo_s0",
    engine: "verl",
    method: "ace-grpo",
    preset: "ace-grpo",
    seed: 0,
    base: 0,
    algo: { ...resolveAlgo("ace-grpo") },
    settings: { ...settings, rl: { steps: 20 } },
    eval: { n: 3, ks: [1, 2, 3], every: 20 },
  };
}

Deno.test("verl engine: launch local runs the script, then ingests the dumps into eval.jsonl", async () => {
  const sweepDir = mkdtempSync(join(tmpdir(), "verl-engine-"));
  try {
    const python = join(sweepDir, "fake-python");
    atomicWrite(python, FAKE_TRAINER);
    Deno.chmodSync(python, 0o755);
    await exportVerlData(
      sweepDir,
      validateVerlSettings({}),
      (name) => Promise.resolve(records.filter((r) => r.dataset === name)),
    );
    const runDir = join(sweepDir, "runs", "ace-grpo_s0");
    const progress: [number, number][] = [];
    const env = Deno.env.toObject();
    Deno.env.set("DUMPS", join(fixtures, "verl_run", "val_generations"));
    try {
      await verlEngine.run(run({ launch: "local", python, verlRoot: sweepDir }), runDir, sweepDir, {
        onProgress: (s, t) => progress.push([s, t]),
      });
    } finally {
      if (env.DUMPS === undefined) Deno.env.delete("DUMPS");
    }
    assertEquals(progress, [[0, 20], [20, 20]]);
    ok(exists(join(runDir, "val_generations", "20.jsonl")));
    const lines = readJsonl<{ step: number; problemId: string }>(join(runDir, "eval.jsonl"));
    assertEquals(lines.length, 18);
    assertEquals(new Set(lines.map((l) => l.problemId)).size, 3);
  } finally {
    rmSync(sweepDir, { recursive: true, force: true });
  }
});

Deno.test("verl engine: launch none writes the plan and ends the run as planned", async () => {
  const sweepDir = mkdtempSync(join(tmpdir(), "verl-engine-"));
  try {
    const runDir = join(sweepDir, "runs", "ace-grpo_s0");
    // the sweep's bundled grader (its SHA256SUMS is its identity) and the runner's status of the run
    writeJson(join(runDir, "status.json"), { state: "running", startedAt: "2026-01-01T00:00:00.000Z" });
    Deno.mkdirSync(join(sweepDir, "verl", "grader"), { recursive: true });
    Deno.writeTextFileSync(join(sweepDir, "verl", "grader", "SHA256SUMS"), `${"1".repeat(64)}  deno\n`);
    assertEquals(await verlEngine.run(run({}), runDir, sweepDir, { onProgress: () => {} }), "planned");
    for (const f of ["launch.sh", "ray_job.sh", "overrides.txt", "ace_verl.py"]) {
      ok(exists(join(runDir, "verl", f)), f);
    }
    ok(!exists(join(runDir, "eval.jsonl")));
    assertEquals(
      readStatus(runDir)?.graderBundleSha256,
      sha256(`${"1".repeat(64)}  deno\n`),
      "the run records the bundle it scores with",
    );
  } finally {
    rmSync(sweepDir, { recursive: true, force: true });
  }
});

Deno.test("verl engine: a planned run becomes done once ingested dumps reach its last step", async () => {
  const sweepDir = mkdtempSync(join(tmpdir(), "verl-engine-"));
  try {
    await exportVerlData(
      sweepDir,
      validateVerlSettings({}),
      (name) => Promise.resolve(records.filter((r) => r.dataset === name)),
    );
    const runDir = join(sweepDir, "runs", "ace-grpo_s0");
    const failed = {
      state: "failed",
      reason: "planned, not launched",
      startedAt: "2026-01-01T00:00:00.000Z",
    };
    const dumps = join(fixtures, "verl_run", "val_generations");
    for (const [steps, finished] of [[40, false], [20, true]] as const) {
      writeJson(join(runDir, "config.json"), { ...run({}), settings: { rl: { steps } } });
      writeJson(join(runDir, "status.json"), failed);
      const summary = await ingestVerlDumps(runDir, { dumpDir: dumps });
      assertEquals(summary.finished, finished);
      const status = readJson<{ state: string; reason?: string; startedAt: string }>(
        join(runDir, "status.json"),
      );
      assertEquals(
        [status.state, status.reason, status.startedAt],
        finished ? ["done", undefined, failed.startedAt] : ["failed", failed.reason, failed.startedAt],
      );
    }
  } finally {
    rmSync(sweepDir, { recursive: true, force: true });
  }
});
