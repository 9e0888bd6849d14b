// `deno task bench tabular`: time the 5-seed grpo vs ace-grpo tabular sweep and print its pass@k table.
import { join } from "node:path";
import { bool, flagLines, type FlagTable, num, parseTable, str, UsageError } from "../../common/args.ts";
import { readJsonl } from "../../common/fs.ts";
import { readEvalSamples } from "../../common/run_folder.ts";
import { passAtK } from "../../evaluators/passk.ts";
import { seedAggregate } from "../../evaluators/stats.ts";
import { designUnits, expandRuns, presetPath, readSweepConfig, runSweep } from "../sweep/mod.ts";
import { exactKs } from "../engines/tabular/backend.ts";
import { tabularEngine } from "../engines/tabular/engine.ts";

/** The flags of `deno task bench tabular`, declared once for parsing, --help and validation. */
export const FLAGS = {
  config: str("FILE", "a tabular sweep config (default bench/configs/tabular.json)"),
  out: str("DIR", "keep the run folders here (default: a temporary folder)"),
  workers: num("parallel runs (default: the sweep runner's)", { min: 1, max: 64 }),
  keep: bool("keep the temporary run folders"),
} as const satisfies FlagTable;

/** Usage text for `deno task bench tabular`. */
export const usage = `usage: deno task bench tabular [flags]

Times one tabular run in-process (steps/s), then the whole sweep (default: grpo vs ace-grpo, 5 seeds) through
the sweep runner, and prints pass@k (exact, and unbiased from the sampled evals) at step 0 and the final step:
mean [95% t-interval over seeds] per method and the paired difference to the first method.

${flagLines(FLAGS)}`;

type PassTable = { first: Map<number, number>; last: Map<number, number> };

/** Pass@k per run at step 0 and the final step: exact from exact.jsonl, unbiased from the sampled eval.jsonl. */
function finalPassAtK(runDir: string, ks: number[]): { exact: PassTable; sampled: PassTable } {
  const exactRows = readJsonl<{ step: number; k: number; passAtK: number }>(join(runDir, "exact.jsonl"));
  const last = Math.max(...exactRows.map((r) => r.step));
  const exactAt = (step: number) =>
    new Map(exactRows.filter((r) => r.step === step).map((r) => [r.k, r.passAtK]));
  const samples = readEvalSamples(runDir);
  const sampledAt = (step: number) => {
    const problems = [...Map.groupBy(samples.filter((r) => r.step === step), (r) => r.problemId).values()];
    const pass = (p: typeof samples, k: number) => passAtK(p.length, p.filter((r) => r.correct).length, k);
    return new Map(ks.map((k) => [k, problems.reduce((s, p) => s + pass(p, k), 0) / problems.length]));
  };
  return {
    exact: { first: exactAt(0), last: exactAt(last) },
    sampled: { first: sampledAt(0), last: sampledAt(last) },
  };
}

/** One pass@k table: reference (step 0), each method, and each method minus the first, paired by seed. */
function printTable(
  kind: "exact" | "sampled",
  ks: number[],
  methods: string[],
  results: Map<string, ReturnType<typeof finalPassAtK>[]>,
  seeds: number,
): void {
  const what = kind === "exact"
    ? "exact (with replacement)"
    : "unbiased estimate from eval.n samples per prompt";
  console.log(`\npass@k, ${what}; mean [95% t-interval over ${seeds} runs (base, seed)]`);
  const [base, ...others] = methods;
  const header = [
    "reference (step 0)",
    ...methods.map((m) => `${m} (final)`),
    ...others.map((m) => `${m} − ${base}`),
  ];
  const width = header.map((h) => Math.max(24, h.length));
  console.log(["k".padStart(4), ...header.map((h, i) => h.padEnd(width[i]))].join("  "));
  const at = (m: string, k: number, which: "first" | "last") =>
    results.get(m)!.map((p) => p[kind][which].get(k)!);
  for (const k of ks) {
    const cells = [
      seedAggregate(at(base, k, "first")),
      ...methods.map((m) => seedAggregate(at(m, k, "last"))),
      ...others.map((m) => seedAggregate(at(m, k, "last").map((v, i) => v - at(base, k, "last")[i]))),
    ];
    console.log([String(k).padStart(4), ...cells.map((c, i) => fmt(c).padEnd(width[i]))].join("  "));
  }
}

const fmt = (a: { mean: number; lo: number; hi: number }) =>
  `${a.mean.toFixed(3)} [${a.lo.toFixed(3)}, ${a.hi.toFixed(3)}]`;

/** Entry point for `deno task bench tabular`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  const sweep = readSweepConfig(values.config ?? presetPath("tabular"));
  if (sweep.engine !== "tabular") {
    throw new UsageError(`--config: engine is '${sweep.engine}'; expected tabular`);
  }
  const runs = expandRuns(sweep);
  const outDir = values.out ?? Deno.makeTempDirSync({ prefix: "acebench-tabular-" });

  const one = runs[0];
  const soloDir = Deno.makeTempDirSync({ prefix: "acebench-tabular-solo-" });
  const t1 = performance.now();
  await tabularEngine.run(tabularEngine.resolve(one), soloDir, soloDir, { onProgress() {} });
  const soloSeconds = (performance.now() - t1) / 1000;
  Deno.removeSync(soloDir, { recursive: true });

  const t0 = performance.now();
  const outcome = await runSweep(sweep, runs, { out: outDir, workers: values.workers });
  const seconds = (performance.now() - t0) / 1000;
  if (outcome.failed.length) throw new Error(`bench tabular: runs failed: ${JSON.stringify(outcome.failed)}`);
  const steps = sweep.rl.steps;
  console.log(
    `one run (${one.runId}, ${steps} steps, in-process): ${soloSeconds.toFixed(2)} s = ` +
      `${(steps / soloSeconds).toFixed(0)} steps/s including evaluation and run-folder writes`,
  );
  console.log(
    `sweep '${sweep.name}' (${runs.length} runs through the sweep runner's workers): ` +
      `${seconds.toFixed(2)} s wall`,
  );
  const ks = sweep.eval.ks;
  const methods = [...new Set(runs.map((r) => r.method))];
  const passAt = (m: string) =>
    runs.filter((r) => r.method === m).map((r) => finalPassAtK(join(outDir, "runs", r.runId), ks));
  const results = new Map(methods.map((m) => [m, passAt(m)]));
  const units = designUnits(sweep).length;
  printTable("exact", exactKs(ks), methods, results, units);
  printTable("sampled", ks, methods, results, units);
  if (!values.keep && !values.out) Deno.removeSync(outDir, { recursive: true });
  else console.log(`\nrun folders: ${outDir}`);
  return 0;
}
