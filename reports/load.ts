// Read a sweep folder (or a `deno task eval` folder) into memory: run configs, status, metrics, graded samples.
import { join } from "node:path";
import { exists } from "../common/fs.ts";
import {
  type BackendDecisionRecord,
  type EvalSample,
  type FolderFile,
  readEvalSamples,
  readFolderFile,
  readMetrics,
  readRunConfig,
  readStatus,
  runFile,
  type RunStatus,
} from "../common/run_folder.ts";
import type { AceConfig } from "../bench/core/mod.ts";
import type { SweepConfig } from "../bench/sweep/mod.ts";
import type { EvalFileConfig } from "../bench/external/mod.ts";
import { checkIngested, runFolders } from "./ingest.ts";
export type { EvalSample };

/** One line of metrics.jsonl (only the fields reports plot are named). */
export interface MetricRow {
  step: number;
  [metric: string]: number | null | undefined;
}

/** One run as the report sees it. */
export interface RunData {
  runId: string;
  method: string;
  preset: string;
  seed: number;
  /** 0-based index of the base model the run starts from (config.json `base`; absent: 0, one shared base). */
  base: number;
  engine: string;
  state: RunStatus["state"] | "unknown";
  reason?: string;
  /** The run's k values from its config (empty when the folder has no config, e.g. `deno task eval`). */
  ks: number[];
  metrics: MetricRow[];
  samples: EvalSample[];
  /**
   * What the run's config asked for (absent fields: unknown, e.g. a `deno task eval` folder); `protocolN`: the n of
   * each extra evaluation protocol (tfjs eval.protocols), whose samples carry the dataset `<dataset>@<name>`.
   */
  expected: { n?: number; steps?: number; protocolN?: Record<string, number> };
  /** Cells an engine's ingest kept with samples missing (status.json `lostSamples`, VERL `--ingest --partial`). */
  lostSamples?: RunStatus["lostSamples"];
  /** eval.jsonl: "missing", "torn" (its last line was cut mid-write and is ignored) or "ok". */
  evalFile: "missing" | "torn" | "ok";
  /** The run's ACE options (config.json `algo.ace`; absent: not recorded, e.g. `deno task eval`). */
  ace?: AceConfig;
  /** The RL step size the run trained with (config.json `settings.rl.lr`; absent: not recorded). */
  lr?: number;
}

/** A sweep's or an evaluation's record file, migrated and typed by its kind (common/run_folder.ts). */
export type Folder =
  | (FolderFile<SweepConfig> & { kind: "sweep" })
  | (FolderFile<EvalFileConfig> & { kind: "eval" });

/** A loaded sweep: its sweep.json (or an evaluation's eval.json; null without one) and its runs in order. */
export interface SweepData {
  dir: string;
  folder: Folder | null;
  /** The backend the engine actually used, when its runs recorded one in config.json (tfjs "auto" → "wasm"). */
  resolvedBackend: string | null;
  runs: RunData[];
}

/** The settings of config.json a report reads (RL steps and step size, tfjs' extra evaluation protocols). */
interface ReadSettings {
  rl?: { steps?: number; lr?: number };
  eval?: { protocols?: { name: string; n: number }[] };
}

/** "missing", "torn" (non-empty and not ending in a newline: the last line was cut mid-write) or "ok". */
function evalFileState(path: string): RunData["evalFile"] {
  if (!exists(path)) return "missing";
  const text = Deno.readTextFileSync(path);
  return text.length > 0 && !text.endsWith("\n") ? "torn" : "ok";
}

function loadRun(dir: string, fallbackId: string): RunData {
  // Migrated and validated on read: a record that does not match is refused naming the file and the field.
  const config = readRunConfig<ReadSettings, { ace?: AceConfig }>(dir);
  const record = config?.record ?? undefined;
  const status = readStatus(dir) ?? { state: "unknown" as const, reason: undefined, lostSamples: undefined };
  const runId = config?.runId ?? fallbackId;
  if (config && !(Number.isInteger(config.base) && config.base >= 0)) {
    throw new Error(`${runFile(dir, "config")}: base: expected a non-negative integer, got ${config.base}`);
  }
  const protocols = config?.settings.eval?.protocols ?? [];
  const rl = config?.settings.rl ?? {};
  const ace = config?.algo.ace;
  return {
    runId,
    method: record?.method.name ?? config?.method ?? runId,
    preset: record?.method.preset ?? config?.preset ?? "",
    seed: config?.seed ?? 0,
    base: config?.base ?? 0,
    engine: config?.engine ?? "external",
    state: status.state,
    reason: status.reason,
    ks: (record?.protocol.ks ?? config?.eval?.ks ?? []).slice(),
    metrics: readMetrics<MetricRow>(dir),
    samples: readEvalSamples(dir),
    expected: {
      n: record?.protocol.n ?? config?.eval?.n,
      steps: rl.steps,
      ...(protocols.length ? { protocolN: Object.fromEntries(protocols.map((p) => [p.name, p.n])) } : {}),
    },
    lostSamples: status.lostSamples,
    evalFile: evalFileState(runFile(dir, "eval")),
    ...(ace && typeof ace.enabled === "boolean" ? { ace } : {}),
    ...(typeof rl.lr === "number" ? { lr: rl.lr } : {}),
  };
}

/**
 * Load `dir`: a sweep (`sweep.json` + `runs/<id>/`), a folder of run folders, or one run folder holding
 * eval.jsonl. Read only: a folder whose engine outputs are not ingested yet (VERL dumps) is an error.
 */
export function loadSweep(dir: string): SweepData {
  if (!exists(dir)) throw new Error(`${dir}: no such folder`);
  checkIngested(dir);
  const folder = readFolderFile(dir) as Folder | null;
  if (!exists(join(dir, "runs")) && !exists(runFile(dir, "eval"))) {
    throw new Error(`${dir}: neither a sweep (no runs/ folder) nor a run folder (no eval.jsonl)`);
  }
  const order = folder?.runIds ?? [];
  const rank = (path: string) => {
    const i = order.indexOf(path.split("/").pop()!);
    return i < 0 ? order.length : i;
  };
  const runDirs = runFolders(dir).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const runs = runDirs.map((runDir) => loadRun(runDir, runDir.split("/").pop()!));
  const decision = runDirs.map((r) => readRunConfig(r)?.backendDecision).find((d) => d !== undefined);
  return { dir, folder, resolvedBackend: decision ? resolvedBackend(decision) : null, runs };
}

/** The backend the runs recorded in config.json (`backendDecision`), with the BLAS it used on blas. */
function resolvedBackend({ backend, blas, blasThreads: t, native: n }: BackendDecisionRecord): string {
  const cut = t?.split ? `; products of 2 MFLOP or more cut in two, on ${t.threads} thread(s)` : "";
  const native = n ? `; native kernels: ${n}` : "";
  return blas
    ? `${backend}: ${blas.library}, ${blas.core} kernels, ${blas.threads} thread per product${cut}${native}`
    : backend;
}

/** The folder's name: a sweep's config name, "<model> on <dataset>" for an evaluation, else the folder's. */
export function folderName(data: SweepData): string {
  const f = data.folder;
  if (!f) return data.dir.split("/").pop()!;
  return f.kind === "eval" ? `${f.config.model} on ${f.config.dataset}` : f.config.name;
}

/** The runs a report counts: finished ones (or folders without a status, e.g. from `deno task eval`). */
export function usableRuns(data: SweepData): RunData[] {
  return data.runs.filter((r) => (r.state === "done" || r.state === "unknown") && r.samples.length > 0);
}
