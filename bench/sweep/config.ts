// A sweep config (JSON, validated) and its expansion into one RunConfig per method × ACE-grid point × seed.
import { readFileSync } from "node:fs";
import { UsageError } from "../../common/args.ts";
import { exists } from "../../common/fs.ts";
import { loadSchema, validate, ValidationError } from "../../common/config.ts";
import { configHash } from "../../common/hash.ts";
import { migrateFolderFile } from "../../common/run_folder.ts";
import type { RunConfig } from "../engines/engine.ts";
import { engines, type EngineSpec } from "../engines/registry.ts";
import { type AlgoConfig, overrideLeaves, PRESETS, resolveAlgo } from "../core/mod.ts";

/** One method of a sweep: an RL-core preset plus overrides, shown in reports under `name`. */
export interface MethodSpec {
  name: string;
  preset: string;
  overrides: Record<string, unknown>;
  /** The method's own RL-step settings over the sweep's (e.g. a step size); absent = the sweep's. */
  rl?: Record<string, unknown>;
}

/** RL settings only the sweep sets: its schedule and the response budget its base models are trained for. */
const SWEEP_ONLY_RL = ["steps", "maxNewTokens", "checkpointEvery"];

/** A validated sweep config (see `sweep.schema.json`). */
export interface SweepConfig {
  name: string;
  description?: string;
  /** A name in the engine registry (bench/engines/registry.ts). */
  engine: string;
  /** RL seeds of a one-base sweep (every run starts from base 0); absent when `bases` is given. */
  seeds?: number[];
  /** Independently trained base models; each run starts from one of them (absent: one base, see `seeds`). */
  bases?: number;
  /** RL seeds per base (default 1); only with `bases`. */
  seedsPerBase?: number;
  methods: MethodSpec[];
  grid?: { "ace.alpha"?: number[]; "ace.phi"?: string[]; "ace.aggregation"?: string[] };
  /** Extra report comparisons: `method` against each of `against` (method names of this sweep). */
  compare?: { method: string; against: string[] }[];
  settings: Record<string, unknown>;
  rl: { steps: number; [key: string]: unknown };
  eval: { n: number; ks: number[]; every: number };
}

const schemaUrl = new URL("./sweep.schema.json", import.meta.url);
const configsDir = new URL("../configs/", import.meta.url);

/** Path of a preset sweep config shipped in `bench/configs/` (e.g. "default", "ci-tabular"). */
export function presetPath(name: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new UsageError(`--preset: bad preset name '${name}'`);
  const path = new URL(`${name}.json`, configsDir).pathname;
  if (!exists(path)) {
    const known = [...Deno.readDirSync(configsDir)].map((e) => e.name.replace(/\.json$/, "")).sort();
    throw new UsageError(`--preset: no sweep preset '${name}' in bench/configs/ (have: ${known.join(", ")})`);
  }
  return path;
}

/** Parse and validate a sweep config file (a recorded sweep.json works too); errors name the file and field. */
export function readSweepConfig(path: string): SweepConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ValidationError(`${path}: ${(e as Error).message.split("\n")[0]}`);
  }
  // A recorded sweep.json (any version, through its one migration step) holds the config under `config`.
  const recorded = raw && typeof raw === "object" && "configHash" in raw;
  return checkSweepConfig(
    recorded ? migrateFolderFile(raw as Record<string, unknown>, path).config : raw,
    path,
  );
}

/**
 * Validate a sweep value against the schema, the engine's settings schema (filling its defaults), and the
 * cross-field rules a schema cannot express (k ≤ n, unique method names). `spec` overrides the engine (tests).
 */
