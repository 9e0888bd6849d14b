// `deno task sweep` through Ray's job API on a real Ray cluster on this machine (ray_cluster.ts: a head node
// without GPUs and two worker nodes of one logical GPU each), every job running VERL 0.9.0's real trainer
// loop (main_ppo → TaskRunnerV1 → PPOTrainerSync.fit(), the checkout uploaded as the jobs' working dir) with
// VERL's own resource pools, placement groups and worker group; only the worker class they start, vLLM and
// the weight sync are stood in on CPU (fixtures/verl_standins_v090.py, install_ray_pools). Checks: two jobs
// in flight; each run's ActorRolloutRef worker in a placement group on a logical GPU as trainer.nnodes ×
// n_gpus_per_node say, the two runs' on both GPU nodes, and a TransferQueue controller per job (Ray's state
// API); the sweep killed and run again reattaches (one submission and one trainer start per run); a GPU node
// killed mid-step fails the runs with an actor there (Ray's message and the job's last log lines), a lane
// waits for the lost slot, a replacement node joins and the other runs finish; `deno task report` names the
// failed runs and, with --partial, shows the others; then the probe refusal, Ctrl-C with onInterrupt "stop"
// and a retried failure on plain shell jobs.
// Gated: ACEBENCH_RAY_CLUSTER=1 (about 6 minutes on two cores), the VERL venv with VERL 0.9.0's and Ray's
// dashboard packages (.ci/setup_verl_venv.sh), VERL's sources and the dataset mirror.
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
import { runCommand } from "./trainer_loop_common.ts";
import { clusterEnv, dashboardJson, type LocalCluster, NODE_RESOURCE, startCluster } from "./ray_cluster.ts";
import { TINY_VERL_BATCH, TOKENIZER_DIR, VENV_PYTHON, verl090Missing, VERL_SHARED } from "./verl_venv.ts";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const STEPS = 2;

function clusterMissing(): string | null {
  if (Deno.env.get("ACEBENCH_RAY_CLUSTER") !== "1") {
    return "set ACEBENCH_RAY_CLUSTER=1 to run it (VERL jobs on a 3-node Ray cluster; about 6 min on two cores)";
  }
  const venv = verl090Missing();
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

/**
 * A 4-run sweep (grpo and ace-grpo, seeds 0 and 1) of VERL 0.9.0 through the job API, one node × 1 GPU per run;
 * `hold` makes every job wait before its first actor update while the file exists.
 */
function sweepConfig(dashboard: string, modelDir: string, cache: string, hold: string) {
  return {
    name: "verl-rayjob",
    description: "VERL 0.9.0's real loop as Ray jobs, GPU work stood in on CPU; the numbers are no result",
    engine: "verl",
    seeds: [0, 1],
    methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
    settings: {
      model: modelDir,
      python: VENV_PYTHON,
      verlVersion: "0.9.0",
      verlRoot: join(VERL_SHARED, "verl-0.9.0"),
      launch: "ray-job",
      rayAddress: dashboard,
      onInterrupt: "detach",
      jobPollSeconds: 1,
      datasetMirror: DATASET_MIRROR,
      datasetCacheDir: cache,
      nodes: 1,
      gpusPerNode: 1,
      maxPromptLength: 1024,
      maxResponseLength: 48,
      ...TINY_VERL_BATCH,
      projectName: "acebench-rayjob",
      extraOverrides: [
        // the nodes carry the stand-ins (ray_cluster.ts); VERL's own _setup builds the pools around them
        "++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=verl_standins_v090.install_ray_pools",
        `++ray_kwargs.ray_init.runtime_env.env_vars.STANDIN_HOLD=${JSON.stringify(hold)}`,
        "data.dataloader_num_workers=0",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "reward.num_workers=1",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
      ],
    },
    rl: { steps: STEPS },
    eval: { n: 2, ks: [1, 2], every: 1 },
  };
}

/** `deno task NAME` as a child process (deno.json's permissions); `log()` is its output so far. */
function spawnTask(name: string, args: string[]): { child: Deno.ChildProcess; log: () => string } {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...taskPermissions(name), join(root, "cli.ts"), name, ...args],
    env: { ...clusterEnv(), CI: "true", ACEBENCH_WEBGPU_ADAPTER: "0", HOME: Deno.env.get("HOME") ?? "/root" },
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      if (Deno.env.get("ACEBENCH_RAY_CLUSTER_LOG") === "1") {
        Deno.stderr.writeSync(new TextEncoder().encode(chunk));
      }
    }
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
    await new Promise((r) => setTimeout(r, 2000));
  }
}

