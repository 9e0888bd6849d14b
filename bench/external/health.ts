// The run-health block of an external evaluation: what was kept, cut off, failed, spent and retried, counted
// over this run's problems (--limit) and sample indices (--n) only, never the whole samples file.
import { percentileSorted as percentile } from "../../evaluators/stats.ts";
import { type FailedProblem, type NSplit, splitCause } from "./sampler.ts";
import type { SampleRecord } from "./samples.ts";

/** Health of one dataset's evaluation. */
export interface RunHealth {
  dataset: string;
  problems: number;
  n: number;
  /** Samples on disk within scope (problem selected, index < n). */
  samplesKept: number;
  /** Of those, cut off by max_tokens (finish_reason "length"). */
  truncated: number;
  /** Problems that reached Pass@k (all n samples, and with --exclude-truncated at least one kept). */
  scored: number;
  excludeTruncated: boolean;
  failed: FailedProblem[];
  /** Requests behind the kept samples, each counted once. */
  requests: number;
  promptTokens: number;
  /**
   * Completion tokens of each request times the share of its samples within scope; for a request whose usage
   * covers its first choice only (llama.cpp, n > 1), that choice's tokens when it is in scope.
   */
  completionTokens: number;
  /** "per choice" when every request's usage covers all its choices, else "as reported by the server". */
  usageCounted: "per choice" | "as reported by the server";
  /** Samples whose completion tokens are in `completionTokens` (all kept samples when counted per choice). */
  samplesWithUsage: number;
  /** The distinct n per request behind the kept samples, ascending. */
  requestSizes: number[];
  /** Set when this run split its requests because the server refused or ignored n. */
  nSplit: NSplit | null;
  latencyMs: { p50: number; p95: number; p99: number } | null;
  /** Failed attempts before the kept requests succeeded, by cause ("HTTP 503", "timeout", …). */
  retries: number;
  retryCauses: Record<string, number>;
}

/** The class of a retry reason, for counting: "HTTP 503", "timeout", "dropped connection", "malformed reply". */
export function retryCause(reason: string): string {
  const http = reason.match(/^HTTP (\d{3})/);
  if (http) return `HTTP ${http[1]}`;
  if (reason.startsWith("no reply within")) return "timeout";
  if (reason.startsWith("connection dropped")) return "dropped connection";
  if (reason.startsWith("malformed")) return "malformed reply";
  return "network error";
}

/** What the caller knows of the run (`scored` from grading, `failed` and `nSplit` from sampling), kept as given. */
type Given = Pick<RunHealth, "dataset" | "n" | "scored" | "failed" | "excludeTruncated" | "nSplit">;

/**
 * Health over `problemIds` × sample indices 0..n-1 of the samples on disk. Records without `retry_reasons`
 * (older files) count their retries as "unrecorded".
 */
