// `deno task regress --baseline FILE --current DIR [--update]`.
import { exists } from "../common/fs.ts";
import { bool, flagLines, type FlagTable, num, parseTable, str, UsageError } from "../common/args.ts";
import { checkSameProtocol } from "../common/protocol.ts";
import {
  baselineOf,
  compareToBaseline,
  describeRegressions,
  readBaseline,
  writeBaseline,
} from "./regress.ts";

/** The flags of `deno task regress`, declared once for parsing, --help and validation. */
export const FLAGS = {
  baseline: str("FILE", "the committed baseline (required)"),
  current: str("DIR", "the sweep folder to check (required)"),
  update: bool(
    "write DIR's cells as the new baseline FILE instead of checking (an explicit, reviewed change)",
  ),
  iters: num("bootstrap resamples of the per-run intervals", { default: 2000, min: 100, max: 1e6 }),
  "allow-config-change": bool(
    "compare even though DIR's config hash differs from the baseline's (otherwise exit 2)",
  ),
  "allow-protocol-change": bool(
    "compare even though DIR's evaluation protocol (grader mode and version, datasets, template, " +
      "sampling, n, ks) differs from the baseline's (otherwise exit 2, naming the field); a baseline written " +
      "before protocols were recorded gets a note, not a refusal",
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task regress`. */
export const usage = `usage: deno task regress --baseline FILE --current DIR [flags]

Compares the final Pass@k (mean over runs and problems) of every method/dataset/k in sweep folder DIR with a
committed baseline and exits 1 when a cell's drop is significant: a one-sided t test per cell over the noise a
re-run on the same problems has (both sweeps' base and residual terms; Satterthwaite degrees of freedom),
Holm-adjusted over all cells so that two re-runs differing only in seeds fail at most 5% of the time. Each
regressed cell is named. Incomplete current data also fail.

${flagLines(FLAGS)}

example: deno task regress --baseline reports/baselines/ci-tabular.json --current runs/ci-tabular`;

/** Entry point for `deno task regress`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  if (!values.baseline || !values.current) {
    throw new UsageError("--baseline FILE and --current DIR are required");
  }
  const current = await baselineOf(values.current, { iters: values.iters });
  if (current.issues.length) {
    console.error(`regress: ${values.current} has incomplete data:`);
    for (const i of current.issues) console.error(`  ${i.runId}: ${i.message}`);
    return 1;
  }
  if (values.update) {
    writeBaseline(values.baseline, current);
    console.log(`regress: wrote ${current.cells.length} cells from ${values.current} to ${values.baseline}`);
    return 0;
  }
  if (!exists(values.baseline)) {
    throw new UsageError(`--baseline: ${values.baseline} does not exist (create it with --update)`);
  }
  const baseline = readBaseline(values.baseline);
  const notes = checkSameProtocol(
    { label: values.baseline, protocol: baseline.protocol ?? null },
    { label: values.current, protocol: current.protocol ?? null },
    values["allow-protocol-change"],
  );
  for (const note of notes) console.error(`regress: ${note}`);
  if (baseline.configHash && current.configHash && baseline.configHash !== current.configHash) {
    const what =
      `config hash ${current.configHash} of ${values.current} differs from ${baseline.configHash} of ` +
      `${values.baseline}`;
    if (!values["allow-config-change"]) {
      throw new UsageError(
        `${what}: the sweeps are not comparable; pass --allow-config-change to compare anyway, or --update`,
      );
    }
    console.error(`regress: warning: ${what} (--allow-config-change)`);
  }
  const verdicts = compareToBaseline(baseline, current);
  const regressed = describeRegressions(verdicts);
  if (regressed.length === 0) {
    console.log(
      `regress: ok: no significant drop in ${verdicts.length} Pass@k cells (Holm, 5% family-wise) against ${values.baseline}`,
    );
    return 0;
  }
  console.error(
    `regress: ${regressed.length} of ${verdicts.length} Pass@k cells regressed against ${values.baseline}:`,
  );
  for (const line of regressed) console.error(`  ${line}`);
  return 1;
}
