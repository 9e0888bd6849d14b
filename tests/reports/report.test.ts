import { join } from "node:path";
import { assertEquals, ok, rejects } from "../assert.ts";
import {
  buildReport,
  compareSweeps,
  comparisonSentence,
  type DiffCell,
  passKRows,
  reportedKs,
  type RunData,
  writeReport,
} from "../../reports/mod.ts";
import { rmSync } from "node:fs";
import { fromCsv } from "../../common/csv.ts";
import { exists } from "../../common/fs.ts";
import { copyFixture, fixture } from "./fixture.ts";
import { main as reportMain } from "../../reports/cli.ts";
import { recordInConfig } from "../../common/run_folder.ts";
import { GraderPool } from "../../evaluators/pool.ts";

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
    "base",
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
    base: 0,
    engine: "x",
    state: "done",
    ks: [3],
    metrics: [],
    samples,
    expected: {},
    evalFile: "ok",
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
  const { written } = await writeReport(dir, { iters: 200 });
  for (
    const name of [
      "passk.csv",
      "boundary.csv",
      "summary.md",
      "plots/passk_math500.svg",
      "plots/passk_synthetic.svg",
      "plots/diff_math500.svg",
      "plots/diff_synthetic.svg",
      "plots/training.svg",
    ]
  ) {
    ok(written.includes(join(dir, name)) && exists(join(dir, name)), name);
  }
  const passk = Deno.readTextFileSync(join(dir, "plots/passk_synthetic.svg"));
  ok(passk.startsWith("<svg") && passk.includes("ace-grpo") && passk.includes("k (log scale)"));
  const diff = Deno.readTextFileSync(join(dir, "plots/diff_synthetic.svg"));
  ok(diff.startsWith("<svg") && diff.includes("ace-grpo − grpo") && diff.includes("Δ pass@k"));
  const training = Deno.readTextFileSync(join(dir, "plots/training.svg"));
  for (
    const label of [
      "entropy (nats per token)",
      "KL to the reference (nats per token)",
      "overconfident errors: fraction of incorrect rollouts with c &gt; 0",
      "overconfident errors: mean c (nats)",
      "confidence",
    ]
  ) {
    ok(training.includes(label), label);
  }
  ok(!training.includes(">reward<"), "reward is not plotted (its scale differs between schemes)");
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
  const cell = (k: number, mean: number, lo: number, hi: number, mdd: number) =>
    ({ k, mean, lo, hi, mdd, interval: "crossed" }) as unknown as DiffCell;
  const cells = [
    cell(1, 0.05, 0.01, 0.09, 0.05),
    cell(2, 0.01, -0.02, 0.04, 0.042),
    cell(4, -0.04, -0.07, -0.01, 0.04),
  ];
  assertEquals(
    comparisonSentence({ dataset: "math500", a: "grpo", b: "ace-grpo", cells, unpaired: [] }),
    "**ace-grpo vs grpo (math500)**: ace-grpo is higher at Pass@1 and lower at Pass@4 (95% crossed seeds × " +
      "problems interval excludes 0); indistinguishable from noise at Pass@2. This design detects (80% power) " +
      "only differences of 0.042 or more there.",
  );
});

// ---- honest cells: incomplete data named and marked, no zero-width interval that hides spread --------------

/** Rewrite one run's eval.jsonl through `edit` (lines as parsed objects). */
function editEval(
  dir: string,
  runId: string,
  edit: (lines: Record<string, unknown>[]) => Record<string, unknown>[],
) {
  const path = join(dir, "runs", runId, "eval.jsonl");
  const lines = Deno.readTextFileSync(path).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  Deno.writeTextFileSync(path, edit(lines).map((l) => JSON.stringify(l)).join("\n") + "\n");
}

