// VERL sweeps through Ray's job API on a real two-node Ray cluster on this machine (ray_cluster.ts: a head and a
// worker node, 2 logical GPUs each). The job is a cheap stand-in for VERL's trainer (fixtures/
// ray_standin_trainer.py: a real Ray driver that reserves the plan's GPUs in a placement group, starts a worker
// actor per GPU, steps, checkpoints and writes VERL-shaped dumps), so what is checked is the job mechanics: the
// probe, the bounded upload, runs in flight as the cluster holds them, deterministic submission ids, reattaching
// after the sweep is killed, stop on Ctrl-C, a retried failure, a node killed mid-job, ingest and the report.
// Gated: ACEBENCH_RAY_CLUSTER=1 (minutes of CPU on two cores), the VERL venv with Ray's dashboard packages
// (.ci/setup_verl_venv.sh) and the dataset mirror.
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists, readJson, readJsonl } from "../../../../common/fs.ts";
import { readStatus, type RunStatus } from "../../../../common/run_folder.ts";
import { validateVerlSettings } from "../../../../bench/engines/verl/mod.ts";
import {
  checkClusterAssumptions,
  interruptRayJob,
  jobStatus,
  rayJobConcurrency,
  runRayJob,
  submissionId,
} from "../../../../bench/engines/verl/ray_jobs.ts";
import { assert, assertEquals, ok, rejects } from "../../../assert.ts";
import { taskPermissions } from "../../../run_cli.ts";
import { tempDir } from "../../../temp.ts";
import { DATASET_MIRROR, missing, skipping } from "../../../external_inputs.ts";
import { clusterEnv, dashboardJson, type LocalCluster, startCluster } from "./ray_cluster.ts";
import { TINY_VERL_BATCH, VENV_PYTHON, verlVenvMissing } from "./verl_venv.ts";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));

function clusterMissing(): string | null {
  if (Deno.env.get("ACEBENCH_RAY_CLUSTER") !== "1") {
    return "set ACEBENCH_RAY_CLUSTER=1 to run it (a two-node Ray cluster; minutes of CPU)";
  }
  const venv = verlVenvMissing();
  if (venv) return venv;
  const probe = new Deno.Command(VENV_PYTHON, {
    args: ["-c", "import ray.dashboard.optional_deps"],
    env: { PYTHONPATH: join(fixtures, "ray_dashboard") },
  }).outputSync();
  if (!probe.success) return `${VENV_PYTHON} lacks Ray's dashboard packages (bash .ci/setup_verl_venv.sh)`;
  if (!exists(join(DATASET_MIRROR, "aime2025"))) return missing("datasetMirror");
  return null;
}
const skip = clusterMissing();
skipping("the Ray-cluster tests", skip);

/** `settings.python` for the stand-in trainer: the venv's python on the fixture, with a step time. */
function standinPython(dir: string, stepS: number): string {
  const path = join(dir, "python");
  writeFileSync(
    path,
    `#!/bin/sh\nSTANDIN_STEP_S=${stepS} exec ${VENV_PYTHON} ${
      join(fixtures, "ray_standin_trainer.py")
    } "$@"\n`,
    { mode: 0o755 },
  );
  return path;
}

/** A 4-run sweep (grpo and ace-grpo, seeds 0 and 1), one node with 2 GPUs per run, through the job API. */
function sweepConfig(dashboard: string, verlRoot: string, python: string, cache: string) {
  return {
    name: "verl-rayjob",
    description: "Ray job API mechanics with a stand-in trainer; the numbers are no result",
    engine: "verl",
    seeds: [0, 1],
    methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
    settings: {
      model: "Qwen/Qwen2.5-Math-7B",
      python,
      verlVersion: "0.9.0",
      verlRoot,
      launch: "ray-job",
      rayAddress: dashboard,
      onInterrupt: "detach",
      jobPollSeconds: 1,
      datasetMirror: DATASET_MIRROR,
      datasetCacheDir: cache,
      nodes: 1,
      gpusPerNode: 2,
      maxPromptLength: 1024,
      maxResponseLength: 48,
      ...TINY_VERL_BATCH,
    },
    rl: { steps: 3 },
    eval: { n: 2, ks: [1, 2], every: 1 },
  };
}

/** `deno task sweep` as a child process (deno.json's permissions); `log()` is its output so far. */
function spawnSweep(args: string[]): { child: Deno.ChildProcess; log: () => string } {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...taskPermissions("sweep"), join(root, "cli.ts"), "sweep", ...args],
    env: { ...clusterEnv(), CI: "true", ACEBENCH_WEBGPU_ADAPTER: "0", HOME: Deno.env.get("HOME") ?? "/root" },
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk;
  };
  drain(child.stdout);
  drain(child.stderr);
  return { child, log: () => text };
}

