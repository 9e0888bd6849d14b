// A VERL run through Ray's job API (settings.launch "ray-job"), under a submission id that is a function of the
// run, so a sweep run again reattaches; submitted only once the cluster holds it beside the sweep's other jobs
// (VERL fails at once, not waits, when its GPUs are taken). Submits with the `ray` CLI (it uploads the working
// dir); status, logs, stop and nodes through the dashboard's REST API with curl (no Python start per query).
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { atomicWrite, exists, readJson, writeJson } from "../../../common/fs.ts";
import { sha256 } from "../../../common/hash.ts";
import { readStatus, runFile, type RunStatus, writeStatus } from "../../../common/run_folder.ts";
import { shellQuote } from "../../../common/args.ts";
import { DEFAULT_RAY_ADDRESS, VERL_DIR, type VerlRunPlan } from "./launch.ts";
import type { VerlSettings } from "./recipes.ts";

/** A Ray job's state (Ray's JobStatus). */
type JobState = "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "STOPPED";
/** The engine's record of a run's current submission, `<run>/verl/ray_job.json` (mirrored in status.json). */
interface JobRecord {
  submissionId: string;
  attempt: number;
  address: string;
}

const TERMINAL: ReadonlySet<string> = new Set(["SUCCEEDED", "FAILED", "STOPPED"]);
/** A run's job states (status.json's rayJob.state) that hold cluster resources, or soon will. */
const IN_FLIGHT: ReadonlySet<string> = new Set(["SUBMITTING", "PENDING", "RUNNING"]);
const SLOT_LOCK = join(VERL_DIR, "submit.lock");
/** A slot lock older than this (s) is a killed sweep's: it guards a few dashboard queries (each ≤ 30 s). */
const STALE_LOCK_S = 120;
/** A SUBMITTING status older than this, for a job the cluster does not know, is left over from a killed sweep. */
const SUBMIT_S = 600;
const JOB_FILE = join(VERL_DIR, "ray_job.json");
const LOG_LINES = 20;
const UNANSWERED_POLLS = 5;

/** The dashboard jobs go to: settings.rayAddress, else $RAY_ADDRESS, else Ray's default. */
function rayDashboard(settings: Pick<VerlSettings, "rayAddress">): string {
  return (settings.rayAddress ?? Deno.env.get("RAY_ADDRESS") ?? DEFAULT_RAY_ADDRESS).replace(/\/+$/, "");
}

/** A run's submission id: its id, a hash of its folder as the cluster sees it, and the attempt (from 1). */
export function submissionId(clusterRunDir: string, runId: string, attempt: number): string {
  return `acebench-${runId}-${sha256(clusterRunDir).slice(0, 8)}-a${attempt}`;
}

async function command(cmd: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped", stdin: "null" }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: r.code, out: text(r.stdout), err: text(r.stderr) };
  } catch (e) {
    throw new Error(`ray-job: cannot run ${cmd} (${(e as Error).message.split("\n")[0]})`);
  }
}

/** One request to the dashboard's REST API: the HTTP code and body; an unreachable dashboard throws one line. */
async function rest(address: string, method: "GET" | "POST", path: string) {
  const args = ["-sS", "--max-time", "30", "-X", method, "-w", "\n%{http_code}", address + path];
  const r = await command("curl", args);
  if (r.code !== 0) {
    throw new Error(
      `ray-job: cannot reach the Ray dashboard at ${address} (curl: ${r.err.trim().split("\n")[0]})`,
    );
  }
  const cut = r.out.lastIndexOf("\n");
  return { code: Number(r.out.slice(cut + 1)), body: r.out.slice(0, cut) };
}

/** A job's state and message, or null when the cluster does not know the id. */
export async function jobStatus(address: string, id: string) {
  const r = await rest(address, "GET", `/api/jobs/${encodeURIComponent(id)}`);
  if (r.code === 404) return null;
  if (r.code !== 200) {
    throw new Error(`ray-job: ${address}/api/jobs/${id} answered HTTP ${r.code}: ${r.body}`);
  }
  const info = JSON.parse(r.body) as { status: JobState; message?: string | null };
  return { status: info.status, message: info.message ?? "" };
}