Deno.test("report: a run that lost its last eval line is named, its cells marked, and report exits 1 unless --partial", async () => {
  const dir = copyFixture();
  editEval(dir, "ace-grpo_s2", (lines) => lines.slice(0, -1));
  const report = await buildReport(dir, { iters: 200 });
  const named = report.issues.find((i) => i.runId === "ace-grpo_s2");
  ok(named && /fewer than n = 8 samples \(fewest 7\)/.test(named.message), JSON.stringify(report.issues));
  ok(report.summary.includes("## Incomplete data"), report.summary);
  ok(report.summary.includes("`ace-grpo_s2` (math500, step 4): 1 problem(s) with fewer than n = 8 samples"));
  // Only the cells of the dataset and step that lost the sample are marked.
  const math = report.summary.split("## math500")[1].split("## synthetic")[0];
  const synthetic = report.summary.split("## synthetic")[1];
  ok(/\| ace-grpo \| [^\n]*†/.test(math), math);
  ok(!/\| grpo \| [^\n]*†/.test(math), "grpo is complete");
  ok(!synthetic.split("## Reproducibility")[0].includes("†"), "synthetic is complete");
  assertEquals(await reportMain([dir, "--iters", "200"]), 1);
  assertEquals(await reportMain([dir, "--iters", "200", "--partial"]), 0);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: a missing final step and a line cut mid-write are named", async () => {
  const dir = copyFixture();
  editEval(dir, "grpo_s2", (lines) => lines.filter((l) => l.step !== 4));
  const path = join(dir, "runs/grpo_s1/eval.jsonl");
  Deno.writeTextFileSync(path, Deno.readTextFileSync(path) + '{"step":4,"dataset":"synth');
  const { issues } = await buildReport(dir, { iters: 200 });
  const text = issues.map((i) => `${i.runId}: ${i.message}`).join("\n");
  ok(text.includes("grpo_s2: no evaluation at the final step 4 (last: 2)"), text);
  ok(text.includes("grpo_s1: eval.jsonl ends in a line cut mid-write (ignored)"), text);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: duplicate samples (two writers) are named with --repair, not counted as a larger n", async () => {
  const dir = copyFixture();
  editEval(dir, "grpo_s1", (lines) => [...lines, ...lines.slice(0, 3)]);
  const { issues } = await buildReport(dir, { iters: 200 });
  const text = issues.map((i) => `${i.runId}: ${i.message}`).join("\n");
  ok(
    text.includes("grpo_s1: 3 duplicate samples (same step, dataset, problem and index: two writers?)"),
    text,
  );
  ok(text.includes("--repair"), text);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: complete data exit 0; the fixture's complete report has no marks", async () => {
  const dir = copyFixture();
  assertEquals(await reportMain([dir, "--iters", "200"]), 0);
  const summary = Deno.readTextFileSync(join(dir, "summary.md"));
  ok(!summary.includes("†") && !summary.includes("Incomplete data"), summary);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: the step-0 row shows its interval over problems, not a zero-width one", async () => {
  const dir = copyFixture();
  // Every seed of every method gets the same step-0 samples (as the tfjs engine's shared base evaluation).
  const step0 = Deno.readTextFileSync(join(dir, "runs/grpo_s1/eval.jsonl")).split("\n").filter((l) =>
    l.trim()
  )
    .map((l) => JSON.parse(l)).filter((l) => l.step === 2).map((l) => ({ ...l, step: 0 }));
  for (const id of ["grpo_s1", "grpo_s2", "ace-grpo_s1", "ace-grpo_s2"]) {
    editEval(dir, id, (lines) => [...step0, ...lines]);
  }
  const report = await buildReport(dir, { iters: 200 });
  const row = report.cells.filter((c) => c.method === "step 0 (before RL)" && c.slice === "all" && c.k === 1);
  ok(row.length === 2, "one step-0 cell per dataset");
  for (const c of row) {
    assertEquals(c.interval, "shared samples");
    ok(c.lo < c.mean && c.mean < c.hi, `step-0 interval [${c.lo}, ${c.hi}] around ${c.mean}`);
  }
  ok(report.summary.includes("row is one set of samples shared by every seed"), report.summary);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: a zero-width interval appears only when every value is equal, and says so", async () => {
  const report = await buildReport(fixture, { iters: 200 });
  for (const c of report.cells.filter((c) => c.hi === c.lo)) ok(c.identical, `${c.method} Pass@${c.k}`);
  const flat = report.cells.find((c) => c.identical);
  ok(flat, "the fixture has one (ace-grpo math500 Pass@8 = 1 everywhere)");
  ok(report.summary.includes("1.000 [1.000, 1.000]°"), report.summary);
  ok(report.summary.includes("° every seed and problem gives the same value"));
});

