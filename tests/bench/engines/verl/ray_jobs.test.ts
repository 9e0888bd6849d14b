// The ray-job pieces that need no cluster: runs per cluster from its nodes' GPUs, submission ids without a
// timestamp, and the checks before the first submission that refuse without a job (upload bound, no checkout).
// The job API itself runs against a real two-node cluster in ray_cluster.test.ts.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { validateVerlSettings } from "../../../../bench/engines/verl/mod.ts";
import {
  checkClusterAssumptions,
  clusterSlots,
  submissionId,
} from "../../../../bench/engines/verl/ray_jobs.ts";
import { assertEquals, ok, rejects } from "../../../assert.ts";
import { tempDir } from "../../../temp.ts";

Deno.test("ray-job: runs in flight are what the nodes' GPUs hold for the plan's nodes x gpusPerNode", () => {
  const eight = Array.from({ length: 8 }, () => ({ gpus: 8 })); // 64 GPUs
  assertEquals(clusterSlots(eight, { nodes: 1, gpusPerNode: 8 }), 8);
  assertEquals(clusterSlots(eight, { nodes: 2, gpusPerNode: 8 }), 4);
  assertEquals(clusterSlots(eight, { nodes: 1, gpusPerNode: 4 }), 16);
  // a node's leftover GPUs hold no part of a run; a run of 3 nodes fits once in 4
  assertEquals(clusterSlots([{ gpus: 6 }, { gpus: 4 }], { nodes: 1, gpusPerNode: 4 }), 2);
  assertEquals(
    clusterSlots([{ gpus: 2 }, { gpus: 2 }, { gpus: 2 }, { gpus: 2 }], { nodes: 3, gpusPerNode: 2 }),
    1,
  );
  assertEquals(clusterSlots([{ gpus: 0 }], { nodes: 1, gpusPerNode: 1 }), 0);
});

Deno.test("ray-job: a submission id is a function of the run and attempt, never of the time", () => {
  const id = submissionId("/shared/sweeps/q25/runs/ace-grpo_s0", "ace-grpo_s0", 1);
  ok(/^acebench-ace-grpo_s0-[0-9a-f]{8}-a1$/.test(id), id);
  assertEquals(submissionId("/shared/sweeps/q25/runs/ace-grpo_s0", "ace-grpo_s0", 1), id);
  ok(submissionId("/shared/sweeps/other/runs/ace-grpo_s0", "ace-grpo_s0", 1) !== id, "another sweep folder");
  assertEquals(
    submissionId("/shared/sweeps/q25/runs/ace-grpo_s0", "ace-grpo_s0", 2),
    id.replace(/-a1$/, "-a2"),
  );
});

Deno.test("ray-job: an upload over maxUploadMB, or no checkout, is refused in one line before any job", async () => {
  const dir = tempDir("acebench-rayjob-");
  const verlRoot = join(dir, "verl");
  mkdirSync(join(verlRoot, ".git"), { recursive: true });
  writeFileSync(join(verlRoot, "big.bin"), new Uint8Array(2_000_000));
  writeFileSync(join(verlRoot, ".git", "pack"), new Uint8Array(5_000_000)); // .git is not uploaded
  const settings = validateVerlSettings({
    launch: "ray-job",
    maxUploadMB: 1,
    rayAddress: "http://127.0.0.1:9",
  });
  await rejects(
    () => checkClusterAssumptions(dir, dir, settings, verlRoot),
    new RegExp(
      `^Error: ray-job: the working dir ${verlRoot} \\(without .git\\) exceeds settings.maxUploadMB = 1 MB; `,
    ),
  );
  await rejects(
    () => checkClusterAssumptions(dir, dir, settings, null),
    /no VERL checkout to run from: set settings.verlRoot \(or VERL_ROOT when planning\)/,
  );
  await rejects(
    () => checkClusterAssumptions(dir, dir, settings, join(dir, "absent")),
    /verlInstall "upload" uploads .*absent, which is not on this machine; set verlInstall "image"/,
  );
  // within the bound, the next check is the probe job: an unreachable dashboard is one line too
  await rejects(
    () => checkClusterAssumptions(dir, dir, { ...settings, maxUploadMB: 3 }, verlRoot),
    /ray-job: (cannot run ray|ray job submit .* failed)/,
  );
});