/** What the dashboard says about one job. */
type JobInfo = NonNullable<Awaited<ReturnType<typeof jobStatus>>>;

/** The last `n` lines of a job's driver log ([] when there is none). */
async function jobLogTail(address: string, id: string, n = LOG_LINES): Promise<string[]> {
  const r = await rest(address, "GET", `/api/jobs/${encodeURIComponent(id)}/logs`);
  if (r.code !== 200) return [];
  const logs = (JSON.parse(r.body) as { logs?: string }).logs ?? "";
  return logs.split("\n").filter((l) => l.trim() !== "").slice(-n);
}

/** The cluster's alive nodes and the GPUs each declares (Ray's state API). */
async function aliveNodes(address: string): Promise<{ nodeId: string; gpus: number }[]> {
  const r = await rest(address, "GET", "/api/v0/nodes?limit=10000");
  if (r.code !== 200) throw new Error(`ray-job: ${address}/api/v0/nodes answered HTTP ${r.code}`);
  const rows = (JSON.parse(r.body) as {
    data: {
      result: { result: { node_id: string; state: string; resources_total: Record<string, number> }[] };
    };
  }).data.result.result;
  return rows.filter((n) => n.state === "ALIVE").map((n) => ({
    nodeId: n.node_id,
    gpus: n.resources_total.GPU ?? 0,
  }));
}

/**
 * Runs that fit at once: each takes `nodes` nodes with `gpusPerNode` GPUs (VERL's resource pool asks for that
 * many per node), so a node holds ⌊its GPUs / gpusPerNode⌋ run-nodes and the cluster ⌊their sum / nodes⌋ runs.
 */
export function clusterSlots(cluster: { gpus: number }[], plan: { nodes: number; gpusPerNode: number }) {
  const perNode = cluster.reduce((t, n) => t + Math.floor(n.gpus / plan.gpusPerNode), 0);
  return Math.floor(perNode / plan.nodes);
}

/** Runs in flight for a ray-job sweep: settings.maxConcurrentJobs, else what the alive nodes hold (at least 1). */
export async function rayJobConcurrency(settings: VerlSettings): Promise<number> {
  if (settings.maxConcurrentJobs !== null) return settings.maxConcurrentJobs;
  const address = rayDashboard(settings);
  const nodes = await aliveNodes(address);
  const slots = clusterSlots(nodes, settings);
  if (slots === 0) {
    const gpus = nodes.map((n) => n.gpus).join("+") || "none";
    throw new Error(
      `ray-job: the cluster at ${address} (${nodes.length} alive nodes, GPUs ${gpus}) cannot hold one run of ` +
        `${settings.nodes} node(s) x ${settings.gpusPerNode} GPUs`,
    );
  }
  return slots;
}

/** Bytes under `dir` without .git, stopping once over `limit`. */
function treeBytes(dir: string, limit: number): number {
  let total = 0;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (total > limit) return;
      if (name === ".git") continue;
      const path = join(d, name);
      const s = statSync(path);
      if (s.isDirectory()) walk(path);
      else total += s.size;
    }
  };
  walk(dir);
  return total;
}

/**
 * Check what a job relies on before the first submission: the uploaded working dir is at most settings.maxUploadMB
 * (verlInstall "upload"), and a probe job in the cluster sees the sweep folder (run folders must be shared).
 * Returns the host name of the node that ran the probe.
 */
