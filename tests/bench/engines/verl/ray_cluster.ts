// A real multi-node Ray cluster on this machine for the ray-job tests: a head node and worker nodes started with
// `ray start` from the VERL venv, each with its own temp dir and ports, declaring logical GPUs and CPUs (Ray
// schedules by declared resources). The dashboard's job and state APIs are Ray's own; only the metrics packages it
// imports and no index here has are stood in (fixtures/ray_dashboard/sitecustomize.py). What every node has
// installed (its "image"): the VERL venv, Hydra from ../shared and the CPU stand-ins for VERL's GPU work
// (fixtures/), on its PYTHONPATH. Nodes are stopped, or killed to test node loss, by the ids of the processes that
// carry their temp dir, never by name.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { VENV_PYTHON, VERL_SHARED } from "./verl_venv.ts";

const standins = fileURLToPath(new URL("./fixtures/ray_dashboard/", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
/** The venv's bin folder (ray, python). */
const VENV_BIN = dirname(VENV_PYTHON);

/** One started node: its temp dir (which every process of it carries in its arguments). */
interface Node {
  tempDir: string;
  head: boolean;
}

/** The custom resource prefix naming a node's index in `LocalCluster.nodes` (Ray's node ids are its own). */
export const NODE_RESOURCE = "acebench_node_";

/** What a node declares: logical CPUs and GPUs. */
export interface NodeSpec {
  cpus: number;
  gpus: number;
}

/** A started cluster: its GCS address, dashboard URL and nodes. */
export interface LocalCluster {
  gcs: string;
  dashboard: string;
  nodes: Node[];
  /** SIGKILL every process of node i and their children (a lost machine). */
  killNode(i: number): void;
  /** Start one more worker node (a replacement machine joining). */
  addNode(spec: NodeSpec): void;
  /** Kill every node (workers first). */
  stop(): void;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The environment the nodes run with: the venv first on PATH, the dashboard stand-ins, fast node-death checks. */
export function clusterEnv(): Record<string, string> {
  return {
    PATH: `${VENV_BIN}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    PYTHONPATH: [standins, fixtures, join(VERL_SHARED, "hydra-1.3.2")].join(":"),
    RAY_USAGE_STATS_ENABLED: "0",
    TOKENIZERS_PARALLELISM: "false",
    HF_HUB_OFFLINE: "1",
    // a killed node is declared dead after ~3 s instead of ~30 s
    RAY_health_check_period_ms: "1000",
    RAY_health_check_failure_threshold: "3",
    RAY_DEDUP_LOGS: "0",
  };
}

function rayStart(args: string[]): void {
  const out = new Deno.Command(join(VENV_BIN, "ray"), { args: ["start", ...args], env: clusterEnv() })
    .outputSync();
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-5).join("\n");
    throw new Error(`ray start ${args.join(" ")} failed:\n${err}`);
  }
}

/** Pids of processes whose command line mentions `needle`, with all their descendants. */
function processTree(needle: string): number[] {
  const parent = new Map<number, number>();
  const roots: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) roots.push(pid);
    } catch {
      // the process ended while we looked
    }
  }
  const tree = new Set(roots);
  for (let grown = true; grown;) {
    grown = false;
    for (const [pid, ppid] of parent) {
      if (!tree.has(pid) && tree.has(ppid)) {
        tree.add(pid);
        grown = true;
      }
    }
  }
  return [...tree];
}

function kill(node: Node): void {
  for (const pid of processTree(node.tempDir)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * Start a head node (`nodes[0]`) and a worker node for each further spec under `dir` (short: Ray's socket paths
 * must fit in 107 bytes).
 */
export function startCluster(dir: string, nodes: NodeSpec[]): LocalCluster {
  const gcsPort = freePort(), dashPort = freePort();
  const started: Node[] = [];
  // each node also declares `acebench_node_<index>: 1`, so the state API's nodes map to `nodes[index]`
  const common = (tempDir: string, spec: NodeSpec) => [
    "--resources",
    JSON.stringify({ [`${NODE_RESOURCE}${started.length - 1}`]: 1 }),
    "--num-cpus",
    String(spec.cpus),
    "--num-gpus",
    String(spec.gpus),
    "--temp-dir",
    tempDir,
    "--object-store-memory",
    "100000000",
    "--dashboard-agent-listen-port",
    String(freePort()),
    "--dashboard-agent-grpc-port",
    String(freePort()),
    "--runtime-env-agent-port",
    String(freePort()),
    "--metrics-export-port",
    String(freePort()),
    "--disable-usage-stats",
  ];
  const addNode = (spec: NodeSpec) => {
    const temp = join(dir, `w${started.length}`);
    mkdirSync(temp, { recursive: true });
    started.push({ tempDir: temp, head: false });
    rayStart(["--address", cluster.gcs, ...common(temp, spec)]);
  };
  const cluster: LocalCluster = {
    gcs: `127.0.0.1:${gcsPort}`,
    dashboard: `http://127.0.0.1:${dashPort}`,
    nodes: started,
    killNode: (i) => kill(started[i]),
    addNode,
    stop: () => [...started].reverse().forEach(kill),
  };
  try {
    const head = join(dir, "h");
    mkdirSync(head, { recursive: true });
    started.push({ tempDir: head, head: true });
    rayStart([
      "--head",
      "--port",
      String(gcsPort),
      "--dashboard-host",
      "127.0.0.1",
      "--dashboard-port",
      String(dashPort),
      "--include-dashboard",
      "true",
      ...common(head, nodes[0]),
    ]);
    nodes.slice(1).forEach(addNode);
  } catch (e) {
    cluster.stop();
    throw e;
  }
  return cluster;
}

/** GET a dashboard path as JSON (through curl, as the engine does). */
export function dashboardJson<T>(cluster: LocalCluster, path: string): T {
  const out = new Deno.Command("curl", { args: ["-sS", "--max-time", "30", cluster.dashboard + path] })
    .outputSync();
  if (!out.success) throw new Error(`curl ${path}: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
}
