// `deno task report DIR` and `deno task report --compare A B`.
import { atomicWrite } from "../common/fs.ts";
import { parseFlags, parseNumber, UsageError } from "../common/args.ts";
import { compareSweeps, writeReportChecked } from "./report.ts";
import { engineIngest } from "./ingest.ts";
import { readReferences, sameDataset } from "./references.ts";

/** Usage text for `deno task report`. */
export const usage = `usage: deno task report DIR [--partial] [--iters N] [--reference FILE]
       deno task report --compare A B [--out FILE] [--iters N]

Writes DIR/passk.csv (long format), DIR/summary.md (the Pass@k table over seeds with crossed seeds × problems
intervals, ACE minus baseline paired by seed and problem, the minimum detectable difference, incomplete data,
per-subject/level breakdowns, reproducibility) and DIR/plots/*.svg.
DIR is a sweep folder (runs/<runId>/eval.jsonl), or a folder written by \`deno task eval\`.
Exits 1 when data are incomplete (a run failed or unfinished, eval.jsonl missing or cut, fewer samples than
configured, a missing final step); the report is still written, with the affected cells marked.
--partial       accept incomplete data (a sweep still running): exit 0, cells still marked
--compare A B   compare two sweeps method by method (B − A paired by seed and problem); Markdown or --out
--iters N       bootstrap resamples of the per-run intervals in passk.csv (default 2000)
--reference FILE  overlay published pass@k points (CSV: model, dataset, method, k, value, source, protocol;
                shipped: reports/references/*.csv) on the Pass@k plots of matching datasets, and list them in
                summary.md beside this report's values with the protocol differences (temperature, top_p,
                max_tokens, n, grader); may be given more than once

example: deno task report runs/default`;

/** Entry point for `deno task report`. */
export async function main(args: string[]): Promise<number> {
  const parsed = parseFlags(args, {
    compare: { type: "boolean" },
    partial: { type: "boolean" },
    out: { type: "string" },
    iters: { type: "string" },
    reference: { type: "string", multiple: true },
  });
  const values = parsed.values as {
    help?: boolean;
    compare?: boolean;
    partial?: boolean;
    out?: string;
    iters?: string;
    reference?: string[];
  };
  const positionals = parsed.positionals;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const iters = parseNumber(values.iters, "iters", 2000, 100, 1e6);
  const ingest = engineIngest();
  if (values.compare && values.reference) throw new UsageError("--reference is not for --compare");
  if (values.compare) {
    if (positionals.length !== 2) throw new UsageError("--compare needs two sweep folders: A B");
    const text = await compareSweeps(positionals[0], positionals[1], { iters, ingest });
    if (values.out) {
      atomicWrite(values.out, text);
      console.error(`wrote ${values.out}`);
    } else console.log(text);
    return 0;
  }
  if (values.out) throw new UsageError("--out is only for --compare (a report is written into DIR)");
  if (positionals.length !== 1) throw new UsageError("expected one sweep folder DIR");
  const references = (values.reference ?? []).flatMap((path) => readReferences(path));
  const { written, issues, datasets } = await writeReportChecked(positionals[0], {
    iters,
    ingest,
    references,
  });
  for (const path of values.reference ?? []) {
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
  for (const path of written) console.error(`wrote ${path}`);
  if (issues.length === 0) return 0;
  console.error(`report: ${positionals[0]} has incomplete data (${issues.length} issue(s), cells marked †):`);
  for (const i of issues) console.error(`  ${i.runId}: ${i.message}`);
  if (values.partial) return 0;
  console.error("report: exit 1; pass --partial to accept incomplete data");
  return 1;
}