export async function checkClusterAssumptions(
  sweepDir: string,
  clusterSweepDir: string,
  settings: VerlSettings,
  verlRoot: string | null,
): Promise<string> {
  if (verlRoot === null) {
    throw new Error(
      "ray-job: no VERL checkout to run from: set settings.verlRoot (or VERL_ROOT when planning)",
    );
  }
  if (settings.verlInstall === "upload") {
    if (!exists(verlRoot)) {
      throw new Error(
        `ray-job: verlInstall "upload" uploads ${verlRoot}, which is not on this machine; ` +
          `set verlInstall "image" when VERL is installed there on every node`,
      );
    }
    const limit = settings.maxUploadMB * 1e6;
    const bytes = treeBytes(verlRoot, limit);
    if (bytes > limit) {
      throw new Error(
        `ray-job: the working dir ${verlRoot} (without .git) exceeds settings.maxUploadMB = ${settings.maxUploadMB} MB; ` +
          `raise it, or set verlInstall "image" with VERL installed at verlRoot on every node`,
      );
    }
  }
  // a probe job reads <sweep>/verl/probe/<nonce> and writes <nonce>.ack beside it, with the node's name
  const address = rayDashboard(settings);
  const nonce = `${Deno.pid}-${Date.now()}`; // identifies this check, not a random choice
  const local = join(sweepDir, VERL_DIR, "probe", nonce);
  const remote = join(clusterSweepDir, VERL_DIR, "probe", nonce);
  atomicWrite(local, `${nonce}\n`);
  const id = `acebench-probe-${nonce}`;
  try {
    const ackFile = shellQuote(`${remote}.ack`);
    const script = `cat ${shellQuote(remote)} > ${ackFile} && hostname >> ${ackFile}`;
    await submitJob(address, id, ["bash", "-c", script], null, {});
    const end = await waitForEnd(address, id, Math.min(settings.jobPollSeconds, 2), 120);
    const ack = exists(`${local}.ack`) ? Deno.readTextFileSync(`${local}.ack`).split("\n") : [];
    if (end?.status !== "SUCCEEDED" || ack[0] !== nonce) {
      const tail = (await jobLogTail(address, id, 3)).join(" | ");
      throw new Error(
        `ray-job: the cluster does not see the sweep folder: a probe job (${id}) on ${address} could not read ` +
          `${remote} and write beside it (${end?.status ?? "no end in 120 s"}${tail ? `: ${tail}` : ""}); ` +
          "set settings.clusterSweepDir to this folder as the nodes see it (a shared filesystem)",
      );
    }
    return ack[1] ?? "";
  } finally {
    rmSync(join(sweepDir, VERL_DIR, "probe"), { recursive: true, force: true });
  }
}

/** `ray job submit --no-wait` under `id`; the working dir uploaded when given (without .git). */
async function submitJob(
  address: string,
  id: string,
  entrypoint: string[],
  workingDir: string | null,
  env: Record<string, string>,
): Promise<void> {
  const runtimeEnv = workingDir === null ? { env_vars: env } : { env_vars: env, excludes: [".git"] };
  const args = ["job", "submit", "--address", address, "--no-wait", "--submission-id", id];
  if (workingDir !== null) args.push("--working-dir", workingDir);
  args.push("--runtime-env-json", JSON.stringify(runtimeEnv), "--", ...entrypoint);
  const r = await command("ray", args);
  if (r.code !== 0) {
    const last = (r.err + r.out).trim().split("\n").filter((l) => l.trim()).slice(-2).join(" | ");
    throw new Error(`ray-job: ray job submit ${id} to ${address} failed: ${last}`);
  }
}

/** Poll a job every `pollS` seconds until it ends (null: unknown to the cluster, or still going after limitS). */
async function waitForEnd(
  address: string,
  id: string,
  pollS: number,
  limitS = Infinity,
  onState: (info: JobInfo) => void = () => {},
): Promise<JobInfo | null> {
  const start = performance.now();
  let last = "";
  for (let misses = 0;;) {
    let info: JobInfo | null;
    try {
      info = await jobStatus(address, id);
      misses = 0;
    } catch (e) {
      // a dashboard that does not answer a few polls in a row (a restart, a busy head) fails the wait
      if (++misses >= UNANSWERED_POLLS) throw e;
      await new Promise((r) => setTimeout(r, pollS * 1000));
      continue;
    }
    if (info === null) return null;
    if (info.status !== last) onState(info);
    last = info.status;
    if (TERMINAL.has(info.status)) return info;
    if ((performance.now() - start) / 1000 > limitS) return null;
    await new Promise((r) => setTimeout(r, pollS * 1000));
  }
}

