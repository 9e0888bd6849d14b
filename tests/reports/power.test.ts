import { assertEquals, ok } from "../assert.ts";
import { buildReport } from "../../reports/mod.ts";
import { main as powerMain, problemsNeeded, projectMdd, withinVariance } from "../../reports/power.ts";
import { fixture } from "./fixture.ts";

Deno.test("power: the projection for the sweep's own design is the summary's MDD", async () => {
  const report = await buildReport(fixture, { iters: 200 });
  ok(report.comparisons.length > 0);
  for (const c of report.comparisons) {
    for (const d of c.cells) {
      const own = { seeds: d.seeds, problems: d.problems, n: d.n };
      assertEquals(projectMdd(d, own), d.mdd, `${c.dataset} Pass@${d.k}`);
      ok(report.summary.includes(d.mdd.toFixed(3)), `summary prints MDD@${d.k} ${d.mdd.toFixed(3)}`);
    }
  }
});

Deno.test("power: more seeds, problems or samples shrink the MDD; a target gives the problems needed", async () => {
  const report = await buildReport(fixture, { iters: 200 });
  const d = report.comparisons.find((c) => c.dataset === "synthetic")!.cells.find((x) => x.k === 1)!;
  const at = (seeds: number, problems: number, n: number) => projectMdd(d, { seeds, problems, n });
  ok(at(4, 6, 8) < at(2, 6, 8) && at(2, 60, 8) < at(2, 6, 8) && at(2, 6, 64) < at(2, 6, 8));
  // Within-problem variance at k = 1 is p(1 − p)/n per side, made unbiased by n/(n − 1): it scales as 1/n.
  const ratio = withinVariance(d, 64) / withinVariance(d, 8);
  ok(Math.abs(ratio - 8 / 64) < 1e-12, `1/n scaling at k = 1: ${ratio}`);
  const need = problemsNeeded(d, 0.1, 8, 8);
  ok(need !== null && at(8, need, 8) <= 0.1 && at(8, need - 1, 8) > 0.1, `problems needed ${need}`);
});

Deno.test("power: the command prints components, the projection and the --target table", async () => {
  const lines: string[] = [];
  const log = console.log;
  console.log = (text: string) => lines.push(text);
  try {
    assertEquals(await powerMain([fixture, "--seeds", "8", "--problems", "200"]), 0);
    assertEquals(await powerMain([fixture, "--target", "0.05", "--try-seeds", "4,8"]), 0);
  } finally {
    console.log = log;
  }
  const text = lines.join("\n");
  ok(text.includes("σ²_seed") && text.includes("Projected MDD for 8 seeds × 200 problems × n 8"), text);
  ok(text.includes("Problems needed for MDD ≤ 0.05"), text);
});
