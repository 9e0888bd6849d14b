// `deno task findings`: re-render the results tables of docs/findings.md from docs/results/ (or --check them).
import { atomicWrite } from "../common/fs.ts";
import { bool, flagLines, type FlagTable, parseTable, str } from "../common/args.ts";
import { drift, render } from "./findings.ts";

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
