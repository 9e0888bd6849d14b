// `deno task findings`: the tables of a results document rendered from kept results (reports/keep.ts): a document
// marks each table with `<!-- results:<folder>:<table>[:<args>] -->` … `<!-- /results -->`, and `render` replaces
// the text between the markers with the table built from docs/results/<folder>/. So every number a findings page
// quotes comes from committed files, a command re-renders it, and `drift` (the test and `--check`) fails when a
// number in the page no longer matches its files.
import { join } from "node:path";
import { fromCsv } from "../common/csv.ts";
import { atomicWrite, exists } from "../common/fs.ts";
import { bool, flagLines, type FlagTable, parseTable, str } from "../common/args.ts";
import { readProvenance } from "./keep.ts";

type Row = Record<string, string>;

/** The rows of one kept CSV (throws naming the file when absent). */
function csv(folder: string, name: string): Row[] {
  const path = join(folder, name);
  if (!exists(path)) throw new Error(`${path}: no such kept file (deno task report DIR --keep ${folder})`);
  return fromCsv(Deno.readTextFileSync(path));
}

const num = (x: string) => (x === "" ? NaN : Number(x));
const pts = (x: string) => {
  const v = num(x);
  return Number.isFinite(v) ? `${v >= 0 ? "+" : "−"}${(100 * Math.abs(v)).toFixed(1)}` : "–";
};
const interval = (lo: string, hi: string) =>
  Number.isFinite(num(lo)) ? `[${pts(lo)}, ${pts(hi)}]` : "(no interval)";
const fixed = (x: string, d: number) => (Number.isFinite(num(x)) ? num(x).toFixed(d) : "–");

/** The calibration table: per preset and step size, Δ against step 0 (points), KL, entropy, errors with c > 0. */
function calibrationTable(folder: string): string[] {
  const rows = csv(folder, "calibration.csv");
  const k = rows[0]?.k_max ?? "k";
  return [
    `| method | lr | ΔPass@1 (points) | ΔPass@${k} (points) | KL | entropy | errors with c > 0 | their mean c | chosen |`,
    "|---|---:|---|---|---:|---:|---:|---:|---|",
    ...rows.map((r) =>
      `| ${r.preset} | ${r.lr} | ${pts(r.d_pass1)} ${interval(r.d_pass1_lo, r.d_pass1_hi)} | ${
        pts(r.d_passmax)
      } ${interval(r.d_passmax_lo, r.d_passmax_hi)} | ${fixed(r.kl, 4)} | ${fixed(r.entropy, 3)} | ${
        fixed(r.overconf_frac, 2)
      } | ${fixed(r.overconf_mean_c, 2)} | ${r.chosen === "true" ? "**chosen**" : ""} |`
    ),
  ];
}

/** The controls table of one dataset: claim, published size, measured Δ with interval and MDD, Holm outcome. */
function controlsTable(folder: string, dataset: string): string[] {
  const rows = csv(folder, "controls.csv").filter((r) => r.dataset === dataset);
  return [
    "| claim (source) | published b − a | k | Δ here (points) | 95% interval | MDD | outcome (Holm) |",
    "|---|---|---:|---:|---|---:|---|",
    ...rows.map((r) =>
      `| ${r.claim} (${r.source}) | ${
        r.published === "" ? "–" : `${pts(r.published)} (${r.published_where})`
      } | ${r.k} | ${pts(r.diff)} | ${interval(r.lo, r.hi)} | ${
        fixed(String(100 * num(r.mdd)), 1)
      } | ${r.outcome} |`
    ),
  ];
}

