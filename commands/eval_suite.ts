// `deno task eval --suite NAME`: the standard table of a paper's evaluation in one command. Each dataset of the
// suite is a normal eval in OUT/<dataset>/ (resumable, with its own report), run one after another with the same
// flags; then OUT/suite.md and OUT/suite.csv put them side by side, a column per dataset.
import { join, resolve } from "node:path";
import { UsageError } from "../common/args.ts";
import { lockFolder } from "../common/lock.ts";
import { loadDataset } from "../datasets/mod.ts";
import { EndpointSetupError, type EvalOutcome, type EvalSettings } from "../bench/external/mod.ts";
import { type SuiteSet, writeSuiteReport } from "../reports/mod.ts";

/** The suites `--suite` knows: rlvr is the six math sets RLVR papers report (GSM8K is left to --dataset). */
export const SUITES: Record<string, readonly string[]> = {
  rlvr: ["math500", "aime2024", "aime2025", "amc2023", "minerva", "olympiadbench"],
};

/** What one eval of the suite returned: its exit code, and its outcome when sampling ran. */
export interface SuiteStep {
  code: number;
  outcome: EvalOutcome | null;
  settings: EvalSettings;
}

/** `args` without `--NAME VALUE` / `--NAME=VALUE`. */
function without(args: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) i++;
    else if (!args[i].startsWith(`--${name}=`)) out.push(args[i]);
  }
  return out;
}

/** A dataset's records from the cache (or `mirror`, a path); null when it is not fetched yet. */
export async function loadFetched(dataset: string, options: { cacheDir?: string; mirror?: string }) {
  try {
    return await loadDataset(dataset, {
      cacheDir: options.cacheDir,
      mirror: options.mirror && resolve(options.mirror),
    });
  } catch (e) {
    if (!/not in the cache/.test((e as Error).message)) throw e;
    return null;
  }
}

/** How to get `missing` datasets: the `deno task fetch` command (with --cache-dir when given), or --mirror. */
export function fetchHint(missing: readonly string[], cacheDir?: string): string {
  const flag = cacheDir ? ` --cache-dir ${cacheDir}` : "";
  return `run \`deno task fetch ${missing.join(" ")}${flag}\` or pass --mirror DIR (an offline copy of the ` +
    "source files, laid out as in deno task fetch --list)";
}

/** Check every dataset of the suite is fetched (or in --mirror) before the first request; one line names them all. */
async function preflight(datasets: readonly string[], options: { cacheDir?: string; mirror?: string }) {
  const missing: string[] = [];
  for (const d of datasets) if (!await loadFetched(d, options)) missing.push(d);
  if (missing.length) {
    throw new Error(
      `the suite needs ${missing.join(", ")}, not fetched yet: ${fetchHint(missing, options.cacheDir)}`,
    );
  }
}

/**
 * Run suite `name` with the eval flags in `args` (no --dataset; --out is the suite's folder), each dataset through
 * `evalOne` (eval's own path), then write the suite report. Exit code: 0, or the first non-zero of the datasets.
 */
export async function runSuite(
  name: string,
  args: readonly string[],
  options: { out: string; cacheDir?: string; mirror?: string },
  evalOne: (args: string[]) => Promise<SuiteStep>,
): Promise<number> {
  const datasets = SUITES[name];
  if (!datasets) {
    throw new UsageError(`--suite: unknown '${name}' (known: ${Object.keys(SUITES).join(", ")})`);
  }
  await preflight(datasets, options);
  const lock = lockFolder(options.out, { command: `deno task eval --suite ${name}`, flag: "out" });
  try {
    const base = without(without(args, "suite"), "out");
    const sets: SuiteSet[] = [];
    let code = 0;
    let last: EvalSettings | null = null;
    for (const dataset of datasets) {
      console.log(`acebench eval --suite ${name}: ${dataset} → ${join(options.out, dataset)}`);
      try {
        const step = await evalOne([...base, "--dataset", dataset, "--out", join(options.out, dataset)]);
        last = step.settings;
        if (step.code !== 0 && code === 0) code = step.code;
        sets.push(setOf(dataset, step));
      } catch (e) {
        // a bad flag, or an endpoint that cannot serve the model, is the same failure for every set
        if (e instanceof UsageError || e instanceof EndpointSetupError) throw e;
        const message = (e as Error).message.split("\n")[0];
        console.error(`acebench eval --suite ${name}: ${dataset}: ${message}`);
        code ||= 1;
        sets.push(failedSet(dataset, message));
      }
    }
    const written = writeSuiteReport(options.out, {
      suite: name,
      model: last?.model ?? "(no dataset ran)",
      n: last?.n ?? 0,
      ks: last?.ks ?? [],
      protocol: last ? protocolLine(last) : "No dataset of the suite ran; see the errors below.",
      sets,
    });
    console.log(`suite report: ${written.join(", ")}`);
    return code;
  } finally {
    lock.release();
  }
}

/** The suite column of a set that has no result, and why. */
function failedSet(dataset: string, error: string): SuiteSet {
  return { dataset, problems: 0, scored: 0, truncated: 0, rows: [], error };
}

/** A suite column from one eval's outcome. */
function setOf(dataset: string, step: SuiteStep): SuiteSet {
  const o = step.outcome;
  if (!o) return failedSet(dataset, `exit ${step.code}, no samples`);
  return {
    dataset,
    problems: o.health.problems,
    scored: o.health.scored,
    truncated: o.health.truncated,
    rows: o.rows,
    ...(o.health.scored === 0 ? { error: "every problem failed (see its status.json)" } : {}),
  };
}

/** One line of the protocol shared by every set: model, endpoint mode, sampling, template, grader, subset. */
function protocolLine(s: EvalSettings): string {
  const which = s.subsetSeed === null ? "first" : `seeded random (seed ${s.subsetSeed})`;
  const subset = s.limit === null
    ? "all problems of each set"
    : `the ${which} ${s.limit} problems of each set`;
  return `\`${s.model}\` (${s.mode}), n = ${s.n}, temperature ${s.temperature}, top_p ${s.topP}, max_tokens ` +
    `${s.maxTokens}, seed ${s.seed}, template ${s.template.name}, grader ${
      s.grader ?? "default"
    }; ${subset}.`;
}
