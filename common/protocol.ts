// The typed, versioned record of how a folder's numbers were made (sweep.json and config.json field `record`):
// the design (a `seeds` list on one base, or `bases` × seeds per base), each method's family and baseline, and
// the evaluation protocol (dataset and split, prompt template, sampling sent and left to server defaults, grader
// mode and version, per-answer timeout, n, ks). One module owns the schema; readers validate on read.
import { compileSchema, validate, ValidationError } from "./config.ts";
// The schema of sweep.json's `record` (config.json's and the protocol as definitions); imported, not read, so
// bundles such as the VERL grader carry it.
import SCHEMA from "./record.schema.json" with { type: "json" };

/**
 * The record version this acebench writes and reads: 2 holds sweep.json/eval.json as `{ config, record, … }`
 * (version 1 kept the config's fields beside `record`; common/run_folder.ts migrates it on read).
 */
export const RECORD_VERSION = 2;

/**
 * How answers were graded: `strict` reads only explicit answer markers (the training reward), `default` also
 * reads the lenient fallbacks (last number, prose), `none` grades no text (the tabular world knows correctness).
 */
export type GraderMode = "strict" | "default" | "none";

/** The evaluation protocol: everything besides the policy that changes a Pass@k figure. */
export interface EvalProtocol {
  /** Datasets evaluated (sorted), e.g. ["aime2025", "math500"]; "synthetic" for tfjs, "tabular" for the world. */
  datasets: string[];
  /** The split evaluated ("test"). */
  split: string;
  /** Prompt template name ("boxed", "dapo-answer", "raw", "compact" for tfjs' own; "file:<hash>" for a file). */
  template: string;
  /** Sampling parameters sent (`sent`) and the ones left to the sampler's defaults (`serverDefaults`, names). */
  sampling: { sent: Record<string, unknown>; serverDefaults: string[] };
  /** Grader mode, version (a hash of its rule tables; null when mode is none) and per-answer timeout (ms; null: none). */
  grader: { mode: GraderMode; version: string | null; timeoutMs: number | null };
  /** Samples per problem and the k values of Pass@k. */
  n: number;
  ks: number[];
}

/**
 * How a protocol's grader grades: `strict` for `grade`, and the per-answer timeout (ms; null: none). Mode "none"
 * grades no text, so asking for it throws, naming `source`.
 */
export function graderOptions(protocol: EvalProtocol, source: string) {
  const { mode, timeoutMs } = protocol.grader;
  if (mode === "none") {
    throw new Error(`${source}: record.protocol.grader.mode is "none": this protocol grades no text`);
  }
  return { strict: mode === "strict", timeoutMs };
}

/** How the runs of a method are spread: seeds on one shared base, or bases × seeds per base. */
export type Design =
  | { kind: "seeds"; seeds: number[] }
  | { kind: "bases"; bases: number; seedsPerBase: number };

/** The design of a sweep config (`seeds`, or `bases` × `seedsPerBase`): `bases` when given, else `seeds`. */
export function designOf(s: { seeds?: number[]; bases?: number; seedsPerBase?: number }): Design {
  return s.bases !== undefined
    ? { kind: "bases", bases: s.bases, seedsPerBase: s.seedsPerBase ?? 1 }
    : { kind: "seeds", seeds: s.seeds ?? [] };
}

/** The design in words, as the dry run and the report's provenance print it ("design: …"). */
export function describeDesign(d: Design): string {
  if (d.kind === "seeds") {
    return `design: seeds on one shared base model: seeds ${d.seeds.join(", ") || "none recorded"}`;
  }
  const { bases, seedsPerBase: per } = d;
  return `design: bases × seeds per base: ${bases} base model(s) (bases 0–${bases - 1}) × ${per} seed(s) ` +
    `per base (RL seeds 0–${per - 1} within each base), ${bases * per} run(s) per method`;
}

/** A method as resolved: its family (from its algorithm config, never from its name) and its baseline method. */
export interface MethodRecord {
  name: string;
  preset: string;
  /** "ace" when the resolved algorithm has ACE on, else "standard". */
  family: "ace" | "standard";
  /** The method an ACE method is compared with (same algorithm with ACE off); null when none. */
  baseline: string | null;
}

/** sweep.json's `record`. */
export interface SweepRecord {
  version: 2;
  design: Design;
  methods: MethodRecord[];
  protocol: EvalProtocol;
}

/** The JSON Schema of `EvalProtocol` (reports/schemas/summary.schema.json embeds the same, checked by a test). */
export const PROTOCOL_SCHEMA: object = SCHEMA.definitions.protocol;

/** A run's config.json `record`: its method (family, baseline) and the protocol it was evaluated under. */
export type RunRecord = Pick<SweepRecord, "version" | "protocol"> & { method: MethodRecord };

const validator = compileSchema(SCHEMA);
const runValidator = compileSchema({ ...SCHEMA.definitions.runRecord, definitions: SCHEMA.definitions });

/** A run's record from its sweep's: its method's entry and the protocol (null when the method is not listed). */
export function runRecordFrom(sweep: SweepRecord, method: string): RunRecord | null {
  const entry = sweep.methods.find((m) => m.name === method);
  return entry ? { version: RECORD_VERSION, method: entry, protocol: sweep.protocol } : null;
}

/**
 * A file's `record` value, validated with `check`; a field that does not match throws a ValidationError naming
 * `source` and the field, e.g. `runs/x/sweep.json: record: protocol.grader.mode: must be equal to one of …`.
 */
