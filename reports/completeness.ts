// Incomplete data, named: runs that never finished, eval.jsonl files missing or cut mid-write, problems with
// fewer samples than configured, problems missing, or a missing final evaluation. Every cell such a run feeds
// is marked in the summary, and `report` exits non-zero unless --partial.
import { verdictOf } from "../evaluators/mod.ts";
import type { RunData, SweepData } from "./load.ts";

const NEVER_STARTED = "never started (no run folder)";

/** One defect of one run; `dataset`/`step` narrow the cells it touches (absent: every cell of the method). */
export interface DataIssue {
  runId: string;
  method: string;
  dataset?: string;
  step?: number;
  message: string;
  /** Set for ungraded answers (grader timeout or internal error): how many, out of how many answers. */
  ungraded?: { count: number; total: number };
}

/** Default `report --max-ungraded`: the share of ungraded answers above which a report is an error. */
export const MAX_UNGRADED = 0.001;

/**
 * The issues that make `report` (and a sweep's report) fail without --partial: every issue except ungraded
 * answers, and those too when their share of all `answers` the report counts exceeds `maxUngraded`. Also
 * returns that share.
 */
export function blockingIssues(issues: readonly DataIssue[], answers: number, maxUngraded = MAX_UNGRADED) {
  const count = issues.reduce((t, i) => t + (i.ungraded?.count ?? 0), 0);
  const share = answers > 0 ? count / answers : 0;
  return { blocking: issues.filter((i) => !i.ungraded || share > maxUngraded), ungradedShare: share };
}

/** Per "dataset\0step": samples per problem, and the ungraded answers by status (timeout, error). */
function cellCounts(run: RunData) {
  const out = new Map<string, { byProblem: Map<string, number>; byStatus: Map<string, number> }>();
  const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
  for (const s of run.samples) {
    const key = `${s.dataset}\u0000${s.step}`;
    const entry = out.get(key) ?? { byProblem: new Map(), byStatus: new Map() };
    bump(entry.byProblem, s.problemId);
    if (verdictOf(s.status) === "ungraded") bump(entry.byStatus, s.status);
    out.set(key, entry);
  }
  return out;
}

/** Issues of the finished runs' samples: torn/missing eval.jsonl, sample counts, missing problems and steps. */
function sampleIssues(run: RunData, union: Map<string, Set<string>>): DataIssue[] {
  const issues: DataIssue[] = [];
  const at = (message: string, dataset?: string, step?: number) =>
    issues.push({ runId: run.runId, method: run.method, dataset, step, message });
  if (run.evalFile === "missing") return [{ runId: run.runId, method: run.method, message: "no eval.jsonl" }];
  if (run.evalFile === "torn") at("eval.jsonl ends in a line cut mid-write (ignored)");
  const indexes = new Set(run.samples.map((s) => JSON.stringify([s.step, s.dataset, s.problemId, s.sample])));
  const duplicates = run.samples.length - indexes.size;
  if (duplicates > 0) {
    at(
      `${duplicates} duplicate samples (same step, dataset, problem and index: two writers?); rerun with --repair`,
    );
  }
  // what the engine's ingest knew was lost (problems absent from every run stay invisible to the counts below)
  for (const lost of run.lostSamples ?? []) at(lost.message, lost.dataset, lost.step);
  const counts = cellCounts(run);
  for (const [key, { byProblem }] of counts) {
    const [dataset, stepText] = key.split("\u0000");
    const step = Number(stepText);
    const protocol = dataset.includes("@") ? dataset.slice(dataset.lastIndexOf("@") + 1) : null;
    const n = protocol !== null ? run.expected.protocolN?.[protocol] : run.expected.n;
    const values = [...byProblem.values()];
    const short = values.filter((c) => n !== undefined && c < n);
    const over = values.filter((c) => n !== undefined && c > n);
    if (short.length) {
      at(
        `${short.length} problem(s) with fewer than n = ${n} samples (fewest ${Math.min(...short)})`,
        dataset,
        step,
      );
    }
    if (over.length) at(`${over.length} problem(s) with more than n = ${n} samples`, dataset, step);
    const expected = union.get(key)?.size ?? 0;
    if (byProblem.size < expected) at(`evaluated ${byProblem.size} of ${expected} problems`, dataset, step);
  }
  for (const [key, { byProblem, byStatus }] of counts) {
    const count = [...byStatus.values()].reduce((a, b) => a + b, 0);
    const total = [...byProblem.values()].reduce((a, b) => a + b, 0);
    if (count === 0) continue;
    const [dataset, stepText] = key.split("\u0000");
    const why = [...byStatus].map(([status, c]) => `${c} ${status}`).join(", ");
    issues.push({
      runId: run.runId,
      method: run.method,
      dataset,
      step: Number(stepText),
      message: `${count} of ${total} answers ungraded (${why}: unknown, counted as not correct in Pass@k)`,
      ungraded: { count, total },
    });
  }
  const steps = run.samples.map((s) => s.step);
  const last = steps.length ? Math.max(...steps) : -1;
  if (run.expected.steps !== undefined && last < run.expected.steps) {
    const datasets = [...new Set(run.samples.map((s) => s.dataset))];
    const message = `no evaluation at the final step ${run.expected.steps} (last: ${
      last < 0 ? "none" : last
    })`;
    if (datasets.length === 0) at(message);
    for (const dataset of datasets) at(message, dataset, run.expected.steps);
  }
  return issues;
}

