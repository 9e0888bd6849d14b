// `deno task findings`: re-render the results tables of docs/findings.md from docs/results/ (or --check them).
import { atomicWrite } from "../common/fs.ts";
import { parseFlags, UsageError } from "../common/args.ts";
import { drift, render } from "./findings.ts";

/** Usage text for `deno task findings`. */
export const usage = `usage: deno task findings [--check] [--doc FILE] [--results DIR]

Re-renders every table of FILE (default docs/findings.md) marked <!-- results:<folder>:<table>[:args] --> …
<!-- /results --> from the kept results in DIR/<folder>/ (default docs/results/; written by
deno task report SWEEP --keep DIR/<folder>). --check changes nothing and exits 1 naming every table whose
numbers differ from its files.`;

/** Entry point for `deno task findings`. */
export function main(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    check: { type: "boolean" },
    doc: { type: "string" },
    results: { type: "string" },
  });
  const v = values as { help?: boolean; check?: boolean; doc?: string; results?: string };
  if (v.help) {
    console.log(usage);
    return Promise.resolve(0);
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const doc = v.doc ?? "docs/findings.md", results = v.results ?? "docs/results";
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
