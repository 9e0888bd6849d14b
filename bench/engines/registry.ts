// Engine name → where its code lives. Nothing is imported here: sweep workers import the module by URL, so a
// sweep that uses the tabular engine never loads tfjs, and the registry does not depend on any engine.
import type { Engine, RunConfig } from "./engine.ts";

/** Where an engine's implementation lives: a module URL, the export holding the `Engine`, its settings schema. */
export interface EngineSpec {
  name: string;
  /** Module that exports the engine object (imported lazily, inside a worker). */
  module: string;
  /** Name of the export holding the `Engine`. */
  exportName: string;
  /** JSON Schema for the engine's `settings` (defaults are filled in by ajv). */
  settingsSchema: string;
}

const here = (path: string) => new URL(path, import.meta.url).href;

/** The engines a sweep config may name. */
export const engines: Record<string, EngineSpec> = {
  tabular: {
    name: "tabular",
    module: here("./tabular/engine.ts"),
    exportName: "tabularEngine",
    settingsSchema: here("./tabular/settings.schema.json"),
  },
  tfjs: {
    name: "tfjs",
    module: here("./tfjs/engine.ts"),
    exportName: "tfjsEngine",
    settingsSchema: here("./tfjs/settings.schema.json"),
  },
  verl: {
    name: "verl",
    module: here("./verl/mod.ts"),
    exportName: "verlEngine",
    settingsSchema: here("./verl/settings.schema.json"),
  },
};

/** The spec for an engine name; throws naming the known engines when it is unknown. */
export function engineSpec(name: string): EngineSpec {
  const spec = engines[name];
  if (!spec) throw new Error(`unknown engine '${name}' (known: ${Object.keys(engines).join(", ")})`);
  return spec;
}

/** Import an engine module and return its `Engine`; the error names the module when the export is missing. */
export async function loadEngine(spec: EngineSpec): Promise<Engine> {
  const mod = await import(spec.module);
  const engine = mod[spec.exportName] as Engine | undefined;
  if (!engine || typeof engine.run !== "function") {
    throw new Error(`${spec.module}: no engine exported as '${spec.exportName}'`);
  }
  return engine;
}

/** What `--dry-run` shows for a run whose engine launches external jobs (VERL): overrides, script, command. */
export interface LaunchPlan {
  overrides: string[];
  script: string;
  command: string;
  /** The engine's cost record of the run, summed by its `costTable` (VERL: bench/engines/verl/cost.ts). */
  cost?: unknown;
}

/** The sweep facts a launch plan needs: its name, RL steps and folder. */
export interface PlanSweep {
  name: string;
  rl: { steps: number };
  dir: string;
}

/** Import an engine module's optional `planRun(run, sweep)` (VERL: Hydra overrides + `ray job submit`), if any. */
export async function loadPlanner(
  spec: EngineSpec,
): Promise<((run: RunConfig, sweep: PlanSweep) => LaunchPlan) | null> {
  const mod = await import(spec.module);
  return typeof mod.planRun === "function" ? mod.planRun : null;
}

/** Import an engine module's optional `costTable(costs)` (VERL: generations, GPU-hours, storage, memory), if any. */
export async function loadCostTable(spec: EngineSpec): Promise<((costs: unknown[]) => string) | null> {
  const mod = await import(spec.module);
  return typeof mod.costTable === "function" ? mod.costTable : null;
}
