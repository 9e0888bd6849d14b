// summary.md: the paper table (methods × Pass@k, mean over seeds with 95% intervals), ACE minus baseline with
// paired-bootstrap intervals and one sentence each, per-subject/level breakdowns, and a reproducibility block.
import { join } from "node:path";
import { type Comparison, comparisonSentence } from "./compare.ts";
import type { SweepData } from "./load.ts";
import { type AggregateCell, sliceOrder } from "./passk.ts";

/** Everything the summary prints, computed by `buildReport`. */
export interface SummaryInput {
  data: SweepData;
  /** Methods in display order. */
  methods: string[];
  /** Seed-aggregated cells at each method's final step. */
  cells: AggregateCell[];
  comparisons: Comparison[];
}

/** Row label of the policy before RL (the step-0 evaluation engines write, e.g. the tfjs SFT base model). */
export const BEFORE_RL = "step 0 (before RL)";

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(3);

function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
}

function passKTable(cells: AggregateCell[], methods: string[]): string[] {
  const ks = [...new Set(cells.map((c) => c.k))].sort((a, b) => a - b);
  const rows = methods.filter((m) => cells.some((c) => c.method === m)).map((m) => [
    m,
    ...ks.map((k) => {
      const c = cells.find((c) => c.method === m && c.k === k);
      return c ? `${f3(c.mean)} [${f3(c.lo)}, ${f3(c.hi)}]` : "–";
    }),
  ]);
  return table(["method", ...ks.map((k) => `Pass@${k}`)], rows);
}

function intervalNote(cells: AggregateCell[]): string {
  const seeds = [...new Set(cells.map((c) => c.seeds))].sort((a, b) => a - b);
  const steps = [...new Set(cells.filter((c) => c.method !== BEFORE_RL).map((c) => c.step))].sort((a, b) =>
    a - b
  );
  const problems = Math.max(...cells.map((c) => c.problems));
  const n = Math.min(...cells.map((c) => c.n));
  const how = cells.every((c) => c.interval === "seeds")
    ? "95% Student-t interval across seeds, clipped to [0, 1]"
    : cells.every((c) => c.interval === "problems")
    ? "one seed: 95% bootstrap interval over problems"
    : "95% t-interval across seeds, clipped to [0, 1]; bootstrap over problems where a method has one seed";
  return `Mean over ${seeds.join("/")} seed(s) at step ${
    steps.join("/")
  } (${how}); ${problems} problems, n = ${n} samples each.`;
}

function diffTable(comparisons: Comparison[]): string[] {
  const ks = [...new Set(comparisons.flatMap((c) => c.cells.map((d) => d.k)))].sort((a, b) => a - b);
  const rows = comparisons.map((c) => [
    `${c.b} − ${c.a}`,
    ...ks.map((k) => {
      const d = c.cells.find((d) => d.k === k);
      return d ? `${signed(d.mean)} [${signed(d.lo)}, ${signed(d.hi)}]` : "–";
    }),
  ]);
  return table(["comparison", ...ks.map((k) => `ΔPass@${k}`)], rows);
}

function sliceTable(cells: AggregateCell[], methods: string[]): string[] {
  const slices = [...new Set(cells.map((c) => c.slice))].filter((s) => s !== "all").sort(sliceOrder);
  const kMax = Math.max(...cells.map((c) => c.k));
  const shown = methods.filter((m) => cells.some((c) => c.method === m));
  const rows = slices.map((slice) => [
    slice.replace("=", " "),
    ...shown.map((m) => {
      const at = (k: number) => cells.find((c) => c.method === m && c.slice === slice && c.k === k);
      const p1 = at(1), pm = at(kMax);
      return p1 && pm ? `${f3(p1.mean)} / ${f3(pm.mean)}` : "–";
    }),
  ]);
  return table(["slice", ...shown.map((m) => `${m} (Pass@1 / Pass@${kMax})`)], rows);
}

function reproducibility(data: SweepData): string[] {
  const s = data.sweep;
  if (!s) return ["No sweep.json in this folder: these runs come from `deno task eval` or another tool."];
  const versions = (s.versions ?? {}) as Record<string, unknown>;
  const machine = (s.machine ?? {}) as Record<string, unknown>;
  const methods = (s.methods as { name: string; preset: string }[] | undefined ?? [])
    .map((m) => `${m.name} (${m.preset})`).join(", ");
  const kv = (o: Record<string, unknown>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(", ");
  if (s.kind === "eval") {
    return [
      `- evaluation of \`${s.model}\` on \`${s.dataset}\` at ${s.endpoint}, config hash \`${s.configHash}\``,
      `- sampling: \`${JSON.stringify(s.sampling)}\`; template \`${
        (s.template as { name?: string })?.name
      }\``,
      `- versions: ${kv(versions)}`,
      `- machine: ${kv(machine)}`,
      `- reproduce: \`${s.command ?? "deno task eval …"}\``,
    ];
  }
  return [
    `- sweep: \`${s.name}\`, engine \`${s.engine}\`, config hash \`${s.configHash}\``,
    `- methods: ${methods}`,
    `- seeds: ${(s.seeds as number[] | undefined ?? []).join(", ")}; RL steps: ${
      (s.rl as { steps?: number } | undefined)?.steps
    }; eval n = ${(s.eval as { n?: number } | undefined)?.n}`,
    `- grid: ${s.grid ? `\`${JSON.stringify(s.grid)}\`` : "none"}`,
    `- backend: ${s.backend ?? "n/a"}${data.resolvedBackend ? ` (resolved: ${data.resolvedBackend})` : ""}`,
    `- versions: ${kv(versions)}`,
    `- machine: ${kv(machine)}`,
    `- reproduce: \`deno task sweep --config ${
      join(data.dir, "sweep.json")
    } --out NEW_DIR\` (the recorded fields are`,
    `  ignored; the config hash must match), then \`deno task report NEW_DIR\`.`,
  ];
}

/** The full summary.md text. Deterministic for the same inputs (no timestamps), so it can be golden-tested. */
export function renderSummary(input: SummaryInput): string {
  const { data, methods, cells, comparisons } = input;
  const name = (data.sweep?.name as string | undefined) ?? data.dir.split("/").pop();
  const lines = [`# Pass@k summary: ${name}`, ""];
  const datasets = [...new Set(cells.map((c) => c.dataset))].sort();
  for (const dataset of datasets) {
    const all = cells.filter((c) => c.dataset === dataset && c.slice === "all");
    lines.push(`## ${dataset}`, "", intervalNote(all), "", ...passKTable(all, methods), "");
    const diffs = comparisons.filter((c) => c.dataset === dataset);
    if (diffs.length) {
      lines.push(
        "ACE minus its baseline (per-problem pass@k averaged over seeds; 95% paired bootstrap over problems):",
        "",
        ...diffTable(diffs),
        "",
        ...diffs.map((c) => `- ${comparisonSentence(c)}`),
        "",
      );
    }
    const sliced = cells.filter((c) => c.dataset === dataset && c.slice !== "all");
    if (sliced.length) {
      lines.push(`### ${dataset} by subject and level`, "", ...sliceTable(sliced, methods), "");
    }
  }
  const excluded = data.runs.filter((r) => r.state === "failed" || r.state === "running");
  if (excluded.length) {
    lines.push("## Runs left out", "");
    for (const r of excluded) lines.push(`- \`${r.runId}\`: ${r.state}${r.reason ? ` (${r.reason})` : ""}`);
    lines.push("");
  }
  lines.push("## Reproducibility", "", ...reproducibility(data), "");
  return lines.join("\n");
}