/** Final-step cells of one dataset at the given ks (and the step-0 row first): mean [interval] in points. */
function cellsTable(folder: string, dataset: string, ks: number[]): string[] {
  const rows = csv(folder, "cells.csv").filter((r) => r.dataset === dataset && r.slice === "all");
  const methods = [...new Set(rows.map((r) => r.method))];
  const last = (m: string) => Math.max(...rows.filter((r) => r.method === m).map((r) => num(r.step)));
  const cell = (m: string, k: number) => {
    const r = rows.find((x) => x.method === m && num(x.step) === last(m) && num(x.k) === k);
    return r
      ? `${(100 * num(r.pass_at_k)).toFixed(1)} ${interval(r.ci_lo, r.ci_hi).replaceAll("+", "")}`
      : "–";
  };
  return [
    `| method | ${ks.map((k) => `Pass@${k}`).join(" | ")} |`,
    `|---|${ks.map(() => "---:").join("|")}|`,
    ...methods.map((m) => `| ${m} | ${ks.map((k) => cell(m, k)).join(" | ")} |`),
  ];
}

/** Differences b − a of one dataset (every comparison whose b or a is `method`, or all) at the given ks. */
function differencesTable(folder: string, dataset: string, method: string, ks: number[]): string[] {
  const rows = csv(folder, "differences.csv").filter((r) =>
    r.dataset === dataset && (method === "*" || r.a === method || r.b === method)
  );
  const pairs = [...new Set(rows.map((r) => `${r.b}\u0000${r.a}`))];
  const at = (pair: string, k: number) => {
    const [b, a] = pair.split("\u0000");
    const r = rows.find((x) => x.b === b && x.a === a && num(x.k) === k);
    return r
      ? `${pts(r.diff)} ${interval(r.ci_lo, r.ci_hi)} (MDD ${fixed(String(100 * num(r.mdd)), 1)})`
      : "–";
  };
  return [
    `| difference | ${ks.map((k) => `Pass@${k} (points)`).join(" | ")} |`,
    `|---|${ks.map(() => "---").join("|")}|`,
    ...pairs.map((p) => `| ${p.split("\u0000").join(" − ")} | ${ks.map((k) => at(p, k)).join(" | ")} |`),
  ];
}

/** ACE's dose-response of one dataset: per variant and k, Δ against the baseline at each α and the slope. */
function doseTable(folder: string, dataset: string): string[] {
  const rows = csv(folder, "dose.csv").filter((r) => r.dataset === dataset);
  const alphas = [...new Set(rows.filter((r) => r.kind === "delta").map((r) => r.alpha))]
    .sort((a, b) => num(a) - num(b));
  const keys = [...new Set(rows.map((r) => `${r.variant}\u0000${r.k}`))];
  const at = (key: string, kind: string, alpha = "") => {
    const [variant, k] = key.split("\u0000");
    const r = rows.find((x) => x.variant === variant && x.k === k && x.kind === kind && x.alpha === alpha);
    return r ? `${pts(r.value)} ${interval(r.lo, r.hi)}` : "–";
  };
  return [
    `| variant | k | ${
      alphas.map((a) => `Δ at α = ${a} (points)`).join(" | ")
    } | slope per unit α (points) |`,
    `|---|---:|${alphas.map(() => "---").join("|")}|---|`,
    ...keys.map((key) => {
      const [variant, k] = key.split("\u0000");
      return `| ${variant} | ${k} | ${alphas.map((a) => at(key, "delta", a)).join(" | ")} | ${
        at(key, "slope")
      } |`;
    }),
  ];
}

/** Per method, the mean c of errors of each class over its last 10 logged steps (medians over runs). */
function errorsTable(folder: string): string[] {
  const rows = csv(folder, "training.csv");
  const classes = [...new Set(rows.map((r) => r.metric).filter((m) => /^err_.*_c$/.test(m)))].sort();
  const methods = [...new Set(rows.map((r) => r.method))];
  const late = (m: string, metric: string) => {
    const xs = rows.filter((r) => r.method === m && r.metric === metric)
      .sort((a, b) => num(a.step) - num(b.step)).slice(-10).map((r) => num(r.median));
    return xs.length ? (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2).replace("-", "−") : "–";
  };
  const label = (metric: string) => metric.replace(/^err_/, "").replace(/_c$/, "");
  return [
    `| method | ${classes.map((c) => `mean c of ${label(c)} errors (nats)`).join(" | ")} |`,
    `|---|${classes.map(() => "---:").join("|")}|`,
    ...methods.map((m) => `| ${m} | ${classes.map((c) => late(m, c)).join(" | ")} |`),
  ];
}

