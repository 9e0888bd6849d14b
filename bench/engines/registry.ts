// Engine name → where its code lives. Nothing is imported here: sweep workers import the module by URL, so a
// sweep that uses the tabular engine never loads tfjs, and the registry does not depend on any engine. A spec may
// hold functions (`ingest.pending`), so it never crosses a Worker boundary: a job carries an `EngineRef` (strings)
// and the Worker looks the engine up here by name.
import { join } from "node:path";
import { readFolderFile, runFile, sweepFile } from "../../common/run_folder.ts";
import { type EvalProtocol, graderOptions } from "../../common/protocol.ts";
import { GRADE_TIMEOUT_MS, graderVersion } from "../../evaluators/mod.ts";
import type { Engine, RunConfig } from "./engine.ts";

/** Where an engine's implementation lives: a module URL and the export holding the `Engine`. */
export interface EngineSpec {
  name: string;
  /** Imported lazily, inside a worker; the JSON Schema of the engine's `settings` is settings.schema.json beside it. */
  module: string;
  exportName: string;
  /**
   * For an engine whose job writes its own outputs (VERL: validation dumps): the export `(runDir, { sweepDir })`
   * turning them into run-folder files, and whether a run folder has outputs not ingested yet (reports refuse it).
   */
  ingest?: { exportName: string; pending(runDir: string): boolean };
  /** Export planning one external job for `--dry-run` (VERL: `planRun`: Hydra overrides, script, command). */
  planner?: string;
  /** Export of an engine whose runs are cluster jobs (`EngineCluster`; VERL: `verlCluster`), loaded by the runner. */
  cluster?: string;
  /**
   * `deno task sweep --smoke`: `settings` and `rl` merged deeply over a config's, so every shipped config runs its
   * real code path in seconds; `plansOnly`: the engine launches nothing (VERL) and keeps methods and evaluation.
   */
  smoke: { settings: Record<string, unknown>; rl?: Record<string, unknown>; plansOnly?: boolean };
  /** What base model b is, for `--dry-run`'s design line; `seed` is the seed base 0 trains from, or "b". */
  base(seed: string): string;
  /** Trains on this machine (a dry run may time it); false for engines that plan cluster jobs (VERL). */
  local: boolean;
  /** The most base models a sweep of this engine may have (VERL: 1, the pretrained model); absent: no limit. */
  maxBases?: number;
  /** The evaluation protocol the engine applies with these (validated) settings: sweep.json's `record.protocol`. */
  protocol(settings: Record<string, unknown>, evalSpec: { n: number; ks: number[] }): EvalProtocol;
}

/** An engine as a Worker job names it: plain strings only (the registry name, its module and export). */
export type EngineRef = Pick<EngineSpec, "name" | "module" | "exportName">;

/** The plain-data reference a job carries for `spec`. */
export function engineRef(spec: EngineSpec): EngineRef {
  return { name: spec.name, module: spec.module, exportName: spec.exportName };
}

const here = (path: string) => new URL(path, import.meta.url).href;

/** Modification time of a path in ms (0 when absent); a folder counts as its newest entry. */
function newest(path: string): number {
  let stat: Deno.FileInfo;
  try {
    stat = Deno.statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory) return stat.mtime?.getTime() ?? 0;
  return Math.max(0, ...[...Deno.readDirSync(path)].map((e) => newest(join(path, e.name))));
}

/** Pending when the run folder's `dumps` folder has files newer than its eval.jsonl (or eval.jsonl is absent). */
function newerThanEval(dir: string, dumps: string): boolean {
  const latest = newest(join(dir, dumps));
  return latest > 0 && latest > newest(runFile(dir, "eval"));
}

/** Split sampling settings into those sent (non-null) and those left to the sampler's defaults (null). */
function sampling(values: Record<string, unknown>): EvalProtocol["sampling"] {
  const entries = Object.entries(values);
  return {
    sent: Object.fromEntries(entries.filter(([, v]) => v !== null && v !== undefined)),
    serverDefaults: entries.filter(([, v]) => v === null || v === undefined).map(([k]) => k),
  };
}

/** The protocol fields every engine shares: the test split, samples per problem, k values. */
const evalCommon = (e: { n: number; ks: number[] }) => ({ split: "test", n: e.n, ks: [...e.ks] });

