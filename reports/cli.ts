// `deno task report DIR` and `deno task report --compare A B`.
import { atomicWrite, exists } from "../common/fs.ts";
import { bool, flagLines, type FlagTable, num, parseTable, str, UsageError } from "../common/args.ts";
import { compareSweeps, writeReport } from "./report.ts";
import { blockingIssues, issueLines, MAX_UNGRADED } from "./completeness.ts";
import { lockFolder } from "../common/lock.ts";
import { ingestPending } from "./ingest.ts";
import { readReferences, sameDataset } from "./references.ts";
import { keepResults } from "./keep.ts";
import { loadSweep } from "./load.ts";

/** The flags of `deno task report`, declared once for parsing, --help and validation. */
export const FLAGS = {
  partial: bool(
    "accept incomplete data (a sweep still running): exit 0, cells still marked; with --ingest, also " +
      "ingest VERL dumps that lack samples (else refused), their cells marked †",
  ),
  "max-ungraded": num(
    "answers the grader could not grade (timeout after a retry, internal error) are named per run and " +
      "step and their cells marked †, counted as not correct; above this share of all answers the report " +
      "exits 1 unless --partial",
    { value: "F", default: MAX_UNGRADED, min: 0, max: 1 },
  ),
  ingest: bool(
    "first turn engine outputs not yet ingested (VERL validation dumps of jobs run by hand) into the " +
      "runs' eval.jsonl, metrics.jsonl and status.json, holding DIR's lock; without it a report never writes " +
      "into run folders and refuses a folder with such outputs",
  ),
  compare: bool(
    "A B: compare two sweeps method by method (B − A paired by base, seed and problem), or two evals " +
      "problem by problem (interval over problems); Markdown or " +
      "--out; their evaluation protocols (grader mode, version and timeout, datasets, template, sampling, n, " +
      "ks) are printed side by side, and a difference is refused (exit 2, naming the field)",
  ),
  out: str("FILE", "with --compare: write the comparison to FILE"),
  "allow-protocol-change": bool("with --compare: compare anyway when the protocols differ (a warning line)"),
  iters: num("bootstrap resamples of the per-run intervals in passk.csv", {
    default: 2000,
    min: 100,
    max: 1e6,
  }),
  keep: str(
    "OUT",
    "also copy the machine-readable files and plots into OUT with provenance.json (command, commit, " +
      "backend, machine, dates), so the results can be re-read and re-rendered (docs/results/, deno task findings)",
  ),
  command: str("TEXT", "with --keep: the command that ran the sweep, as typed"),
  note: str("TEXT", "with --keep: what was measured alongside, e.g. the load average"),
  reference: str(
    "FILE",
    "overlay published pass@k points (CSV: model, dataset, method, k, value, source, protocol; shipped: " +
      "reports/references/*.csv) on the Pass@k plots of matching datasets, and list them in summary.md beside " +
      "this report's values with the protocol differences (temperature, top_p, max_tokens, n, grader); " +
      "repeatable",
    { multiple: true },
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task report`. */
export const usage = `usage: deno task report DIR [--partial] [--iters N] [--ingest] [--reference FILE]
       deno task report --compare A B [--out FILE] [--iters N] [--allow-protocol-change]

Writes DIR/summary.md (Pass@k over runs with 95% intervals, ACE minus baseline paired by base, seed and
problem, the minimum detectable difference, incomplete data, breakdowns), the same numbers in DIR/summary.json,
cells.csv, differences.csv and passk.csv, and DIR/plots/*.svg (docs/sweeps-reports.md says what each holds).
DIR is a sweep folder (runs/<runId>/eval.jsonl), or a folder written by \`deno task eval\`.
Exits 1 when data are incomplete (a run failed or unfinished, eval.jsonl missing or cut, fewer samples than
configured, a missing final step); the report is still written, with the affected cells marked.

${flagLines(FLAGS)}

example: deno task report runs/default`;

/** Entry point for `deno task report`. */
export async function main(args: string[]): Promise<number> {
  const { values, positionals } = parseTable(args, FLAGS, true);
  const { iters } = values, maxUngraded = values["max-ungraded"];
  if (values.compare && values.reference.length) throw new UsageError("--reference is not for --compare");
  if (values.compare) {
    if (values.ingest) throw new UsageError("--ingest is for one sweep folder, not --compare");
    if (positionals.length !== 2) throw new UsageError("--compare needs two sweep folders: A B");
    const allowProtocolChange = values["allow-protocol-change"];
    const text = await compareSweeps(positionals[0], positionals[1], { iters, allowProtocolChange });
    if (values.out) {
      atomicWrite(values.out, text);
      console.error(`wrote ${values.out}`);
    } else console.log(text);
    return 0;
  }
  if (values.out) throw new UsageError("--out is only for --compare (a report is written into DIR)");
  if (values["allow-protocol-change"]) throw new UsageError("--allow-protocol-change is only for --compare");
  if (positionals.length !== 1) throw new UsageError("expected one sweep folder DIR");
  if (values.ingest) await ingest(positionals[0], values.partial);

  const references = values.reference.flatMap((path) => readReferences(path));
  const { written, issues, datasets, answers } = await writeReport(positionals[0], {
    iters,
    references,
  });
  for (const path of values.reference) {
    const unmatched = [...new Set(readReferences(path).map((r) => r.dataset))].filter((d) =>
      !datasets.some((x) => sameDataset(d, x))
    );
    if (unmatched.length) {
      console.error(
        `report: ${path}: dataset(s) ${unmatched.join(", ")} match no dataset of this report (${
          datasets.join(", ")
        })`,
      );
    }
  }
  if (values.keep) {
    const data = loadSweep(positionals[0]);
    written.push(...keepResults(data, values.keep, {
      command: values.command,
      note: values.note,
      backend: data.resolvedBackend,
    }));
  } else if (values.command || values.note) throw new UsageError("--command and --note are for --keep");
  for (const path of written) console.error(`wrote ${path}`);
  if (issues.length === 0) return 0;
  console.error(`report: ${positionals[0]} has incomplete data (${issues.length} issue(s), cells marked †):`);
  for (const line of issueLines(issues, (i) => `${i.runId}: ${i.message}`)) console.error(`  ${line}`);
  const { blocking, ungradedShare } = blockingIssues(issues, answers, maxUngraded);
  if (ungradedShare > 0) {
    console.error(
      `report: ${(100 * ungradedShare).toFixed(3)}% of answers ungraded (limit ${
        100 * maxUngraded
      }%, --max-ungraded)`,
    );
  }
  if (values.partial || blocking.length === 0) return 0;
  console.error("report: exit 1; pass --partial to accept incomplete data");
  return 1;
}

/** `--ingest`: the engines' ingest of every pending run, as the folder's one writer (`partial`: keep short dumps). */
async function ingest(dir: string, partial: boolean): Promise<void> {
  if (!exists(dir)) throw new Error(`${dir}: no such folder`);
  const lock = lockFolder(dir, { command: `deno task report ${dir} --ingest` });
  try {
    const done = await ingestPending(dir, { partial });
    console.error(`report: ingested ${done.length} run(s)${done.length ? `: ${done.join(", ")}` : ""}`);
  } finally {
    lock.release();
  }
}