function recordIn<T>(record: unknown, source: string, check: typeof validator): T {
  const version = (record as { version?: unknown } | null)?.version;
  if (version !== RECORD_VERSION) {
    throw new ValidationError(
      `${source}: record.version: ${JSON.stringify(version)} is not the version this acebench reads ` +
        `(${RECORD_VERSION}); use the acebench that wrote it, or re-run the sweep/eval into a new folder`,
    );
  }
  return validate<T>(check, structuredClone(record), `${source}: record`);
}

/** A run's config.json `record`, validated (see `recordIn`). */
export function runRecordOf(record: unknown, source: string): RunRecord {
  return recordIn<RunRecord>(record, source, runValidator);
}

/** A sweep.json or eval.json `record`, validated (see `recordIn`). */
export function sweepRecordOf(record: unknown, source: string): SweepRecord {
  return recordIn<SweepRecord>(record, source, validator);
}

/** The one-line hint for a folder without a record (written before record v1): how to get one. */
export const MIGRATE_HINT =
  "written before the evaluation-protocol record (v1); re-run the same `deno task sweep` or " +
  "`deno task eval` command into a new --out (finished samples are not reused across folders), or pass " +
  "--allow-protocol-change to compare anyway";

/** Dotted paths of the protocol fields that differ between x and y ([] when equal), e.g. ["grader.mode"]. */
function protocolDiff(x: unknown, y: unknown, path = ""): string[] {
  const plain = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (!plain(x) || !plain(y)) return JSON.stringify(x) === JSON.stringify(y) ? [] : [path];
  const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
  return keys.flatMap((k) => protocolDiff(x[k], y[k], path ? `${path}.${k}` : k));
}

/** Each grader mode as a reader should see it. */
const MODE_TEXT: Record<GraderMode, string> = {
  strict: "strict (explicit answer markers only, as the training reward)",
  default: "default (lenient: also last-number and prose fallbacks)",
  none: "none (correctness known exactly, no text graded)",
};

/** Markdown bullet lines stating a protocol, grader mode first (summary.md, eval reports, comparison tables). */
export function describeProtocol(p: EvalProtocol): string[] {
  const sent = Object.entries(p.sampling.sent).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(", ");
  const version = p.grader.version ? `, version \`${p.grader.version}\`` : "";
  const timeout = p.grader.timeoutMs === null
    ? "no per-answer timeout"
    : `${p.grader.timeoutMs} ms per answer`;
  const defaults = p.sampling.serverDefaults.join(", ") || "none";
  return [
    `- grader: ${MODE_TEXT[p.grader.mode]}${version}, ${timeout}`,
    `- data: ${p.datasets.join(", ")}, split: ${p.split}; prompt template \`${p.template}\`; n = ${p.n}, ` +
    `k = ${p.ks.join(", ")}`,
    `- sampling sent: ${sent || "none"}; left to the sampler's defaults: ${defaults}`,
  ];
}

/** One side of a comparison: its label (a folder or file) and its protocol (null: not recorded). */
export type ProtocolSide = { label: string; protocol: EvalProtocol | null };

/** Each leaf field of a protocol as [dotted path, JSON text], grader first. */
function leaves(p: EvalProtocol): [string, string][] {
  const { grader, sampling, ...rest } = p;
  const of = (o: object, prefix: string) =>
    Object.entries(o).map(([k, v]): [string, string] => [prefix + k, JSON.stringify(v)]);
  return [...of(grader, "grader."), ...of(rest, ""), ...of(sampling, "sampling.")];
}

/** A Markdown table of two protocols side by side (a differing field marked ≠; "not recorded" for null). */
export function protocolTable(a: ProtocolSide, b: ProtocolSide): string[] {
  const known = a.protocol ?? b.protocol;
  if (!known) return ["Evaluation protocol: not recorded in either (" + MIGRATE_HINT + ")."];
  const fields = leaves(known).map(([f]) => f);
  const value = (p: EvalProtocol | null, f: string) => p ? new Map(leaves(p)).get(f) ?? "–" : "not recorded";
  return [
    `| protocol field | A | B | |`,
    `|---|---|---|---|`,
    ...fields.map((f) => {
      const [x, y] = [value(a.protocol, f), value(b.protocol, f)];
      return `| ${f} | \`${x}\` | \`${y}\` | ${x === y ? "" : "≠"} |`;
    }),
  ];
}

/**
 * Refuse to compare numbers made under different protocols: a ValidationError (exit 2) naming the first
 * differing field and both values, unless `allow` (then a warning line is returned). A side without a record
 * gives a note line saying how to get one, not a refusal (its protocol is unknown, not known to differ).
 */
export function checkSameProtocol(a: ProtocolSide, b: ProtocolSide, allow: boolean): string[] {
  if (!a.protocol || !b.protocol) {
    return [a, b].filter((s) => !s.protocol).map((s) => `${s.label}: evaluation protocol ${MIGRATE_HINT}`);
  }
  const diff = protocolDiff(a.protocol, b.protocol);
  if (diff.length === 0) return [];
  const field = diff[0];
  const step = (v: unknown, k: string) => (v as Record<string, unknown> | undefined)?.[k];
  const at = (p: EvalProtocol) => JSON.stringify(field.split(".").reduce(step, p)) ?? "absent";
  const what = `evaluation protocol differs: ${field} is ${at(a.protocol)} in ${a.label} but ` +
    `${at(b.protocol)} in ${b.label}${diff.length > 1 ? ` (also ${diff.slice(1).join(", ")})` : ""}`;
  if (!allow) {
    throw new ValidationError(
      `${what}; the numbers are not comparable (pass --allow-protocol-change to compare anyway)`,
    );
  }
  return [`warning: ${what} (--allow-protocol-change)`];
}
