import { join } from "node:path";
import { assertEquals, ok } from "../assert.ts";
import { baselineOf, compareToBaseline, describeRegressions } from "../../reports/mod.ts";
import { main as regressMain } from "../../reports/regress_cli.ts";
import { readJson, readJsonl } from "../../common/fs.ts";
import { copyFixture, fixture } from "./fixture.ts";

/** Plant a drop: every synthetic sample of ace-grpo seed 1 at the final step becomes wrong. */
function plantDrop(dir: string): void {
  const path = join(dir, "runs/ace-grpo_s1/eval.jsonl");
  const lines = readJsonl<{ step: number; dataset: string; correct: boolean; status: string }>(path).map((
    s,
  ) => s.step === 4 && s.dataset === "synthetic" ? { ...s, correct: false, status: "wrong" } : s);
  Deno.writeTextFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

Deno.test("regress: identical input passes; --update writes the baseline explicitly", async () => {
  const dir = copyFixture();
  const baseline = join(dir, "baseline.json");
  assertEquals(
    await regressMain(["--update", "--baseline", baseline, "--current", fixture, "--iters", "300"]),
    0,
  );
  const written = readJson<{ version: number; configHash: string; cells: unknown[] }>(baseline);
  assertEquals(written.version, 1);
  assertEquals(written.cells.length, 2 * 2 * 2 * 4, "methods × seeds × datasets × ks");
  assertEquals(await regressMain(["--baseline", baseline, "--current", fixture, "--iters", "300"]), 0);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("regress: a planted drop fails and names the regressed cells", async () => {
  const base = await baselineOf(fixture, { iters: 300 });
  const dir = copyFixture();
  plantDrop(dir);
  const current = await baselineOf(dir, { iters: 300 });
  const verdicts = compareToBaseline(base, current);
  const lines = describeRegressions(verdicts);
  ok(lines.length >= 1, "the drop is caught");
  ok(lines.every((l) => l.startsWith("ace-grpo seed 1 synthetic Pass@")), lines.join("\n"));
  ok(verdicts.filter((v) => v.method === "grpo").every((v) => !v.regressed), "untouched runs pass");
  const baselinePath = join(dir, "baseline.json");
  Deno.writeTextFileSync(baselinePath, JSON.stringify(base));
  assertEquals(await regressMain(["--baseline", baselinePath, "--current", dir, "--iters", "300"]), 1);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("regress: a drop within the intervals passes; a missing cell fails", () => {
  const cell = { method: "m", dataset: "d", seed: 0, k: 1, mean: 0.5, lo: 0.4, hi: 0.6 };
  const base = { version: 1 as const, sweep: "s", configHash: "h", cells: [cell, { ...cell, k: 2 }] };
  const current = { ...base, cells: [{ ...cell, mean: 0.37, lo: 0.3 }] };
  const verdicts = compareToBaseline(base, current);
  // The drop 0.13 exceeds the allowed √(0.1² + 0.07²) ≈ 0.122; a drop of 0.11 would not.
  assertEquals(verdicts[0].regressed, true);
  assertEquals(
    compareToBaseline(base, { ...base, cells: [{ ...cell, mean: 0.39, lo: 0.3 }] })[0].regressed,
    false,
  );
  assertEquals(verdicts[1].current, null);
  ok(describeRegressions(verdicts)[1].includes("missing from the current sweep"));
});