function readRecord(runDir: string): JobRecord | null {
  const path = join(runDir, JOB_FILE);
  return exists(path) ? readJson<JobRecord>(path) : null;
}

/** Mirror the job's id, attempt and state into status.json (the runner keeps them when it settles the run). */
function mirror(runDir: string, record: JobRecord, state: string): void {
  const status: RunStatus = readStatus(runDir) ?? { state: "running", startedAt: new Date().toISOString() };
  writeStatus(runDir, {
    ...status,
    rayJob: { submissionId: record.submissionId, attempt: record.attempt, state },
  });
}

/** What a run's ray job needs from its plan (the submission id hashes clusterRunDir; launch.sh lives under it). */
type RayJobRun = Pick<VerlRunPlan, "clusterRunDir" | "verlRoot"> & {
  runId: string;
  runDir: string;
  settings: VerlSettings;
  log: (line: string) => void;
};

/** Other runs of the sweep whose job is being submitted, or in flight as the cluster says (status may lag). */
async function siblingJobsInFlight(runDir: string): Promise<number> {
  const runs = dirname(runDir);
  let busy = 0;
  for (const r of readdirSync(runs)) {
    const dir = join(runs, r);
    const state = dir === runDir ? undefined : readStatus(dir)?.rayJob?.state;
    if (state === undefined || !IN_FLIGHT.has(state)) continue;
    const record = readRecord(dir);
    const info = record === null ? null : await jobStatus(record.address, record.submissionId);
    // a submission under way is not known to the cluster yet; one a killed sweep left is, or is old
    const submitting = state === "SUBMITTING" && info === null &&
      (Date.now() - (statSync(runFile(dir, "status")).mtime?.getTime() ?? 0)) / 1000 < SUBMIT_S;
    if (submitting || (info !== null && !TERMINAL.has(info.status))) busy++;
  }
  return busy;
}

/** Take the sweep's slot lock (a file created exclusively); false when another lane holds it. */
function tryLock(path: string): boolean {
  try {
    Deno.openSync(path, { createNew: true, write: true }).close();
    return true;
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    if ((Date.now() - (statSync(path).mtime?.getTime() ?? 0)) / 1000 > STALE_LOCK_S) {
      rmSync(path, { force: true });
    }
    return false;
  }
}

/**
 * Wait until the alive nodes hold this run beside the sweep's other jobs in flight (clusterSlots), then mark it
 * SUBMITTING; the check and the mark are one step under a lock in the sweep folder, so two lanes never take the
 * same free slot. Jobs outside the sweep are not counted (settings.maxConcurrentJobs bounds a shared cluster).
 */
async function claimSlot(job: RayJobRun, address: string, record: JobRecord): Promise<void> {
  const lock = join(dirname(dirname(job.runDir)), SLOT_LOCK);
  mkdirSync(dirname(lock), { recursive: true });
  let said = false;
  for (;;) {
    if (tryLock(lock)) {
      try {
        const nodes = await aliveNodes(address);
        const limit = job.settings.maxConcurrentJobs ?? clusterSlots(nodes, job.settings);
        const busy = await siblingJobsInFlight(job.runDir);
        if (busy < limit) {
          writeJson(join(job.runDir, JOB_FILE), record);
          mirror(job.runDir, record, "SUBMITTING");
          return;
        }
        if (!said) {
          job.log(
            `run ${job.runId}: waiting for a free slot (${busy} of the sweep's jobs in flight, the ${nodes.length} ` +
              `alive nodes hold ${limit})`,
          );
          said = true;
        }
      } finally {
        rmSync(lock, { force: true });
      }
    }
    await new Promise((r) => setTimeout(r, job.settings.jobPollSeconds * 1000));
  }
}

