// The messages between the sweep runner and its Workers. What crosses a Worker boundary is plain data by
// construction: an engine travels as its registry name (and where its module is), never as a spec object that
// may hold functions; the Worker looks the engine up by name. Both sides check every message: the runner before
// postMessage (so a function fails with a named field instead of a DataCloneError) and on each reply, the
// Worker on each job it receives.
import { compileSchema, describeErrors } from "../../common/config.ts";
import type { LearnedFields } from "../../common/run_folder.ts";
import type { Engine, RunConfig, RunOutcome } from "../engines/engine.ts";
import type { EngineRef } from "../engines/registry.ts";

/** A job the runner sends a Worker: one base model's shared `prepare` (what the engine's prepare takes), or one run. */
export type WorkerJob =
  | { kind: "prepare"; engine: EngineRef; sweepDir: string }
    & Required<Parameters<NonNullable<Engine["prepare"]>>[0]>
  | { kind: "run"; engine: EngineRef; run: RunConfig; runDir: string; sweepDir: string };

/** What a Worker reports back while its job runs, and how it ended. */
export type WorkerReport =
  | { kind: "progress"; step: number; total: number }
  | { kind: "config"; config: RunConfig<unknown> }
  | { kind: "record"; fields: LearnedFields }
  | { kind: "done"; outcome: RunOutcome }
  | { kind: "error"; message: string; stack?: string };

const object = { type: "object" };
const string = { type: "string" };
const integer = { type: "integer" };

/** An object schema requiring its properties (except `optional`); `closed`: no other property is allowed. */
function shape(properties: Record<string, object>, closed: boolean, optional: string[] = []) {
  const required = Object.keys(properties).filter((p) => !optional.includes(p));
  return { type: "object", ...(closed ? { additionalProperties: false } : {}), required, properties };
}

const evalSpec = shape({ n: integer, ks: { type: "array", items: integer }, every: integer }, false);
const engineRef = shape({ name: { type: "string", minLength: 1 }, module: string, exportName: string }, true);
const runConfig = shape({
  runId: { type: "string", minLength: 1 },
  engine: string,
  method: string,
  preset: string,
  seed: integer,
  base: integer,
  algo: object,
  settings: object,
  eval: evalSpec,
}, false);

/** One closed schema per message kind (the `kind` field is checked first, so errors name the right fields). */
function kinds(shapes: Record<string, Record<string, object>>, optional: string[] = []) {
  const schema = (kind: string, properties: Record<string, object>) =>
    compileSchema(shape({ kind: { const: kind }, ...properties }, true, optional));
  return Object.fromEntries(Object.entries(shapes).map(([kind, props]) => [kind, schema(kind, props)]));
}

const JOB_SCHEMAS = kinds({
  prepare: {
    engine: engineRef,
    settings: object,
    seed: integer,
    base: integer,
    eval: evalSpec,
    sweepDir: string,
  },
  run: { engine: engineRef, run: runConfig, runDir: string, sweepDir: string },
});

const REPORT_SCHEMAS = kinds({
  progress: { step: { type: "number" }, total: { type: "number" } },
  config: { config: runConfig },
  record: { fields: object },
  done: { outcome: { enum: ["done", "planned"] } },
  error: { message: string, stack: string },
}, ["stack"]);

/**
 * Where `value` stops being plain data (JSON values, plus `undefined` for absent optional fields): the dotted path
 * of the first function, symbol, bigint, class instance (Map, Date, typed array…) or cycle, and what it is; null
 * when all of it is plain.
 */
function nonPlainData(value: unknown, path = "(root)", seen = new Set<object>()): string | null {
  if (value === null || value === undefined) return null;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return null;
  if (type !== "object") return `${path} is a ${type}`;
  const obj = value as object;
  if (seen.has(obj)) return `${path} is a circular reference`;
  const proto = Object.getPrototypeOf(obj);
  if (!Array.isArray(obj) && proto !== Object.prototype && proto !== null) {
    return `${path} is a ${proto?.constructor?.name ?? "non-plain object"}`;
  }
  seen.add(obj);
  for (const [key, item] of Object.entries(obj)) {
    const at = Array.isArray(obj) ? `${path}[${key}]` : path === "(root)" ? key : `${path}.${key}`;
    const found = nonPlainData(item, at, seen);
    if (found) return found;
  }
  seen.delete(obj);
  return null;
}

/** Check a message against its kind's schema after the plain-data walk; returns it typed or throws one line. */
function checkMessage<T>(
  value: unknown,
  schemas: Record<string, ReturnType<typeof compileSchema>>,
  what: string,
): T {
  const bad = nonPlainData(value);
  if (bad) throw new Error(`${what}: ${bad}; only plain data (JSON values) crosses the Worker boundary`);
  const kind = (value as { kind?: unknown } | null)?.kind;
  const schema = typeof kind === "string" && Object.hasOwn(schemas, kind) ? schemas[kind] : undefined;
  if (!schema) {
    throw new Error(
      `${what}: kind: ${JSON.stringify(kind)} is not one of ${Object.keys(schemas).join(", ")}`,
    );
  }
  if (!schema(value)) throw new Error(`${what} (${kind}): ${describeErrors(schema.errors)}`);
  return value as T;
}

/** A job as the runner posts it and the Worker receives it; throws "sweep job: <field> …" when malformed. */
export function checkJob(value: unknown): WorkerJob {
  return checkMessage<WorkerJob>(value, JOB_SCHEMAS, "sweep job");
}

/** A Worker's report as the runner receives it; throws "worker report: <field> …" when malformed. */
export function checkReport(value: unknown): WorkerReport {
  return checkMessage<WorkerReport>(value, REPORT_SCHEMAS, "worker report");
}