export function checkSweepConfig(raw: unknown, source: string, spec?: EngineSpec): SweepConfig {
  const sweep = validate<SweepConfig>(loadSchema(schemaUrl), structuredClone(raw), source);
  const fail = (message: string): never => {
    throw new ValidationError(`${source}: ${message}`);
  };
  if (!spec && !Object.hasOwn(engines, sweep.engine)) {
    fail(`engine: unknown engine '${sweep.engine}' (known: ${Object.keys(engines).join(", ")})`);
  }
  const engine = spec ?? engines[sweep.engine];
  checkDesign(sweep, engine, fail);
  const tooBig = sweep.eval.ks.find((k) => k > sweep.eval.n);
  if (tooBig) fail(`eval.ks: k=${tooBig} exceeds eval.n=${sweep.eval.n} samples per problem`);
  sweep.eval.ks.sort((a, b) => a - b);
  const seen = new Set<string>();
  sweep.methods.forEach((m, i) => {
    if (!Object.hasOwn(PRESETS, m.preset)) {
      fail(`methods[${i}].preset: unknown preset '${m.preset}' (${Object.keys(PRESETS).join(", ")})`);
    }
    if (seen.has(m.name)) fail(`methods[${i}].name: duplicate method '${m.name}'`);
    seen.add(m.name);
    checkOverrides(m, sweep.grid, `${source}: methods[${i}].overrides`);
    const fixed = Object.keys(m.rl ?? {}).find((k) => SWEEP_ONLY_RL.includes(k));
    if (fixed) fail(`methods[${i}].rl.${fixed}: set by the sweep's rl block only`);
  });
  if (sweep.grid && !sweep.methods.some((m) => aceOn(m))) {
    fail(`grid: there is no ACE method (ace.enabled after overrides) to expand`);
  }
  sweep.compare?.forEach((c, i) => {
    if (sweep.grid) fail(`compare: not supported with a grid (method labels change)`);
    for (const [field, name] of [["method", c.method], ...c.against.map((a, j) => [`against[${j}]`, a])]) {
      if (!seen.has(name)) fail(`compare[${i}].${field}: '${name}' is not a method of this sweep`);
    }
  });
  // The sweep's rl block wins over settings.rl; the engine's schema then checks (and defaults) the merge.
  sweep.settings = methodSettings(sweep);
  const settingsSchema = new URL("./settings.schema.json", engine.module);
  if (exists(settingsSchema.pathname)) {
    const schema = loadSchema(settingsSchema);
    sweep.settings = validate(schema, sweep.settings, `${source}: settings`);
    sweep.methods.forEach((m, i) => {
      if (m.rl) validate(schema, methodSettings(sweep, m), `${source}: methods[${i}].rl`);
    });
  }
  return sweep;
}

/** A method's engine settings: the sweep's, with its rl block and then the method's own `rl` over settings.rl. */
function methodSettings(sweep: SweepConfig, method?: MethodSpec): Record<string, unknown> {
  const rl = { ...(sweep.settings.rl as object | undefined), ...sweep.rl, ...method?.rl };
  return structuredClone({ ...sweep.settings, rl });
}

/**
 * Whether a method runs ACE: its resolved algorithm's `ace.enabled` (preset plus overrides), never its name. A
 * method that does not resolve is judged by its preset's and its overrides' own `ace.enabled`, so the grid checks
 * still apply to it; `checkOverrides` reports why it does not resolve.
 */
function aceOn(method: MethodSpec): boolean {
  try {
    return resolveAlgo(method.preset, method.overrides ?? {}).ace.enabled;
  } catch {
    const o = method.overrides ?? {};
    const set = (o.ace as { enabled?: unknown } | undefined)?.enabled ?? o["ace.enabled"];
    return typeof set === "boolean" ? set : PRESETS[method.preset]?.ace.enabled ?? false;
  }
}

/**
 * A method's overrides must resolve on their own (so a bad value is rejected even where the grid replaces it),
 * and none may set a field the grid also sets (the grid would win silently). `at` names file and JSON path.
 */
function checkOverrides(method: MethodSpec, grid: SweepConfig["grid"], at: string): void {
  const leaves = overrideLeaves(method.overrides ?? {});
  const axes = aceOn(method) ? Object.keys(grid ?? {}) : [];
  for (const [dotted, json] of leaves) {
    const axis = axes.find((a) => a === dotted || a.startsWith(`${dotted}.`) || dotted.startsWith(`${a}.`));
    if (axis) throw new ValidationError(`${at}${json} is also set by grid[${JSON.stringify(axis)}]`);
  }
  try {
    resolveAlgo(method.preset, method.overrides ?? {});
  } catch (e) {
    const detail = (e as Error).message.split("\n")[0].replace(/^algo \(preset [^)]*\): /, "").split("; ")[0];
    const [field, why] = [detail.split(": ")[0], detail.slice(detail.indexOf(": ") + 2)];
    const extra = why.match(/^must NOT have additional properties '(.+)'$/)?.[1];
    const path = extra ? (field === "(root)" ? extra : `${field}.${extra}`) : field;
    const leaf = leaves.find(([dotted]) => dotted === path || dotted.startsWith(`${path}.`));
    if (!leaf) throw new ValidationError(`${at}: ${detail}`);
    throw new ValidationError(
      extra
        ? `${at}${leaf[1]}: unknown field of preset ${method.preset} (see bench/core/algo.schema.json)`
        : `${at}${leaf[1]}: ${why} (got ${JSON.stringify(leaf[2])})`,
    );
  }
}

