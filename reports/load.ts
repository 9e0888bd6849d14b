// Read a sweep folder (or a `deno task eval` folder) into memory: run configs, status, metrics, graded samples.
import { join } from "node:path";
import { exists, readJson, readJsonl } from "../common/fs.ts";
import {
  type EvalSample,
  readEvalSamples,
  readStatus,
  RUN_FILES,
  type RunStatus,
  SWEEP_FILE,
} from "../common/run_folder.ts";
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
  engine: string;
  state: RunStatus["state"] | "unknown";
  reason?: string;
  /** The run's k values from its config (empty when the folder has no config, e.g. `deno task eval`). */
  ks: number[];
  metrics: MetricRow[];
  samples: EvalSample[];
  /** What the run's config asked for (absent fields: unknown, e.g. a `deno task eval` folder). */
  expected: { n?: number; steps?: number };
  /** eval.jsonl: "missing", "torn" (its last line was cut mid-write and is ignored) or "ok". */
  evalFile: "missing" | "torn" | "ok";
}

/** A loaded sweep: its sweep.json (null for folders without one) and its runs in folder order. */
export interface SweepData {
  dir: string;
  sweep: Record<string, unknown> | null;
  /** The backend the engine actually used, when it recorded one in `base/base.json` (tfjs "auto" → "wasm"). */
  resolvedBackend: string | null;
  runs: RunData[];
}

/** Turns an engine's raw outputs into eval.jsonl before loading (VERL validation dumps); may do nothing. */
export type Ingest = (runDir: string, config: Record<string, unknown>) => Promise<void>;

/** "missing", "torn" (non-empty and not ending in a newline: the last line was cut mid-write) or "ok". */
function evalFileState(path: string): RunData["evalFile"] {
  if (!exists(path)) return "missing";
  const text = Deno.readTextFileSync(path);
  return text.length > 0 && !text.endsWith("\n") ? "torn" : "ok";
}

function loadRun(dir: string, fallbackId: string): RunData {
  const config = exists(join(dir, RUN_FILES.config))
    ? readJson<Record<string, unknown>>(join(dir, RUN_FILES.config))
    : {};
  const status = readStatus(dir) ?? { state: "unknown" as const, reason: undefined };
  const samples = readEvalSamples(dir);
  const runId = String(config.runId ?? fallbackId);
  const evalConfig = (config.eval ?? {}) as { n?: unknown };
  const rl = ((config.settings as { rl?: { steps?: unknown } } | undefined)?.rl ?? config.rl ?? {}) as {
    steps?: unknown;
  };
  return {
    runId,
    method: String(config.method ?? config.model ?? runId),
    preset: String(config.preset ?? ""),
    seed: Number(config.seed ?? 0),
    engine: String(config.engine ?? "external"),
    state: status.state,
    reason: status.reason,
    ks: ((config.eval as { ks?: number[] } | undefined)?.ks ?? []).slice(),
    metrics: readJsonl<MetricRow>(join(dir, RUN_FILES.metrics)),
    samples,
    expected: {
      n: Number.isInteger(evalConfig.n) ? evalConfig.n as number : undefined,
      steps: Number.isInteger(rl.steps) ? rl.steps as number : undefined,
    },
    evalFile: evalFileState(join(dir, RUN_FILES.eval)),
  };
}

/**
 * Load `dir`: a sweep (`sweep.json` + `runs/<id>/`), a folder of run folders, or one run folder holding
 * eval.jsonl. `ingest` is called per run whose engine needs it (VERL) before its samples are read.
 */
export async function loadSweep(dir: string, ingest: Record<string, Ingest> = {}): Promise<SweepData> {
  if (!exists(dir)) throw new Error(`${dir}: no such folder`);
  const sweep = exists(join(dir, SWEEP_FILE))
    ? readJson<Record<string, unknown>>(join(dir, SWEEP_FILE))
    : null;
  let runDirs: string[];
  if (exists(join(dir, "runs"))) {
    runDirs = [...Deno.readDirSync(join(dir, "runs"))].filter((e) => e.isDirectory).map((e) =>
      join(dir, "runs", e.name)
    );
  } else if (exists(join(dir, RUN_FILES.eval))) {
    runDirs = [dir];
  } else {
    throw new Error(`${dir}: neither a sweep (no runs/ folder) nor a run folder (no eval.jsonl)`);
  }
  const order = (sweep?.runIds as string[] | undefined) ?? [];
  const rank = (path: string) => {
    const i = order.indexOf(path.split("/").pop()!);
    return i < 0 ? order.length : i;
  };
  runDirs.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const runs: RunData[] = [];
  for (const runDir of runDirs) {
    const configPath = join(runDir, RUN_FILES.config);
    const config = exists(configPath) ? readJson<Record<string, unknown>>(configPath) : {};
    const hook = ingest[String(config.engine)];
    if (hook) await hook(runDir, config);
    runs.push(loadRun(runDir, runDir.split("/").pop()!));
  }
  // Base 0's record (a tfjs sweep keeps base b under base/<b>/; sweeps before bases kept one under base/).
  const basePath = [join(dir, "base", "0", "base.json"), join(dir, "base", "base.json")].find(exists) ?? "";
  return { dir, sweep, resolvedBackend: exists(basePath) ? resolvedBackend(readJson(basePath)) : null, runs };
}

/** The backend a sweep's base model ran on, from `base/base.json`, with the BLAS it used on blas; null if unknown. */
function resolvedBackend(base: { backend?: unknown; backendDecision?: { blas?: Record<string, unknown> } }) {
  if (typeof base.backend !== "string") return null;
  const blas = base.backendDecision?.blas;
  return blas
    ? `${base.backend}: ${blas.library}, ${blas.core} kernels, ${blas.threads} thread per product`
    : base.backend;
}

/** The runs a report counts: finished ones (or folders without a status, e.g. from `deno task eval`). */
export function usableRuns(data: SweepData): RunData[] {
  return data.runs.filter((r) => (r.state === "done" || r.state === "unknown") && r.samples.length > 0);
}