/** Claim a slot, write the record, then submit: a sweep killed in between finds the id and asks the cluster. */
async function submitAttempt(job: RayJobRun, address: string, attempt: number): Promise<JobRecord> {
  const record = { submissionId: submissionId(job.clusterRunDir, job.runId, attempt), attempt, address };
  await claimSlot(job, address, record);
  if (job.verlRoot === null) throw new Error("ray-job: no VERL checkout (settings.verlRoot or VERL_ROOT)");
  const upload = job.settings.verlInstall === "upload" ? job.verlRoot : null;
  // the job's own id reaches its driver and workers (Ray passes no submission id to them)
  const env = { VERL_ROOT: job.verlRoot, ACEBENCH_RAY_SUBMISSION_ID: record.submissionId };
  await submitJob(
    address,
    record.submissionId,
    ["bash", join(job.clusterRunDir, VERL_DIR, "launch.sh")],
    upload,
    env,
  );
  job.log(`run ${job.runId}: submitted Ray job ${record.submissionId} to ${address}`);
  return record;
}

/**
 * Run one VERL run as a Ray job and return when it succeeded; throws with the job's state, message and last log
 * lines when it failed or was stopped (after settings.jobRetries resubmissions). A run whose previous submission is
 * still pending or running is reattached to, never submitted again; one that succeeded is not rerun; one that
 * failed or was stopped gets the next attempt's id (VERL resumes from its last checkpoint).
 */
export async function runRayJob(job: RayJobRun): Promise<void> {
  const address = rayDashboard(job.settings);
  let record = readRecord(job.runDir);
  const previous = record === null ? null : await jobStatus(record.address, record.submissionId);
  if (record !== null && previous !== null && !TERMINAL.has(previous.status)) {
    job.log(`run ${job.runId}: reattaching to Ray job ${record.submissionId} (${previous.status})`);
  } else if (record !== null && previous?.status === "SUCCEEDED") {
    job.log(`run ${job.runId}: Ray job ${record.submissionId} already succeeded`);
  } else {
    // none yet, the cluster forgot it (same id again), or it ended without success (the next attempt)
    const attempt = record === null ? 1 : record.attempt + (previous === null ? 0 : 1);
    record = await submitAttempt(job, address, attempt);
  }
  for (let retries = 0;; retries++) {
    const current: JobRecord = record;
    const end = await waitForEnd(
      current.address,
      current.submissionId,
      job.settings.jobPollSeconds,
      Infinity,
      (info) => mirror(job.runDir, current, info.status),
    );
    if (end?.status === "SUCCEEDED") return;
    const tail = end === null ? [] : await jobLogTail(current.address, current.submissionId);
    const reason = end === null
      ? `Ray job ${current.submissionId} is unknown to the cluster at ${current.address} (restarted?)`
      : `Ray job ${current.submissionId} ${end.status}: ${end.message.split("\n")[0]}${
        tail.length ? `; last log lines: ${tail.join(" | ")}` : ""
      }`;
    if (end?.status !== "FAILED" || retries >= job.settings.jobRetries) throw new Error(reason);
    const why = reason.split("; last log lines")[0];
    job.log(`run ${job.runId}: ${why}; resubmitting (jobRetries ${job.settings.jobRetries})`);
    record = await submitAttempt(job, address, current.attempt + 1);
  }
}

/** After Ctrl-C, for a run left running: stop its job or leave it to be reattached (settings.onInterrupt). */
export async function interruptRayJob(runDir: string, settings: VerlSettings): Promise<void> {
  const record = readRecord(runDir);
  if (record === null) return;
  const info = await jobStatus(record.address, record.submissionId);
  if (info === null || TERMINAL.has(info.status)) return;
  if (settings.onInterrupt === "detach") {
    console.error(
      `ray-job: left ${record.submissionId} ${info.status} (onInterrupt "detach"); run the sweep again to reattach`,
    );
    return;
  }
  await rest(record.address, "POST", `/api/jobs/${encodeURIComponent(record.submissionId)}/stop`);
  const end = await waitForEnd(record.address, record.submissionId, 1, 60);
  mirror(runDir, record, end?.status ?? "STOPPING");
  console.error(
    `ray-job: stopped ${record.submissionId} (onInterrupt "stop"): ${end?.status ?? "stop requested"}`,
  );
}