/** The design fields (exactly one of `seeds` and `bases` + `seedsPerBase`) and the engine's limit on bases. */
function checkDesign(sweep: SweepConfig, spec: EngineSpec, fail: (message: string) => never): void {
  if (sweep.seeds !== undefined && sweep.bases !== undefined) {
    fail(`seeds: give either 'seeds' (one shared base model) or 'bases' with 'seedsPerBase', not both`);
  }
  if (sweep.seeds === undefined && sweep.bases === undefined) {
    fail(`(root): must have 'bases' (base models) or 'seeds' (one base)`);
  }
  if (sweep.seedsPerBase !== undefined && sweep.bases === undefined) {
    fail(`seedsPerBase: only with 'bases' (a 'seeds' list has one base)`);
  }
  // VERL: one base, the pretrained model.
  if (spec.maxBases !== undefined && (sweep.bases ?? 1) > spec.maxBases) {
    fail(
      `bases: ${sweep.bases}, but a ${spec.name} sweep has at most ${spec.maxBases} base model(s); ` +
        `use bases: ${spec.maxBases}`,
    );
  }
}

/**
 * The (base, seed) units of a sweep, base-major: the base model a run starts from (0-based) and its RL seed
 * within that base; with `bases: B, seedsPerBase: S` every base b < B with seeds 0..S−1; with a `seeds` list,
 * base 0 with those seeds.
 */
export function designUnits(sweep: SweepConfig): { base: number; seed: number }[] {
  if (sweep.bases === undefined) return (sweep.seeds ?? []).map((seed) => ({ base: 0, seed }));
  const S = sweep.seedsPerBase ?? 1;
  return Array.from({ length: sweep.bases * S }, (_, i) => ({ base: Math.floor(i / S), seed: i % S }));
}

/**
 * Seed of base b's own training (SFT initialisation and data order; the tabular world): b for a `bases` sweep,
 * and for a `seeds` list its first seed (what one-base sweeps have always used).
 */
export function baseSeed(sweep: SweepConfig, base: number): number {
  return sweep.bases === undefined ? (sweep.seeds ?? [0])[0] : base;
}

/** Every grid point: values by dotted path and the label suffix (filename-safe), e.g. "_a1_softplus_sum". */
function gridPoints(grid: SweepConfig["grid"]): { sets: Record<string, unknown>; suffix: string }[] {
  let points = [{ sets: {} as Record<string, unknown>, suffix: "" }];
  for (const [path, prefix] of [["ace.alpha", "a"], ["ace.phi", ""], ["ace.aggregation", ""]] as const) {
    const values: (number | string)[] | undefined = grid?.[path];
    if (!values) continue;
    points = points.flatMap((p) =>
      values.map((v) => ({
        sets: { ...p.sets, [path]: v },
        suffix: `${p.suffix}_${prefix}${String(v).replace(/[^A-Za-z0-9.]/g, "")}`,
      }))
    );
  }
  return points;
}

/**
 * Expand a sweep into its runs: methods (ACE ones × grid points) × (base, seed) units, in a stable order. Every
 * method gets the same units, so ACE and its baseline start from the same bases (paired).
 */
export function expandRuns(sweep: SweepConfig): RunConfig[] {
  const runs: RunConfig[] = [];
  for (const method of sweep.methods) {
    for (const point of gridPoints(aceOn(method) ? sweep.grid : undefined)) {
      // Grid values go in as dotted keys after the method's own overrides; resolveAlgo applies them in order.
      const overrides = { ...structuredClone(method.overrides ?? {}), ...point.sets };
      const label = method.name + point.suffix;
      let algo: AlgoConfig;
      try {
        algo = resolveAlgo(method.preset, overrides);
      } catch (e) {
        throw new ValidationError(`method '${label}': ${(e as Error).message.split("\n")[0]}`);
      }
      for (const { base, seed } of designUnits(sweep)) {
        runs.push({
          runId: `${label}${sweep.bases === undefined ? "" : `_b${base}`}_s${seed}`, // one base: no _b
          engine: sweep.engine,
          method: label,
          preset: method.preset,
          seed,
          base,
          algo,
          settings: methodSettings(sweep, method),
          eval: { ...sweep.eval },
        });
      }
    }
  }
  return runs;
}

/** The identity of a sweep's results: a hash of everything that changes its numbers (not its name). */
export function sweepHash(sweep: SweepConfig): string {
  const { name: _name, description: _description, ...rest } = sweep;
  return configHash(rest);
}

/** Keep the runs matching `pattern`: a glob (`*`, `?`) over the whole run id, else an exact run id or method. */
export function filterRuns(runs: RunConfig[], pattern: string | undefined): RunConfig[] {
  if (!pattern) return runs;
  if (!/[*?]/.test(pattern)) return runs.filter((r) => r.runId === pattern || r.method === pattern);
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  const re = new RegExp(`^${escaped}$`);
  return runs.filter((r) => re.test(r.runId));
}