/** Strict grading (explicit answer markers only, the training reward) at this grader version. */
const strict = (timeoutMs: number | null) => ({
  mode: "strict" as const,
  version: graderVersion(),
  timeoutMs,
});

/** The engines a sweep config may name. */
export const engines: Record<string, EngineSpec> = {
  tabular: {
    name: "tabular",
    module: here("./tabular/engine.ts"),
    exportName: "tabularEngine",
    smoke: { settings: { prompts: 16, checkpointEvery: 1 } },
    base: () => "; base b is tabular world worldSeed + b",
    local: true,
    // The world knows which answers are right: no text is graded.
    protocol: (_s, e) => ({
      ...evalCommon(e),
      datasets: ["tabular"],
      template: "none",
      sampling: { sent: {}, serverDefaults: [] },
      grader: { mode: "none", version: null, timeoutMs: null },
    }),
  },
  tfjs: {
    name: "tfjs",
    module: here("./tfjs/engine.ts"),
    exportName: "tfjsEngine",
    smoke: {
      settings: {
        model: { dModel: 16, heads: 2, layers: 1 },
        tasks: { trainSize: 32, testSize: 6 },
        sft: { steps: 8, batchSize: 8, workers: 1 },
      },
      // Groups of 4: the smallest that Pass@k training's k = 4 (the passk preset) accepts.
      rl: { promptsPerStep: 2, groupSize: 4 },
    },
    base: (seed) => `; base b is an SFT model trained from seed ${seed} under <out>/base/<b>/`,
    local: true,
    // Its own generated test tasks (part of the protocol), compact prompts, graded strictly in-process.
    protocol: (s, e) => {
      const ev = (s.eval ?? {}) as { temperature?: number; topP?: number };
      const t = (s.tasks ?? {}) as { families?: string[]; testSize?: number; seed?: number };
      return {
        ...evalCommon(e),
        split: `test: ${t.testSize} generated (families ${(t.families ?? []).join(", ")}; seed ${t.seed})`,
        datasets: ["synthetic"],
        template: "compact",
        sampling: sampling({
          temperature: ev.temperature ?? 1,
          top_p: ev.topP ?? 1,
          max_tokens: (s.rl as { maxNewTokens?: number } | undefined)?.maxNewTokens ?? null,
        }),
        grader: strict(null),
      };
    },
  },
  verl: {
    name: "verl",
    module: here("./verl/mod.ts"),
    exportName: "verlEngine",
    ingest: { exportName: "ingestVerlDumps", pending: (dir) => newerThanEval(dir, "val_generations") },
    planner: "planRun",
    cluster: "verlCluster",
    smoke: { settings: { launch: "none" }, plansOnly: true },
    base: () => "; the base is the pretrained model",
    local: false,
    maxBases: 1,
    // Validation dumps graded strictly by the worker pool, with its per-answer timeout.
    protocol: (s, e) => ({
      ...evalCommon(e),
      datasets: [...((s.valDatasets as string[] | undefined) ?? [])].sort(),
      template: String(s.template ?? "boxed"),
      sampling: sampling({ temperature: s.valTemperature ?? null, top_p: s.valTopP ?? null }),
      grader: strict(GRADE_TIMEOUT_MS),
    }),
  },
};

/**
 * How a run of `engine` grades: by the protocol its sweep recorded (sweep.json in `sweepDir`), else (no record yet:
 * a dry run, a test of the engine alone) by the engine's protocol for `settings`.
 */
export function gradingOf(
  engine: string,
  sweepDir: string | null,
  settings: Record<string, unknown> = {},
  evalSpec: { n: number; ks: number[] } = { n: 1, ks: [1] },
): { strict: boolean; timeoutMs: number | null } {
  const record = sweepDir === null ? null : readFolderFile(sweepDir)?.record;
  const protocol = record?.protocol ?? engineSpec(engine).protocol(settings, evalSpec);
  return graderOptions(protocol, record ? sweepFile(sweepDir!) : `engine ${engine}`);
}

