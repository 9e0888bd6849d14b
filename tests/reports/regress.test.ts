import { join } from "node:path";
import { assertEquals, ok, rejects } from "../assert.ts";
import { UsageError } from "../../common/args.ts";
import { ValidationError } from "../../common/config.ts";
import {
  type Baseline,
  baselineOf,
  compareToBaseline,
  describeRegressions,
  readBaseline,
} from "../../reports/mod.ts";
import { main as regressMain } from "../../reports/regress.ts";
import { readJson, readJsonl } from "../../common/fs.ts";
import { copyFixture, fixture } from "./fixture.ts";

/** Plant a drop: every synthetic sample of ace-grpo (both seeds) at the final step becomes wrong. */
function plantDrop(dir: string): void {
  for (const run of ["ace-grpo_s1", "ace-grpo_s2"]) {
    const path = join(dir, "runs", run, "eval.jsonl");
    const lines = readJsonl<{ step: number; dataset: string; correct: boolean; status: string }>(path).map((
      s,
    ) => s.step === 4 && s.dataset === "synthetic" ? { ...s, correct: false, status: "wrong" } : s);
    Deno.writeTextFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  }
}

Deno.test("regress: identical input passes; --update writes the baseline explicitly", async () => {
  const dir = copyFixture();
  const baseline = join(dir, "baseline.json");
  assertEquals(
    await regressMain(["--update", "--baseline", baseline, "--current", fixture, "--iters", "300"]),
    0,
  );
  const written = readJson<{ version: number; configHash: string; cells: unknown[] }>(baseline);
  assertEquals(written.version, 2);
  assertEquals(written.cells.length, 2 * 2 * 4, "methods × datasets × ks (means over seeds)");
  assertEquals(await regressMain(["--baseline", baseline, "--current", fixture, "--iters", "300"]), 0);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("regress: a baseline of another config is refused (exit 2) unless --allow-config-change", async () => {
  const dir = copyFixture();
  const baseline = join(dir, "baseline.json");
  assertEquals(
    await regressMain(["--update", "--baseline", baseline, "--current", fixture, "--iters", "300"]),
    0,
  );
  const written = readJson<Baseline>(baseline);
  Deno.writeTextFileSync(baseline, JSON.stringify({ ...written, configHash: "0123456789ab" }));
  const args = ["--baseline", baseline, "--current", fixture, "--iters", "300"];
  await rejects(
    regressMain(args),
    (e: Error) =>
      e instanceof UsageError &&
      e.message.includes(`differs from 0123456789ab of ${baseline}`) &&
      e.message.includes("--allow-config-change"),
  );
  assertEquals(await regressMain([...args, "--allow-config-change"]), 0);
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
  ok(lines.every((l) => l.startsWith("ace-grpo synthetic Pass@")), lines.join("\n"));
  ok(verdicts.filter((v) => v.method === "grpo").every((v) => !v.regressed), "untouched runs pass");
  const baselinePath = join(dir, "baseline.json");
  Deno.writeTextFileSync(baselinePath, JSON.stringify(base));
  assertEquals(await regressMain(["--baseline", baselinePath, "--current", dir, "--iters", "300"]), 1);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("regress: a drop within the Holm-adjusted one-sided allowance passes; a missing cell fails", () => {
  const cell = {
    method: "m",
    dataset: "d",
    k: 1,
    mean: 0.5,
    lo: 0.4,
    hi: 0.6,
    noise: [{ variance: 0.02 ** 2, df: 7 }],
    seeds: 8,
    problems: 100,
  };
  const base = { version: 2 as const, sweep: "s", configHash: "h", cells: [cell, { ...cell, k: 2 }] };
  // The missing k = 2 is rejected first (level α/2); k = 1 is then tested at α = 0.05: se = √2 · 0.02, ν = 14
  // (Satterthwaite over two terms of 7 df), allowed = t(.95, 14) · se = 1.76131 · 0.028284 ≈ 0.0498.
  const at = (mean: number) => compareToBaseline(base, { ...base, cells: [{ ...cell, mean }] });
  assertEquals(at(0.449)[0].regressed, true);
  assertEquals(at(0.451)[0].regressed, false);
  ok(Math.abs(at(0.451)[0].allowed - 1.761310 * Math.SQRT2 * 0.02) < 1e-5, `${at(0.451)[0].allowed}`);
  assertEquals([at(0.451)[0].level, at(0.451)[1].level], [0.05, 0.025]);
  assertEquals(at(0.451)[1].current, null);
  ok(describeRegressions(at(0.451))[0].includes("missing from the current sweep"));
});

Deno.test("regress: Holm controls the family; the same drop in one cell of twelve needs more than in one of one", () => {
  const cell = (k: number, mean: number) => ({
    method: "m",
    dataset: "d",
    k,
    mean,
    lo: 0,
    hi: 1,
    noise: [{ variance: 0.01 ** 2, df: 1000 }],
    seeds: 8,
    problems: 100,
  });
  const family = (n: number, drop: number) => {
    const base = {
      version: 2 as const,
      sweep: "s",
      configHash: "h",
      cells: [...Array(n)].map((_, k) => cell(k, 0.5)),
    };
    const current = { ...base, cells: base.cells.map((c, i) => i === 0 ? { ...c, mean: c.mean - drop } : c) };
    return compareToBaseline(base, current)[0].regressed;
  };
  // se = 0.01·√2 = 0.01414: one cell fails above 1.645 se = 0.0233; one of twelve needs z(1 − 0.05/12) = 2.64 se.
  assertEquals([family(1, 0.03), family(12, 0.03), family(12, 0.04)], [true, false, true]);
});

/** A committed baseline with every cell's mean moved by `delta` (the current sweep is the committed one). */
function shifted(name: string, delta: number): { base: Baseline; current: Baseline } {
  const current = readBaseline(new URL(`../../reports/baselines/${name}.json`, import.meta.url).pathname);
  return { base: { ...current, cells: current.cells.map((c) => ({ ...c, mean: c.mean + delta })) }, current };
}

for (const [name, drop] of [["ci-tabular", 0.03], ["ci-tfjs", 0.05]] as const) {
  Deno.test(`regress: the committed ${name} baseline catches a uniform drop of ${drop} and accepts a rise`, () => {
    // Raising the baseline by `drop` is the current sweep falling by `drop` everywhere.
    const fell = compareToBaseline(shifted(name, drop).base, shifted(name, drop).current);
    const caught = fell.filter((v) => v.regressed).length;
    ok(caught >= fell.length / 2, `${name}: only ${caught} of ${fell.length} cells flag a ${drop} drop`);
    const rose = compareToBaseline(shifted(name, -drop).base, shifted(name, -drop).current);
    assertEquals(rose.filter((v) => v.regressed).length, 0, `${name}: a rise of ${drop} must pass`);
  });
}

Deno.test("regress: a baseline graded under another protocol is refused (exit 2, naming the field) unless allowed", async () => {
  const dir = copyFixture();
  try {
    const sweepPath = join(dir, "sweep.json");
    const sweep = readJson<Record<string, unknown>>(sweepPath);
    const protocol = {
      datasets: ["synthetic"],
      split: "test",
      template: "none",
      sampling: { sent: {}, serverDefaults: [] },
      grader: { mode: "strict", version: "abc", timeoutMs: 2000 },
      n: 8,
      ks: [1, 2, 4, 8],
    };
    const withMode = (mode: string) => ({
      ...sweep,
      record: {
        version: 1,
        design: { kind: "seeds", seeds: [1, 2] },
        methods: [],
        protocol: { ...protocol, grader: { ...protocol.grader, mode } },
      },
    });
    Deno.writeTextFileSync(sweepPath, JSON.stringify(withMode("strict")));
    const baseline = join(dir, "baseline.json");
    const args = ["--baseline", baseline, "--current", dir, "--iters", "300"];
    assertEquals(await regressMain(["--update", ...args.slice(0, 4), "--iters", "300"]), 0);
    assertEquals(readJson<Baseline>(baseline).protocol?.grader.mode, "strict");
    assertEquals(await regressMain(args), 0);
    Deno.writeTextFileSync(sweepPath, JSON.stringify(withMode("default")));
    await rejects(
      regressMain(args),
      (e: Error) =>
        e instanceof ValidationError && e.message.includes('grader.mode is "strict" in') &&
        e.message.includes("--allow-protocol-change"),
    );
    assertEquals(await regressMain([...args, "--allow-protocol-change"]), 0);
    // A baseline written before protocols were recorded is compared, with a note (unknown is not different).
    const { protocol: _p, ...old } = readJson<Baseline>(baseline);
    Deno.writeTextFileSync(baseline, JSON.stringify(old));
    assertEquals(await regressMain(args), 0);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