Deno.test("report: a sweep's `compare` adds method-against-method rows, paired by seed and problem", async () => {
  const dir = copyFixture();
  try {
    const path = join(dir, "sweep.json");
    const sweep = JSON.parse(Deno.readTextFileSync(path));
    const plain = await buildReport(dir);
    // grpo against ace-grpo: the ACE pair read the other way round, so every difference changes sign.
    Deno.writeTextFileSync(
      path,
      JSON.stringify({ ...sweep, compare: [{ method: "grpo", against: ["ace-grpo"] }] }),
    );
    const report = await buildReport(dir);
    assertEquals(report.comparisons.length, plain.comparisons.length * 2);
    for (const ace of plain.comparisons) {
      const back = report.comparisons.find((c) =>
        c.dataset === ace.dataset && c.a === ace.b && c.b === ace.a
      )!;
      ok(back, `reverse of ${ace.b} − ${ace.a} on ${ace.dataset}`);
      ace.cells.forEach((d, i) => assertEquals(Math.abs(back.cells[i].mean + d.mean) < 1e-12, true));
    }
    ok(report.summary.includes("grpo vs ace-grpo"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("report: the reproducibility section names the backend the runs recorded, and its BLAS", async () => {
  const dir = copyFixture();
  const blas = { library: "libopenblas.so.0", core: "Haswell", threads: 1 };
  // What the tfjs engine records through the runner (onRecord → config.json), not its private base/ files.
  const run = [...Deno.readDirSync(join(dir, "runs"))][0].name;
  recordInConfig(join(dir, "runs", run), {
    backendDecision: { requested: "auto", backend: "blas", reason: "r", blas },
  });
  Deno.mkdirSync(join(dir, "base"), { recursive: true });
  Deno.writeTextFileSync(join(dir, "base", "base.json"), JSON.stringify({ backend: "webgpu" }));
  const report = await buildReport(dir, { iters: 200 });
  ok(
    report.summary.includes("(resolved: blas: libopenblas.so.0, Haswell kernels, 1 thread per product)"),
    report.summary.split("## Reproducibility")[1],
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("report: the reproducibility section of a bases sweep names its bases, seeds per base and design", async () => {
  const dir = copyFixture();
  try {
    const path = join(dir, "sweep.json");
    const sweep = JSON.parse(Deno.readTextFileSync(path));
    delete sweep.seeds;
    Deno.writeTextFileSync(path, JSON.stringify({ ...sweep, bases: 3, seedsPerBase: 2 }));
    const section = (await buildReport(dir, { iters: 200 })).summary.split("## Reproducibility")[1];
    ok(
      section.includes("design: bases × seeds per base: 3 base model(s) (bases 0–2) × 2 seed(s) per base"),
      section,
    );
    ok(section.includes("6 run(s) per method"), section);
    ok(!section.includes("seeds: ;"), section);
    const seeds = (await buildReport(fixture, { iters: 200 })).summary.split("## Reproducibility")[1];
    ok(seeds.includes("design: seeds on one shared base model: seeds 1, 2"), seeds);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("report: writeReport adds the caller's passk.csv columns and summary.md sections, in one write", async () => {
  const dir = copyFixture();
  try {
    await writeReport(dir, { iters: 100 });
    const plainCsv = Deno.readTextFileSync(join(dir, "passk.csv"));
    const plainSummary = Deno.readTextFileSync(join(dir, "summary.md"));
    await writeReport(dir, {
      iters: 100,
      columns: [{ name: "where", value: (r) => `${r.dataset}/${r.slice}/${r.k}` }],
      sections: ["## Extra\n\none line\n\n"],
    });
    const rows = fromCsv(Deno.readTextFileSync(join(dir, "passk.csv")));
    const plain = fromCsv(plainCsv);
    assertEquals(rows.length, plain.length);
    assertEquals(Object.keys(rows[0]), [...Object.keys(plain[0]), "where"]);
    ok(rows.every((r) => r.where === `${r.dataset}/${r.slice}/${r.k}`));
    assertEquals(Deno.readTextFileSync(join(dir, "summary.md")), plainSummary + "\n## Extra\n\none line\n");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("report: a forced grader timeout is ungraded — named with its count, its cells marked, exit 1 above the limit", async () => {
  // A real timeout: the pool's worker hangs on this answer, twice (the retry on a fresh worker hangs too).
  const pool = new GraderPool(1, new URL("../evaluators/fixtures/hanging_worker.ts", import.meta.url).href);
  let verdict;
  try {
    [verdict] = await pool.grade([{ prediction: "HANG", gold: "42" }], { timeoutMs: 200 });
  } finally {
    pool.close();
  }
  assertEquals(verdict.status, "timeout");
  const dir = copyFixture();
  try {
    const path = join(dir, "runs/grpo_s1/eval.jsonl");
    const lines = Deno.readTextFileSync(path).trimEnd().split("\n").map((l) => JSON.parse(l));
    const final = lines.findIndex((s) => s.step === 4 && s.correct);
    lines[final] = { ...lines[final], ...verdict };
    Deno.writeTextFileSync(path, lines.map((l) => JSON.stringify(l) + "\n").join(""));
    const report = await buildReport(dir, { iters: 200 });
    const issue = report.issues.find((i) => i.ungraded);
    assertEquals(
      issue?.message,
      "1 of 48 answers ungraded (1 timeout: unknown, counted as not correct in Pass@k)",
    );
    assertEquals([issue?.runId, issue?.dataset, issue?.step], ["grpo_s1", "synthetic", 4]);
    ok(report.summary.includes("Ungraded answers (the grader timed out after a retry"), report.summary);
    const table = report.summary.split("## synthetic")[1].split("\n").find((l) => l.startsWith("| grpo |"))!;
    ok(table.includes("† (1 ungraded)"), table);
    ok(report.summary.includes('"(N ungraded)": N answers the grader could not grade'), report.summary);
    // 1 of 576 answers (0.17%) is above the default limit of 0.1%: exit 1, unless allowed or --partial.
    assertEquals(await reportMain([dir, "--iters", "200"]), 1);
    assertEquals(await reportMain([dir, "--iters", "200", "--max-ungraded", "0.01"]), 0);
    assertEquals(await reportMain([dir, "--iters", "200", "--partial"]), 0);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