interface JobRow {
  submission_id: string | null;
  job_id: string | null;
  status: string;
  start_time: number | null;
  end_time: number | null;
}
const acebenchJobs = (cluster: LocalCluster) =>
  dashboardJson<JobRow[]>(cluster, "/api/jobs/").filter((j) =>
    j.submission_id?.startsWith("acebench-") &&
    !j.submission_id.startsWith("acebench-probe-")
  );

interface Actor {
  class_name: string;
  state: string;
  node_id: string;
  job_id: string;
  name: string;
  placement_group_id: string | null;
  required_resources: Record<string, number>;
}
/** Every actor placed on a node and not dead (alive, or still starting there). */
const allActors = (cluster: LocalCluster) =>
  dashboardJson<{ data: { result: { result: Actor[] } } }>(cluster, "/api/v0/actors?limit=10000&detail=true")
    .data.result.result.filter((a) => a.state !== "DEAD" && a.node_id);
/** VERL's worker-group actors alive now (the ActorRolloutRef role fused in its WorkerDict class). */
const verlWorkers = (cluster: LocalCluster) =>
  allActors(cluster).filter((a) => a.class_name.includes("WorkerDict") && a.state === "ALIVE");

function runStates(out: string): Map<string, RunStatus | null> {
  const runs = join(out, "runs");
  return new Map((exists(runs) ? readdirSync(runs) : []).map((r) => [r, readStatus(join(runs, r))]));
}

/** VERL's per-step metrics of a run (its file logger, one file per start of the trainer). */
function verlMetricFiles(runDir: string): { step: number; data: Record<string, unknown> }[][] {
  const dir = join(runDir, "verl_metrics");
  return (exists(dir) ? readdirSync(dir) : []).map((f) => readJsonl(join(dir, f)));
}