/** The spec for an engine name; throws naming the known engines when it is unknown. */
export function engineSpec(name: string): EngineSpec {
  const spec = engines[name];
  if (!spec) throw new Error(`unknown engine '${name}' (known: ${Object.keys(engines).join(", ")})`);
  return spec;
}

/**
 * The engine a job names, inside the Worker: the registry's entry for `ref.name` (module and export must match),
 * or the reference itself for a name outside the registry (a test's fake engine).
 */
export function engineOf(ref: EngineRef): EngineRef {
  const spec = engines[ref.name];
  if (spec && (spec.module !== ref.module || spec.exportName !== ref.exportName)) {
    throw new Error(
      `engine '${ref.name}': the job names ${ref.module}#${ref.exportName}, the registry ${spec.module}#${spec.exportName}`,
    );
  }
  return ref;
}

/** Import `module`'s export `name`: a function, or an object with function `members`; else throws naming both. */
async function exported<T>(module: string, name: string, what: string, members: string[] = []): Promise<T> {
  const value = (await import(module))[name];
  const fn = (v: unknown) => typeof v === "function";
  if (members.length ? !members.every((m) => fn(value?.[m])) : !fn(value)) {
    throw new Error(`${module}: no ${what} '${name}'`);
  }
  return value;
}

/** Import an engine module and return its `Engine`; the error names the module when the export is missing. */
export function loadEngine(spec: EngineRef): Promise<Engine> {
  return exported(spec.module, spec.exportName, "engine exported as", ["run"]);
}

/** What `--dry-run` shows for a run whose engine launches external jobs (VERL): overrides, script, command. */
export interface LaunchPlan {
  overrides: string[];
  script: string;
  command: string;
  /** The engine's cost record of the run, summed by its `costTable` (VERL: bench/engines/verl/cost.ts). */
  cost?: unknown;
  /** What the plan runs on, shown by `--dry-run` (VERL: "verl v0.9.0", the release launch.sh insists on). */
  target?: string;
  /** What the target cannot express and so does not pass (VERL 0.9.0: DAPO's round cap), shown by `--dry-run`. */
  notes?: string[];
}

/** The sweep facts a launch plan needs: its name, RL steps and folder. */
export interface PlanSweep {
  name: string;
  rl: { steps: number };
  dir: string;
}

/** Import the engine's declared planner (VERL: Hydra overrides + `ray job submit`); null when it declares none. */
export async function loadPlanner(
  spec: EngineSpec,
): Promise<((run: RunConfig, sweep: PlanSweep) => LaunchPlan) | null> {
  return spec.planner ? await exported(spec.module, spec.planner, "planner") : null;
}

/** Run the engine's ingest on a run folder (none: null); `partial` keeps short outputs, cells marked †. */
export async function runIngest(
  spec: EngineSpec,
  runDir: string,
  sweepDir: string,
  options: { partial?: boolean } = {},
): Promise<unknown> {
  if (!spec.ingest) return null;
  const ingest: (dir: string, o: object) => Promise<unknown> = await exported(
    spec.module,
    spec.ingest.exportName,
    "ingest",
  );
  return await ingest(runDir, { sweepDir, partial: options.partial });
}

/** What the sweep runner asks an engine whose runs are cluster jobs (the runs themselves still go through `run`). */
export interface EngineCluster {
  /** Runs in flight at once for these sweep settings (the cluster's capacity); null: the runner's own lanes. */
  concurrency(settings: Record<string, unknown>): Promise<number | null>;
  /** After Ctrl-C, for each run left running: stop or detach its job (the engine's setting says which). */
  interrupt(runDir: string, settings: Record<string, unknown>): Promise<void>;
}

/** Import the engine's declared cluster scheduler, in the runner's thread; null when it declares none. */
export async function loadCluster(spec: EngineSpec): Promise<EngineCluster | null> {
  if (!spec.cluster) return null;
  return await exported(spec.module, spec.cluster, "cluster scheduler", ["concurrency", "interrupt"]);
}

/** Import an engine module's optional `costTable(costs)` (VERL: generations, GPU-hours, storage, memory), if any. */
export async function loadCostTable(spec: EngineSpec): Promise<((costs: unknown[]) => string) | null> {
  const mod = await import(spec.module);
  return typeof mod.costTable === "function" ? mod.costTable : null;
}