async function until<T>(
  what: string,
  seconds: number,
  probe: () => T | null | undefined | false,
): Promise<T> {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

interface JobRow {
  submission_id: string | null;
  status: string;
}
const acebenchJobs = (cluster: LocalCluster) =>
  dashboardJson<JobRow[]>(cluster, "/api/jobs/").filter((j) =>
    j.submission_id?.startsWith("acebench-") &&
    !j.submission_id.startsWith("acebench-probe-")
  );

function runStates(out: string): Map<string, RunStatus | null> {
  const runs = join(out, "runs");
  return new Map((exists(runs) ? readdirSync(runs) : []).map((r) => [r, readStatus(join(runs, r))]));
}

Deno.test({
  name:
    "ray-job on a real 2-node Ray cluster: probe, jobs in flight, reattach, a lost node, stop, retry, report",
  ignore: skip !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = tempDir("acebench-rayjob-");
    const cluster = startCluster(tempDir("rc-"), 1, 2);
    try {
      const verlRoot = join(dir, "verl-checkout");
      mkdirSync(join(verlRoot, "verl"), { recursive: true });
      writeFileSync(join(verlRoot, "verl", "__init__.py"), '__version__ = "0.9.0"\n');
      const python = standinPython(dir, 1);
      const configFile = join(dir, "config.json");
      const config = sweepConfig(cluster.dashboard, verlRoot, python, join(dir, "cache"));
      writeFileSync(configFile, JSON.stringify(config));
      const settings = validateVerlSettings(config.settings);
      Deno.env.set("PATH", clusterEnv().PATH); // the engine's `ray job submit`, in this process

      // the cluster holds two runs of one node x 2 GPUs at once; the checks before the first submission
      assertEquals(await rayJobConcurrency(settings), 2);
      const probeDir = join(dir, "probe-sweep");
      mkdirSync(probeDir);
      await rejects(
        () => checkClusterAssumptions(probeDir, probeDir, { ...settings, maxUploadMB: 1e-6 }, verlRoot),
        /exceeds settings.maxUploadMB = 0.000001 MB; raise it, or set verlInstall "image"/,
      );
      await rejects(
        () =>
          checkClusterAssumptions(
            probeDir,
            "/nonexistent/sweep",
            { ...settings, verlInstall: "image" },
            verlRoot,
          ),
        /the cluster does not see the sweep folder: a probe job \(acebench-probe-.*\) .* could not read \/nonexistent\/sweep\/verl\/probe\/.*set settings.clusterSweepDir/,
      );

      // 1. the sweep submits two jobs at once, then is killed (Ctrl-C with onInterrupt "detach")
      const out = join(dir, "sweep");
      // the first two jobs wait after their first step until the worker node is killed (the stand-in's hold)
      const hold = join(out, "standin_hold");
      mkdirSync(out, { recursive: true });
      writeFileSync(hold, "");
      const first = spawnSweep(["--config", configFile, "--out", out]);
      await until("two Ray jobs running", 600, () => {
        const running = acebenchJobs(cluster).filter((j) => j.status === "RUNNING");
        return running.length >= 2 &&
          [...runStates(out).values()].filter((s) => s?.rayJob?.state === "RUNNING")
              .length === 2;
      });
      assertEquals(acebenchJobs(cluster).length, 2, "two in flight, the other runs wait for a lane");
      ok(first.log().includes("up to 2 cluster jobs in flight"), first.log());
      ok(/a probe job in the Ray cluster \(on .*\) read and wrote/.test(first.log()), first.log());
      first.child.kill("SIGINT");
      assertEquals((await first.child.status).code, 130, first.log().slice(-2000));
      ok(
        first.log().includes('(onInterrupt "detach"); run the sweep again to reattach'),
        first.log().slice(-2000),
      );
      const detached = acebenchJobs(cluster);
      assertEquals(detached.map((j) => j.status), ["RUNNING", "RUNNING"], "detached jobs keep running");

      // both nodes hold a running run's workers (Ray's state API), as the plan's nodes x gpusPerNode say
      const headId =
        dashboardJson<{ data: { result: { result: { node_id: string; is_head_node: boolean }[] } } }>(
          cluster,
          "/api/v0/nodes",
        ).data.result.result.find((n) => n.is_head_node)!.node_id;
      type Actor = { class_name: string; state: string; node_id: string; name: string };
      const workers = () =>
        dashboardJson<{ data: { result: { result: Actor[] } } }>(cluster, "/api/v0/actors?limit=1000").data
          .result
          .result.filter((a) => a.class_name.endsWith("Worker") && a.state === "ALIVE");
      // the stand-in writes placement.json once its workers are up
      await until(
        "both running runs' workers placed",
        300,
        () =>
          [...runStates(out)].filter(([run, st]) =>
            st?.rayJob?.state === "RUNNING" && exists(join(out, "runs", run, "placement.json"))
          ).length === 2,
      );
      const actors = workers();
      assertEquals(actors.length, 4, `2 runs x 2 GPU workers: ${JSON.stringify(actors)}`);
      assertEquals(new Set(actors.map((a) => a.node_id)).size, 2, "workers on both nodes");
      for (const job of detached) {
        const mine = actors.filter((a) => a.name.startsWith(`${job.submission_id}:`));
        assertEquals(mine.length, 2, `${job.submission_id}: one worker per GPU: ${JSON.stringify(actors)}`);
        assertEquals(new Set(mine.map((a) => a.node_id)).size, 1, "one node per run (nodes: 1)");
      }
      const onWorker = detached.find((j) =>
        actors.some((a) => a.name.startsWith(`${j.submission_id}:`) && a.node_id !== headId)
      )!.submission_id!;
      const runOf = (id: string) => id.replace(/^acebench-/, "").replace(/-[0-9a-f]{8}-a\d+$/, "");

      // 2. the same command again reattaches (no second submission); the worker node dies mid-job
      const second = spawnSweep(["--config", configFile, "--out", out]);
      await until(
        "both runs reattached",
        300,
        () => (second.log().match(/reattaching to Ray job/g) ?? []).length === 2,
      );
      cluster.killNode(1);
      await until(
        "the run on the lost node failed",
        300,
        () => readStatus(join(out, "runs", runOf(onWorker)))?.rayJob?.state === "FAILED",
      );
      Deno.removeSync(hold);
      const code = (await second.child.status).code;
      assertEquals(code, 1, second.log().slice(-3000));

      const states = runStates(out);
      const failed = [...states].filter(([, s]) => s?.state === "failed");
      assertEquals(failed.length, 1, JSON.stringify([...states]));
      const [failedRun, failedStatus] = failed[0];
      assertEquals(failedStatus!.rayJob?.submissionId, onWorker, "the run on the lost node failed");
      ok(
        new RegExp(`^Ray job ${onWorker} FAILED: .*; last log lines: `).test(failedStatus!.reason ?? ""),
        failedStatus!.reason ?? "no reason",
      );
      for (const [run, s] of states) {
        if (run === failedRun) continue;
        assertEquals(s?.state, "done", `${run}: ${s?.reason}`);
        // one submission, every step trained once, by that job
        const steps = readJsonl<{ step: number; job: string }>(join(out, "runs", run, "standin_steps.jsonl"));
        assertEquals(steps.map((l) => l.step), [1, 2, 3], run);
        assertEquals(new Set(steps.map((l) => l.job)), new Set([s!.rayJob!.submissionId]), run);
        ok(s!.rayJob!.submissionId.endsWith("-a1"), s!.rayJob!.submissionId);
        ok(exists(join(out, "runs", run, "eval.jsonl")), `${run}: ingested`);
      }
      // nothing submitted twice: one job per run, under its deterministic id
      const jobs = acebenchJobs(cluster).map((j) => j.submission_id!).sort();
      assertEquals(jobs.length, 4, jobs.join(", "));
      assertEquals(new Set(jobs).size, 4);
      const summary = Deno.readTextFileSync(join(out, "summary.md"));
      for (const [run] of states) if (run !== failedRun) ok(summary.includes(run.split("_")[0]), run);

      // 3. Ctrl-C with onInterrupt "stop" stops a running job; the next attempt gets the next id; a retry
      const runDir = join(dir, "stop", "runs", "r0");
      mkdirSync(join(runDir, "verl"), { recursive: true });
      writeFileSync(join(runDir, "verl", "launch.sh"), "echo going to sleep; sleep 120\n");
      const job = {
        runId: "r0",
        runDir,
        clusterRunDir: runDir,
        verlRoot,
        settings: { ...settings, onInterrupt: "stop" as const },
        log: () => {},
      };
      const running = runRayJob(job).then(() => "succeeded", (e: Error) => e.message);
      const id1 = submissionId(runDir, "r0", 1);
      await until("the sleeping job running", 120, () => readStatus(runDir)?.rayJob?.state === "RUNNING");
      await interruptRayJob(runDir, job.settings);
      assertEquals((await jobStatus(cluster.dashboard, id1))?.status, "STOPPED");
      assert((await running).startsWith(`Ray job ${id1} STOPPED`), await running);
      writeFileSync(join(runDir, "verl", "launch.sh"), "echo broken on purpose >&2; exit 3\n");
      await rejects(
        () => runRayJob({ ...job, settings: { ...job.settings, jobRetries: 1 } }),
        new RegExp(`Ray job ${submissionId(runDir, "r0", 3)} FAILED: .*broken on purpose`),
      );
      assertEquals((await jobStatus(cluster.dashboard, submissionId(runDir, "r0", 2)))?.status, "FAILED");
      assertEquals(readJson<{ attempt: number }>(join(runDir, "verl", "ray_job.json")).attempt, 3);
    } finally {
      cluster.stop();
    }
  },
});
