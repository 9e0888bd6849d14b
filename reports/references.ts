// Published pass@k reference points (reports/references/*.csv): read and validated, matched to a report's
// datasets, overlaid on its Pass@k plot, and compared with the report's own numbers and sampling protocol.
import { fromCsv } from "../common/csv.ts";
import type { EvalFileConfig } from "../bench/external/mod.ts";
import type { Folder } from "./load.ts";
import type { AggregateCell } from "./passk.ts";
import { f3 } from "./format.ts";

/** One published pass@k value. */
export interface ReferenceRow {
  model: string;
  dataset: string;
  method: string;
  k: number;
  value: number;
  source: string;
  /** `;`-separated settings, `key=value` where stated (n, temperature, top_p, max_tokens, grader). */
  protocol: string;
}

/** Columns of a reference CSV, in order. */
const REFERENCE_COLUMNS = ["model", "dataset", "method", "k", "value", "source", "protocol"] as const;

/** Read a reference CSV; a missing column or a bad k/value throws naming the file, line and field. */
export function readReferences(path: string): ReferenceRow[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    throw new Error(`${path}: cannot read the reference file (${(e as Error).message})`);
  }
  const header = text.split("\n")[0].split(",").map((s) => s.trim());
  for (const column of REFERENCE_COLUMNS) {
    if (!header.includes(column)) throw new Error(`${path}:1: column '${column}' is missing`);
  }
  return fromCsv(text).map((r, i) => {
    const where = `${path}:${i + 2}`;
    const k = Number(r.k), value = Number(r.value);
    if (!Number.isInteger(k) || k < 1) throw new Error(`${where}: k is '${r.k}'; expected an integer ≥ 1`);
    if (!(value >= 0 && value <= 1)) {
      throw new Error(`${where}: value is '${r.value}'; expected pass@k in [0, 1]`);
    }
    for (const field of ["model", "dataset", "method", "source"] as const) {
      if (!r[field]) throw new Error(`${where}: ${field} is empty`);
    }
    const { model, dataset, method, source, protocol } = r;
    return { model, dataset, method, k, value, source, protocol };
  });
}

/** Whether two dataset names are the same set (case-insensitive, ignoring -, _ and spaces). */
export function sameDataset(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "");
  return norm(a) === norm(b);
}

/** The reference rows of one report dataset. */
export function referencesFor(rows: readonly ReferenceRow[], dataset: string): ReferenceRow[] {
  return rows.filter((r) => sameDataset(r.dataset, dataset));
}

/**
 * Plot overlays of one dataset: one series per (model, method, source), labelled e.g. "GRPO, Qwen (Zhu et al. 2025,
 * Table 1)", drawn as diamonds without a line (often only k = 1 and a large k are published).
 */
export function referenceCurves(rows: readonly ReferenceRow[], dataset: string) {
  const bySeries = Map.groupBy(
    referencesFor(rows, dataset),
    (r) => `${r.method}, ${r.model} (${r.source.split(",").slice(0, 2).join(",")})`,
  );
  return [...bySeries].map(([label, list]) => ({
    label,
    points: list.map((r) => ({ k: r.k, value: r.value })),
  }));
}

/** `key=value` settings of a protocol string; free text without `=` is ignored. */
function protocolSettings(protocol: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of protocol.split(";")) {
    const m = part.trim().match(/^([a-z_]+)\s*=\s*(.+)$/);
    if (m) out[m[1]] = m[2].trim();
  }
  return out;
}

/** The settings compared between a reference and a run, in print order. */
const PROTOCOL_KEYS = ["temperature", "top_p", "max_tokens", "n", "grader"] as const;

/**
 * Where a reference's protocol differs from the run's, one phrase per setting: "temperature 0.6 vs 1", or
 * "top_p not stated by the reference" / "… not recorded for this run". `run` holds the run's settings (an eval
 * folder's eval.json `sampling` plus its grader); equal settings are not listed.
 */