/** Every defect of a loaded sweep; an empty list means the data are complete. */
export function dataIssues(data: SweepData): DataIssue[] {
  const issues: DataIssue[] = [];
  const planned = data.folder?.runIds ?? [];
  const present = new Set(data.runs.map((r) => r.runId));
  for (const id of planned.filter((id) => !present.has(id))) {
    issues.push({ runId: id, method: methodOf(id, data), message: NEVER_STARTED });
  }
  const samples = Map.groupBy(data.runs.flatMap((r) => r.samples), (s) => `${s.dataset}\u0000${s.step}`);
  const union = new Map([...samples].map(([key, list]) => [key, new Set(list.map((s) => s.problemId))]));
  for (const run of data.runs) {
    if (run.state === "failed" || run.state === "running") {
      const why = run.state === "failed" ? `failed${run.reason ? ` (${run.reason})` : ""}` : "not finished";
      issues.push({ runId: run.runId, method: run.method, message: why });
    } else issues.push(...sampleIssues(run, union));
  }
  return issues;
}

/** The method of a planned run id that has no folder: the longest method name the id starts with. */
function methodOf(runId: string, data: SweepData): string {
  const names = (data.folder?.record?.methods ?? []).map((m) => m.name);
  const known = [...new Set([...names, ...data.runs.map((r) => r.method)])];
  return known.filter((m) => runId.startsWith(`${m}_`)).sort((a, b) => b.length - a.length)[0] ?? runId;
}

/** True when an issue touches the cells of `method` on `dataset` at `step`. */
export function touches(issue: DataIssue, method: string, dataset: string, step: number): boolean {
  return issue.method === method && (issue.dataset === undefined || issue.dataset === dataset) &&
    (issue.step === undefined || issue.step === step);
}

/**
 * The issues as printable lines, one per issue (`line` formats it), except that planned runs with no folder (a
 * subset run with --only, or a sweep stopped early) fold into one line: "N runs not in this selection …".
 */
export function issueLines(issues: readonly DataIssue[], line: (i: DataIssue) => string): string[] {
  const absent = issues.filter((i) => i.message === NEVER_STARTED).map((i) => i.runId);
  const rest = issues.filter((i) => i.message !== NEVER_STARTED).map(line);
  if (absent.length === 0) return rest;
  const shown = absent.slice(0, 3).join(", ") + (absent.length > 3 ? ", …" : "");
  return [
    `${absent.length} run${
      absent.length === 1 ? "" : "s"
    } not in this selection (planned, no run folder: ${shown})`,
    ...rest,
  ];
}
