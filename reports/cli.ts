// `deno task report DIR` and `deno task report --compare A B`.
import { atomicWrite } from "../common/fs.ts";
import { parseFlags, parseNumber, UsageError } from "../common/args.ts";
import { compareSweeps, writeReport } from "./report.ts";
import { engineIngest } from "./ingest.ts";

/** Usage text for `deno task report`. */
export const usage = `usage: deno task report DIR [--iters N]
       deno task report --compare A B [--out FILE] [--iters N]

Writes DIR/passk.csv (long format), DIR/summary.md (the Pass@k table over seeds, ACE minus baseline with
paired-bootstrap intervals, per-subject/level breakdowns, reproducibility) and DIR/plots/*.svg.
DIR is a sweep folder (runs/<runId>/eval.jsonl), or a folder written by \`deno task eval\`.
--compare A B   compare two sweeps method by method (B − A, paired bootstrap); prints Markdown or writes --out
--iters N       bootstrap resamples (default 2000)

example: deno task report runs/default`;

/** Entry point for `deno task report`. */
export async function main(args: string[]): Promise<number> {
  const parsed = parseFlags(args, {
    compare: { type: "boolean" },
    out: { type: "string" },
    iters: { type: "string" },
  });
  const values = parsed.values as { help?: boolean; compare?: boolean; out?: string; iters?: string };
  const positionals = parsed.positionals;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const iters = parseNumber(values.iters, "iters", 2000, 100, 1e6);
  const ingest = engineIngest();
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
  const written = await writeReport(positionals[0], { iters, ingest });
  for (const path of written) console.error(`wrote ${path}`);
  return 0;
}