export function protocolDifferences(protocol: string, run: Record<string, string | number | undefined>) {
  const ref = protocolSettings(protocol);
  const out: string[] = [];
  for (const key of PROTOCOL_KEYS) {
    const a = ref[key], b = run[key];
    if (a === undefined) out.push(`${key} not stated by the reference`);
    else if (b === undefined) out.push(`${key} ${a} in the reference, not recorded for this run`);
    else if (String(Number(a)) === a && Number(a) !== Number(b)) out.push(`${key} ${a} vs ${b}`);
    else if (String(Number(a)) !== a && a !== String(b)) out.push(`${key} ${a} vs ${b}`);
  }
  return out;
}

/** The grader every acebench report uses (its verdicts are in eval.jsonl). */
const ACEBENCH_GRADER = "acebench";

/**
 * The summary section of one dataset: each reference value beside this report's value of every method at the
 * same k ("–" where the run has fewer samples than k), then where each source's protocol differs from the run's.
 * Empty when no reference matches the dataset.
 */
export function referenceSection(
  rows: readonly ReferenceRow[],
  cells: readonly AggregateCell[],
  dataset: string,
  run: Record<string, string | number | undefined>,
): string[] {
  const refs = referencesFor(rows, dataset);
  if (refs.length === 0) return [];
  const mine = cells.filter((c) => c.dataset === dataset && c.slice === "all");
  const methods = [...new Set(mine.map((c) => c.method))];
  const lines = [
    `### ${dataset}: published reference points`,
    "",
    `| reference | model | k | published | ${methods.map((m) => `${m} (this report)`).join(" | ")} |`,
    `|---|---|---:|---:|${methods.map(() => "---:").join("|")}|`,
    ...refs.map((r) => {
      const ours = methods.map((m) => {
        const c = mine.find((c) => c.method === m && c.k === r.k);
        return c ? f3(c.mean) : "–";
      });
      return `| ${r.method} (${r.source}) | ${r.model} | ${r.k} | ${f3(r.value)} | ${ours.join(" | ")} |`;
    }),
    "",
    `This report's protocol: ${
      Object.entries(run).filter(([k, v]) => k !== "subset" || v !== undefined)
        .map(([k, v]) => `${k} ${v ?? "not recorded"}`).join(", ")
    } (the grader with its mode: strict reads only answer markers, default also lenient fallbacks).`,
    "",
    "Protocol differences (the numbers are comparable only where the protocol matches):",
    "",
  ];
  for (const source of [...new Set(refs.map((r) => r.source))]) {
    const protocol = refs.find((r) => r.source === source)!.protocol;
    const diffs = protocolDifferences(protocol, run);
    // A --limit run is a sample of the problems the published number averages over: say so for every source.
    if (run.subset !== undefined) {
      diffs.unshift(`this report covers a subset (${run.subset}), the reference the full set`);
    }
    lines.push(
      `- ${source}: ${diffs.length ? diffs.join("; ") : "same temperature, top_p, max_tokens, n, grader"}.`,
    );
  }
  lines.push("");
  return lines;
}

/**
 * The run settings a reference is compared with: the sampling and n of the folder's recorded protocol, and
 * acebench's grader with its mode ("acebench strict", "acebench default"); the grader alone when not recorded.
 */
export function runProtocol(folder: Folder | null): Record<string, string | number | undefined> {
  const protocol = folder?.record?.protocol;
  const sent = (protocol?.sampling.sent ?? {}) as Record<string, number | undefined>;
  return {
    temperature: sent.temperature,
    top_p: sent.top_p,
    max_tokens: sent.max_tokens,
    n: protocol?.n ?? (folder?.kind === "sweep" ? folder.config.eval.n : undefined),
    grader: protocol ? `${ACEBENCH_GRADER} ${protocol.grader.mode}` : ACEBENCH_GRADER,
    subset: folder?.kind === "eval" ? subsetOf(folder.config) : undefined,
  };
}

/** "first 200 problems (--limit)" or "200 problems drawn with --subset-seed 3"; undefined for the full set. */
function subsetOf({ limit, subsetSeed }: EvalFileConfig): string | undefined {
  if (limit === null) return undefined;
  return subsetSeed !== null
    ? `${limit} problems drawn with --subset-seed ${subsetSeed}`
    : `first ${limit} problems, --limit ${limit}`;
}
