// Every command's --help lists exactly the flags of its table, in the table's order: the usage text is made from
// the table (common/args.ts flagLines), so a flag added to one and not the other fails here.
import { assertEquals, ok } from "./assert.ts";
import { type FlagTable, parseTable, UsageError } from "../common/args.ts";

/** Each command's module (by its `deno task` name): its flag table and its usage text. */
const modules: Record<string, () => Promise<{ FLAGS: FlagTable; usage: string }>> = {
  fetch: () => import("../datasets/cli.ts"),
  sweep: () => import("../commands/sweep.ts"),
  eval: () => import("../commands/eval.ts"),
  serve: () => import("../bench/engines/tfjs/serve_cli.ts"),
  grade: () => import("../evaluators/cli.ts"),
  report: () => import("../reports/cli.ts"),
  findings: () => import("../reports/findings.ts"),
  power: () => import("../reports/power.ts"),
  regress: () => import("../reports/regress.ts"),
  "bench grader": () => import("../bench/perf/grader.ts"),
  "bench datasets": () => import("../bench/perf/datasets.ts"),
  "bench model": () => import("../bench/perf/model.ts"),
  "bench engine": () => import("../bench/perf/engine.ts"),
  "bench tabular": () => import("../bench/perf/tabular.ts"),
};

for (const [name, load] of Object.entries(modules)) {
  Deno.test(`cli help: ${name} --help lists exactly its flag table`, async () => {
    const { FLAGS, usage } = await load();
    const listed = [...usage.matchAll(/^ {2}--([a-z0-9-]+)/gm)].map((m) => m[1]);
    assertEquals(listed, Object.keys(FLAGS));
    for (const [flag, f] of Object.entries(FLAGS)) {
      const line = usage.split("\n").find((l) => l.startsWith(`  --${flag}`))!;
      ok(line.includes(f.help.split(" ")[0]), `--${flag}'s line carries its help: ${line}`);
    }
  });

  Deno.test(`cli flags: ${name}: a bad value of each typed flag is one error naming the flag`, async () => {
    const { FLAGS } = await load();
    for (const [flag, f] of Object.entries(FLAGS)) {
      const bad = f.type === "number" || f.type === "list" ? "x" : f.choices ? "no-such-choice" : null;
      if (bad === null) continue;
      try {
        parseTable([`--${flag}`, bad], FLAGS, true);
        ok(false, `--${flag} ${bad} was accepted`);
      } catch (e) {
        ok(e instanceof UsageError && e.message.startsWith(`--${flag}: `), `--${flag} ${bad}: ${e}`);
        ok(!e.message.includes("\n"), e.message);
      }
    }
  });
}