export function runHealth(
  given: Given,
  problemIds: readonly string[],
  onDisk: ReadonlyMap<string, ReadonlyMap<number, SampleRecord>>,
): RunHealth {
  const n = given.n;
  const inScope = problemIds.flatMap((id) =>
    [...onDisk.get(id) ?? []].filter(([i]) => i < n).map(([, s]) => s)
  );
  const requests = Map.groupBy(inScope, (s) => s.request);
  let promptTokens = 0, completionTokens = 0, retries = 0, samplesWithUsage = 0, partial = false;
  const retryCauses: Record<string, number> = {};
  for (const [id, kept] of requests) {
    const first = kept[0];
    promptTokens += first.usage?.prompt_tokens ?? 0;
    if (first.usage_scope === "first_choice") {
      // The tokens are those of the request's first choice, the sample named in its id "problem#first".
      partial = true;
      const firstSample = Number(id.slice(id.lastIndexOf("#") + 1));
      const own = onDisk.get(first.problemId)?.get(firstSample);
      if (own !== undefined && firstSample < n && own.request === id) {
        completionTokens += first.usage?.completion_tokens ?? 0;
        samplesWithUsage++;
      }
    } else {
      completionTokens += (first.usage?.completion_tokens ?? 0) * kept.length / Math.max(1, first.request_n);
      samplesWithUsage += kept.length;
    }
    const extra = Math.max(0, (first.attempts ?? 1) - 1);
    retries += extra;
    const causes = first.retry_reasons?.map(retryCause) ?? Array(extra).fill("unrecorded");
    for (const cause of causes) retryCauses[cause] = (retryCauses[cause] ?? 0) + 1;
  }
  const lat = [...requests.values()].map((r) => r[0].latency_ms).sort((a, b) => a - b);
  return {
    ...given,
    problems: problemIds.length,
    samplesKept: inScope.length,
    truncated: inScope.filter((s) => s.finish_reason === "length").length,
    requests: requests.size,
    promptTokens,
    completionTokens: Math.round(completionTokens),
    usageCounted: partial ? "as reported by the server" : "per choice",
    samplesWithUsage,
    requestSizes: [...new Set([...requests.values()].map((r) => r[0].request_n))].sort((a, b) => a - b),
    latencyMs: lat.length
      ? { p50: percentile(lat, 0.5), p95: percentile(lat, 0.95), p99: percentile(lat, 0.99) }
      : null,
    retries,
    retryCauses,
  };
}

const pct = (part: number, whole: number) => whole ? `${(100 * part / whole).toFixed(1)}%` : "-";

/** The n per request behind the kept samples, and why it was lowered when this run lowered it. */
function nPerRequest(h: RunHealth): string {
  const sizes = h.requestSizes.length ? h.requestSizes.join(", ") : "-";
  const s = h.nSplit;
  return s === null ? sizes : `${sizes}: requests split to n = ${s.perRequest}, ${splitCause(s)}`;
}

/** Prompt / completion tokens, said to be the server's own figures when they leave choices out. */
function tokensText(h: RunHealth): string {
  const base = `${h.promptTokens} / ${h.completionTokens}`;
  if (h.usageCounted === "per choice") return base;
  return `${base} as reported by the server: with n > 1 it reports one choice's tokens per request ` +
    `(llama.cpp), so the completion tokens cover ${h.samplesWithUsage} of ${h.samplesKept} samples`;
}

/** The Markdown block for summary.md: a two-column table, then the failed problems with their reasons. */
export function renderHealth(h: RunHealth): string {
  const causes = Object.entries(h.retryCauses).sort((a, b) => b[1] - a[1]).map(([c, k]) => `${c}: ${k}`);
  const leftOut = h.problems - h.scored;
  const rows: [string, string][] = [
    ["samples kept", `${h.samplesKept} of ${h.problems * h.n} (${h.problems} problems × n ${h.n})`],
    [
      "truncated (finish_reason length)",
      `${h.truncated} (${pct(h.truncated, h.samplesKept)})` +
      (h.excludeTruncated ? ", excluded from Pass@k (--exclude-truncated)" : ", graded as they are"),
    ],
    ["failed problems", `${h.failed.length}`],
    [
      "Pass@k computed over",
      `${h.scored} of ${h.problems} problems` + (leftOut ? ` (${leftOut} left out)` : ""),
    ],
    ["requests", `${h.requests}`],
    ["n per request", nPerRequest(h)],
    ["prompt / completion tokens", tokensText(h)],
    [
      "latency p50 / p95 / p99",
      h.latencyMs ? `${h.latencyMs.p50} / ${h.latencyMs.p95} / ${h.latencyMs.p99} ms` : "-",
    ],
    ["retries", h.retries ? `${h.retries} (${causes.join(", ")})` : "0"],
  ];
  const lines = [
    `## Run health: ${h.dataset}`,
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v.replaceAll("|", "\\|")} |`),
  ];
  if (h.failed.length) {
    lines.push("", "Failed problems (re-running the same command requests only these):", "");
    for (const f of h.failed) lines.push(`- \`${f.problemId}\`: ${f.error}`);
  }
  return lines.join("\n") + "\n";
}
