import { join } from "node:path";
import { assertEquals, ok, rejects } from "../assert.ts";
import {
  buildReport,
  compareSweeps,
  comparisonSentence,
  passKRows,
  reportedKs,
  type RunData,
  writeReport,
} from "../../reports/mod.ts";
import { fromCsv } from "../../common/csv.ts";
import { exists } from "../../common/fs.ts";
import { copyFixture, fixture } from "./fixture.ts";

const golden = new URL("./fixtures/golden/", import.meta.url).pathname;
const update = Deno.env.get("UPDATE_GOLDEN") === "1";

/** Compare with a golden file (regenerate with UPDATE_GOLDEN=1 after a deliberate format change). */
function assertGolden(actual: string, name: string) {
  const path = join(golden, name);
  if (update) Deno.writeTextFileSync(path, actual);
  assertEquals(
    actual,
    Deno.readTextFileSync(path),
    `${name} differs from its golden file (UPDATE_GOLDEN=1 to accept)`,
  );
}

Deno.test("report: passk.csv and summary.md match their golden files on the fixture sweep", async () => {
  const report = await buildReport(fixture);
  assertGolden(report.csv, "passk.csv");
  assertGolden(report.summary.replaceAll(fixture, "FIXTURE"), "summary.md");
});

Deno.test("report: passk.csv is long format with per-subject and per-level slices for MATH-500", async () => {
  const rows = fromCsv((await buildReport(fixture)).csv);
  assertEquals(Object.keys(rows[0]), [
    "method",
    "seed",
    "dataset",
    "slice",
    "step",
    "k",
    "pass_at_k",
    "ci_lo",
    "ci_hi",
    "n",
    "problems",
  ]);
  const slices = new Set(rows.filter((r) => r.dataset === "math500").map((r) => r.slice));
  assertEquals([...slices], ["all", "subject=Algebra", "subject=Geometry", "level=1", "level=2", "level=3"]);
  ok(
    !rows.some((r) => r.dataset === "synthetic" && r.slice !== "all"),
    "synthetic samples carry no subject/level",
  );
  // 2 methods × 2 seeds × 2 steps × 4 ks for the synthetic set.
  assertEquals(rows.filter((r) => r.dataset === "synthetic").length, 32);
  for (const r of rows) ok(Number(r.ci_lo) <= Number(r.pass_at_k) && Number(r.pass_at_k) <= Number(r.ci_hi));
});

Deno.test("report: pass@k is the unbiased estimator averaged over problems", () => {
  const samples = [1, 0, 0, 0, 1, 1, 1, 1].map((c, i) => ({
    step: 5,
    dataset: "d",
    problemId: i < 4 ? "p1" : "p2",
    sample: i % 4,
    correct: c === 1,
    status: c === 1 ? "correct" : "wrong",
    extracted: null,
  }));
  const run: RunData = {
    runId: "r",
    method: "m",
    preset: "grpo",
    seed: 0,
    engine: "x",
    state: "done",
    ks: [3],
    metrics: [],
    samples,
  };
  const rows = passKRows([run], 200);
  assertEquals(rows.map((r) => r.k), [1, 2, 3, 4]);
  assertEquals(rows[0].passAtK, (0.25 + 1) / 2);
  assertEquals(rows[1].passAtK, (1 - 3 / 6 + 1) / 2); // p1: 1 − C(3,2)/C(4,2)
  assertEquals(rows[3].passAtK, 1);
  assertEquals(reportedKs(48, [3, 64]), [1, 2, 3, 4, 8, 16, 32]);
});

Deno.test("report: writes CSV, Markdown and vega-rendered SVG plots next to the sweep", async () => {
  const dir = copyFixture();
  const written = await writeReport(dir, { iters: 200 });
  for (
    const name of [
      "passk.csv",
      "summary.md",
      "plots/passk_math500.svg",
      "plots/passk_synthetic.svg",
      "plots/training.svg",
    ]
  ) {
    ok(written.includes(join(dir, name)) && exists(join(dir, name)), name);
  }
  const passk = Deno.readTextFileSync(join(dir, "plots/passk_synthetic.svg"));
  ok(passk.startsWith("<svg") && passk.includes("ace-grpo") && passk.includes("k (log scale)"));
  const training = Deno.readTextFileSync(join(dir, "plots/training.svg"));
  for (const label of ["reward", "entropy", "KL to ref", "overconf. errors", "overconf. severity"]) {
    ok(training.includes(label), label);
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: a malformed eval line names the file, line and field", async () => {
  const dir = copyFixture();
  Deno.writeTextFileSync(
    join(dir, "runs/grpo_s1/eval.jsonl"),
    '{"step":1,"dataset":"d","problemId":"p","correct":"yes"}\n',
    {
      append: true,
    },
  );
  await rejects(
    () => buildReport(dir),
    /runs\/grpo_s1\/eval\.jsonl:\d+: field 'correct' must be true or false/,
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: --compare of a sweep with itself finds no difference; failed runs are listed, not counted", async () => {
  const text = await compareSweeps(fixture, fixture, { iters: 200 });
  ok(text.includes("| grpo | synthetic | 0."), text);
  ok(text.includes("no difference is distinguishable from noise"), text);
  const dir = copyFixture();
  Deno.writeTextFileSync(
    join(dir, "runs/ace-grpo_s2/status.json"),
    '{"state":"failed","reason":"diverged: non-finite loss at step 3","startedAt":"x"}',
  );
  const report = await buildReport(dir, { iters: 200 });
  ok(
    report.summary.includes("- `ace-grpo_s2`: failed (diverged: non-finite loss at step 3)"),
    report.summary,
  );
  ok(!report.rows.some((r) => r.method === "ace-grpo" && r.seed === 2));
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: one sentence per comparison says where the difference is distinguishable from noise", () => {
  const cells = [
    { k: 1, mean: 0.05, lo: 0.01, hi: 0.09, problems: 10 },
    { k: 2, mean: 0.01, lo: -0.02, hi: 0.04, problems: 10 },
    { k: 4, mean: -0.04, lo: -0.07, hi: -0.01, problems: 10 },
  ];
  assertEquals(
    comparisonSentence({ dataset: "math500", a: "grpo", b: "ace-grpo", cells }),
    "**ace-grpo vs grpo (math500)**: ace-grpo is higher at Pass@1 and lower at Pass@4 (95% paired-bootstrap " +
      "interval excludes 0); indistinguishable from noise at Pass@2.",
  );
});