/** One line of provenance: the command, commit, dates and wall time, backend, machine note. */
function provenanceLine(folder: string): string[] {
  const p = readProvenance(folder);
  const wall = p.wallSeconds === null ? "" : `, ${(p.wallSeconds / 60).toFixed(1)} min of runs`;
  return [
    `\`${p.command}\` at commit ${p.commit?.slice(0, 7) ?? "unknown"} (${p.startedAt ?? "?"} to ${
      p.finishedAt ?? "?"
    }${wall}; backend ${p.backend ?? "unknown"}${p.note ? `; ${p.note}` : ""}).`,
  ];
}

/** The table a marker asks for, from `resultsDir/<folder>/`. */
function table(resultsDir: string, spec: string): string[] {
  const [folder, kind, ...args] = spec.split(":");
  const dir = join(resultsDir, folder);
  const ks = (s: string | undefined) => (s ?? "1").split(",").map(Number);
  if (kind === "calibration") return calibrationTable(dir);
  if (kind === "controls") return controlsTable(dir, args[0] ?? "synthetic");
  if (kind === "cells") return cellsTable(dir, args[0] ?? "synthetic", ks(args[1]));
  if (kind === "differences") {
    return differencesTable(dir, args[0] ?? "synthetic", args[1] ?? "*", ks(args[2]));
  }
  if (kind === "errors") return errorsTable(dir);
  if (kind === "dose") return doseTable(dir, args[0] ?? "synthetic");
  if (kind === "provenance") return provenanceLine(dir);
  throw new Error(`results marker '${spec}': unknown table '${kind}'`);
}

const MARKER = /<!-- results:([^ ]+) -->\n[\s\S]*?<!-- \/results -->/g;

/** `text` with every results block re-rendered from `resultsDir` (other text unchanged). */
export function render(text: string, resultsDir: string): string {
  return text.replace(
    MARKER,
    (_, spec: string) =>
      [`<!-- results:${spec} -->`, ...table(resultsDir, spec), "<!-- /results -->"].join("\n"),
  );
}

/** The markers whose block differs from its re-rendering (empty: the page matches its kept results). */
export function drift(text: string, resultsDir: string): string[] {
  const fresh = render(text, resultsDir);
  const blocks = (t: string) => [...t.matchAll(MARKER)].map((m) => [m[1], m[0]] as const);
  const now = new Map(blocks(fresh));
  return blocks(text).filter(([spec, block]) => now.get(spec) !== block).map(([spec]) => spec);
}

/** The flags of `deno task findings`, declared once for parsing, --help and validation. */
export const FLAGS = {
  check: bool("change nothing; exit 1 naming every table whose numbers differ from its files"),
  doc: str("FILE", "the document to re-render", { default: "docs/findings.md" }),
  results: str("DIR", "the kept results", { default: "docs/results" }),
} as const satisfies FlagTable;

/** Usage text for `deno task findings`. */
export const usage = `usage: deno task findings [flags]

Re-renders every table of FILE marked <!-- results:<folder>:<table>[:args] --> … <!-- /results --> from the kept
results in DIR/<folder>/ (written by deno task report SWEEP --keep DIR/<folder>).

${flagLines(FLAGS)}`;

/** Entry point for `deno task findings`. */
export function main(args: string[]): Promise<number> {
  const { values: v } = parseTable(args, FLAGS);
  const { doc, results } = v;
  const text = Deno.readTextFileSync(doc);
  if (v.check) {
    const stale = drift(text, results);
    for (const spec of stale) console.error(`findings: ${doc}: table ${spec} differs from ${results}`);
    return Promise.resolve(stale.length ? 1 : 0);
  }
  atomicWrite(doc, render(text, results));
  console.error(`wrote ${doc}`);
  return Promise.resolve(0);
}