Deno.test({
  name:
    "deno task sweep → VERL 0.9.0 as Ray jobs on a real Ray cluster: placement, reattach, a lost node, report",
  ignore: skip !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const started = Date.now();
    const dir = tempDir("acebench-rayjob-");
    // a head without GPUs (as on most clusters) and two nodes of one logical GPU each. Ray puts a run's CPU-side
    // actors (TaskRunner, TransferQueue's controller, the agent-loop and reward-loop workers) on any node, so the
    // GPU nodes have CPUs to spare beside VERL's GPU bundle (3 CPUs + 1 GPU)
    const gpuNode = { cpus: 8, gpus: 1 };
    const cluster = startCluster(tempDir("rc-"), [{ cpus: 64, gpus: 0 }, gpuNode, gpuNode]);
    try {
      const modelDir = join(dir, "tiny-qwen2");
      runCommand(VENV_PYTHON, [join(fixtures, "tiny_model.py"), TOKENIZER_DIR, modelDir], {}, "tiny model");
      const out = join(dir, "sweep");
      const hold = join(out, "standin_hold");
      const configFile = join(dir, "config.json");
      const config = sweepConfig(cluster.dashboard, modelDir, join(dir, "cache"), hold);
      writeFileSync(configFile, JSON.stringify(config));
      const settings = validateVerlSettings(config.settings);
      Deno.env.set("PATH", clusterEnv().PATH); // the engine's `ray job submit`, in this process

      // the cluster holds two runs of one node x 1 GPU at once; a probe job refuses a folder the nodes do not see
      assertEquals(await rayJobConcurrency(settings), 2);
      const probeDir = join(dir, "probe-sweep");
      mkdirSync(probeDir);
      await rejects(
        () =>
          checkClusterAssumptions(
            probeDir,
            "/nonexistent/sweep",
            { ...settings, verlInstall: "image" },
            settings.verlRoot,
          ),
        /the cluster does not see the sweep folder: a probe job \(acebench-probe-.*\) .* could not read \/nonexistent\/sweep\/verl\/probe\/.*set settings.clusterSweepDir/,
      );

      // 1. the sweep submits two jobs at once (each held before its first update), then is killed (Ctrl-C,
      // onInterrupt "detach")
      mkdirSync(out, { recursive: true });
      writeFileSync(hold, "");
      const first = spawnTask("sweep", ["--config", configFile, "--out", out]);
      // both jobs' VERL workers up: the pools are built and the trainers are in fit()
      const placed = await until("two Ray jobs running with their VERL workers placed", 1500, () => {
        const running = acebenchJobs(cluster).filter((j) => j.status === "RUNNING");
        const workers = verlWorkers(cluster);
        return running.length === 2 && running.every((j) => workers.some((a) => a.job_id === j.job_id)) &&
          [...runStates(out).values()].filter((s) => s?.rayJob?.state === "RUNNING").length === 2 &&
          { running, workers };
      });
      const inFlightAt = (Date.now() - started) / 1000;
      assertEquals(acebenchJobs(cluster).length, 2, "two in flight, the other runs wait for a lane");
      ok(first.log().includes("up to 2 cluster jobs in flight"), first.log());
      ok(/a probe job in the Ray cluster \(on .*\) read and wrote/.test(first.log()), first.log());
      first.child.kill("SIGINT");
      assertEquals((await first.child.status).code, 130, first.log().slice(-3000));
      ok(
        first.log().includes('(onInterrupt "detach"); run the sweep again to reattach'),
        first.log().slice(-2000),
      );
      const detached = acebenchJobs(cluster);
      assertEquals(detached.map((j) => j.status), ["RUNNING", "RUNNING"], "detached jobs keep running");

      // VERL's resource pool placed each run's ActorRolloutRef worker (actor, rollout and reference fused) in a
      // placement group on one logical GPU: nnodes 1 x n_gpus_per_node 1 per run, the two runs on both nodes
      const nodes = dashboardJson<
        { data: { result: { result: { node_id: string; resources_total: Record<string, number> }[] } } }
      >(cluster, "/api/v0/nodes").data.result.result;
      const gpuNodes = nodes.filter((n) => (n.resources_total.GPU ?? 0) > 0).map((n) => n.node_id);
      const indexOf = (id: string) =>
        Number(
          Object.keys(nodes.find((n) => n.node_id === id)!.resources_total).find((k) =>
            k.startsWith(NODE_RESOURCE)
          )!.slice(NODE_RESOURCE.length),
        );
      const byJob = new Map(
        placed.running.map((j) => [j.job_id!, placed.workers.filter((a) => a.job_id === j.job_id)]),
      );
      for (const [job, actors] of byJob) {
        assertEquals(actors.length, 1, `${job}: one worker (1 node x 1 GPU): ${JSON.stringify(actors)}`);
        ok(actors[0].placement_group_id, `${job}: in VERL's placement group`);
        ok(
          Object.entries(actors[0].required_resources).some(([k, v]) => k.startsWith("GPU_group_") && v > 0),
          `${job}: holds a share of its bundle's GPU: ${JSON.stringify(actors[0].required_resources)}`,
        );
      }
      const workerNodes = [...byJob.values()].map((a) => a[0].node_id);
      assertEquals(new Set(workerNodes).size, 2, `the two runs' workers on both nodes: ${workerNodes}`);
      assertEquals(new Set(workerNodes), new Set(gpuNodes));
      // each job has its own TransferQueue controller (ace_verl scopes its namespace to the job)
      const controllers = allActors(cluster).filter((a) => a.class_name.endsWith("TransferQueueController"));
      assertEquals(
        controllers.map((a) => a.job_id).sort(),
        placed.running.map((j) => j.job_id!).sort(),
        "one TransferQueue controller per job",
      );
      const runOf = (id: string) => id.replace(/^acebench-/, "").replace(/-[0-9a-f]{8}-a\d+$/, "");

      // 2. the same command again reattaches (no second submission); the worker node dies mid-job, a replacement
      // joins, the held jobs go on
      const second = spawnTask("sweep", ["--config", configFile, "--out", out]);
      await until(
        "both runs reattached",
        600,
        () => (second.log().match(/reattaching to Ray job/g) ?? []).length === 2,
      );
      // both jobs held at their first actor update (the stand-in says so beside the hold file): set up and training
      await until(
        "both jobs held at their first update",
        900,
        () => placed.running.every((j) => exists(`${hold}.${j.submission_id}`)),
      );
      // what losing each GPU node would take with it: every job with a live actor there (its GPU worker's run at
      // least); the node taking the fewest runs is killed
      const actors = allActors(cluster);
      const doomedBy = (node: string) =>
        placed.running.filter((j) => actors.some((a) => a.job_id === j.job_id && a.node_id === node)).map((
          j,
        ) => j.submission_id!);
      const lost = [...gpuNodes].sort((a, b) => doomedBy(a).length - doomedBy(b).length)[0];
      const doomed = doomedBy(lost);
      const gpuRun = placed.running.find((j) => byJob.get(j.job_id!)![0].node_id === lost)!.submission_id!;
      ok(doomed.includes(gpuRun), `${doomed}`);
      for (const j of placed.running) {
        const there = actors.filter((a) => a.job_id === j.job_id && a.node_id === lost);
        console.log(
          `${j.submission_id}: on the node killed: ${
            there.map((a) => a.class_name.split(".").at(-1)).join(", ") || "nothing"
          }`,
        );
      }
      cluster.killNode(indexOf(lost));
      await until(
        "the runs on the lost node failed",
        600,
        () => doomed.every((id) => readStatus(join(out, "runs", runOf(id)))?.rayJob?.state === "FAILED"),
      );
      // the slot the node held is gone: a lane waits for it (VERL would fail at once on a taken GPU)
      await until("a lane waiting for a free slot", 600, () => /waiting for a free slot/.test(second.log()));
      cluster.addNode(gpuNode);
      Deno.removeSync(hold);
      const code = (await second.child.status).code;
      assertEquals(code, 1, second.log().slice(-3000));

      const states = runStates(out);
      const failed = [...states].filter(([, s]) => s?.state === "failed");
      assertEquals(failed.map(([run]) => run).sort(), doomed.map(runOf).sort(), JSON.stringify([...states]));
      for (const [, status] of failed) {
        ok(
          new RegExp(`^Ray job ${status!.rayJob?.submissionId} FAILED: .*; last log lines: `).test(
            status!.reason ?? "",
          ),
          status!.reason ?? "no reason",
        );
      }
      const jobs = acebenchJobs(cluster);
      for (const [run, s] of states) {
        if (doomed.map(runOf).includes(run)) continue;
        assertEquals(s?.state, "done", `${run}: ${s?.reason}`);
        // one submission, one start of VERL's trainer, every step trained once
        ok(s!.rayJob!.submissionId.endsWith("-a1"), s!.rayJob!.submissionId);
        const starts = verlMetricFiles(join(out, "runs", run));
        assertEquals(starts.length, 1, `${run}: one trainer start`);
        const trained = starts[0].map((m) => m.step).filter((step) => step > 0);
        assertEquals([...new Set(trained)].sort(), [1, 2], run);
        ok(exists(join(out, "runs", run, "eval.jsonl")), `${run}: ingested`);
        const job = jobs.find((j) => j.submission_id === s!.rayJob!.submissionId)!;
        console.log(
          `${run}: Ray job ${job.submission_id} ${job.status}, ${
            ((job.end_time! - job.start_time!) / 1000).toFixed(0)
          } s`,
        );
      }
      // nothing submitted twice: one job per run, under its deterministic id
      const ids = jobs.map((j) => j.submission_id!).sort();
      assertEquals(ids.length, 4, ids.join(", "));
      assertEquals(new Set(ids).size, 4);
      // the most jobs running at once, from the cluster's own start and end times
      const spans = jobs.map((j) => [j.start_time!, j.end_time ?? Date.now()]);
      const most = Math.max(...spans.map(([t]) => spans.filter(([a, b]) => a <= t && t < b).length));
      ok(most >= 2, `${most} jobs at once`);

      // the report refuses the folder as it is, naming the failed runs, and shows the others with --partial
      const refused = spawnTask("report", [out]);
      assertEquals((await refused.child.status).code, 1, refused.log().slice(-3000));
      for (const id of doomed) {
        ok(refused.log().includes(`${runOf(id)}: failed (Ray job ${id} FAILED`), refused.log().slice(-3000));
      }
      const report = spawnTask("report", [out, "--partial"]);
      assertEquals((await report.child.status).code, 0, report.log().slice(-3000));
      const summary = Deno.readTextFileSync(join(out, "summary.md"));
      const shown = [...states].filter(([run]) => !doomed.map(runOf).includes(run)).map(([run]) =>
        run.split("_")[0]
      );
      for (const method of new Set(shown)) {
        ok(new RegExp(`\\| ${method} \\|`).test(summary), summary.slice(0, 2000));
      }
      ok(summary.includes("Pass@2"), summary.slice(0, 2000));
      console.log(
        `VERL 0.9.0 ray-job sweep: two jobs in flight after ${inFlightAt.toFixed(0)} s, ${most} at most, ${
          ((Date.now() - started) / 1000).toFixed(0)
        } s in all`,
      );

      // 3. Ctrl-C with onInterrupt "stop" stops a running job; the next attempt gets the next id; a retry
      const runDir = join(dir, "stop", "runs", "r0");
      mkdirSync(join(runDir, "verl"), { recursive: true });
      writeFileSync(join(runDir, "verl", "launch.sh"), "echo going to sleep; sleep 120\n");
      const job = {
        runId: "r0",
        runDir,
        clusterRunDir: runDir,
        verlRoot: settings.verlRoot,
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
      if (Deno.env.get("ACEBENCH_KEEP_TMP") === "1") console.log(`kept ${dir}`);
      cluster.stop();
    }
  },
});
