// The parquet export round trip (VERL's RL schema, read back with hyparquet) and the ingest of VERL validation
// dumps into eval.jsonl through acebench's grader, on small fixtures in VERL's formats.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { atomicWrite, exists, readJsonl } from "../../../../common/fs.ts";
import { readRunConfig, readStatus, writeRunConfig, writeStatus } from "../../../../common/run_folder.ts";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import { buildReport } from "../../../../reports/mod.ts";
import { main as reportMain } from "../../../../reports/cli.ts";
import { type MathRecord, renderPrompt } from "../../../../datasets/mod.ts";
import {
  type EvalLine,
  exportVerlData,
  ingestVerlDumps,
  readVerlDumps,
  readVerlParquet,
  toVerlRows,
  validateVerlSettings,
  writeVerlParquet,
} from "../../../../bench/engines/verl/mod.ts";
import {
  countPromptTokens,
  TEMPLATE_TOKENS,
  tokenBound,
  writeValFilter,
} from "../../../../bench/engines/verl/prompt_filter.ts";
import { assertEquals, ok, rejects, throws } from "../../../assert.ts";
import { skipping } from "../../../external_inputs.ts";
import { writeProtocolSweep } from "../../../sweep_record.ts";
import { TOKENIZER_DIR, VENV_PYTHON, verlVenvMissing } from "./verl_venv.ts";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const records: MathRecord[] = JSON.parse(readFileSync(join(fixtures, "records.json"), "utf8"));
const loader = (name: string) => Promise.resolve(records.filter((r) => r.dataset === name));

function withTmp(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "verl-test-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

Deno.test(
  "verl export: parquet rows round-trip through hyparquet in VERL's RL schema",
  withTmp(async (dir) => {
    const rows = toVerlRows(records, { template: "dapo-answer", dataSource: "math_dapo", split: "train" });
    const path = join(dir, "train.parquet");
    writeVerlParquet(path, rows);
    const back = await readVerlParquet(path);
    assertEquals(back, rows);
    assertEquals(Object.keys(back[0]), ["data_source", "prompt", "ability", "reward_model", "extra_info"]);
    assertEquals(back[2].prompt, [{ role: "user", content: renderPrompt(records[2], "dapo-answer") }]);
    ok(back[2].prompt[0].content.endsWith('Remember to put your answer on its own line after "Answer:".'));
    assertEquals(back[0].reward_model, { style: "rule", ground_truth: "\\frac{1}{2}" });
    assertEquals(back[3].extra_info, {
      dataset: "dapo-math-17k",
      id: "dapo/0",
      index: 3n,
      split: "train",
      template: "dapo-answer",
    });
    throws(() => writeVerlParquet(join(dir, "empty.parquet"), []), /no rows/);
  }),
);

Deno.test(
  "verl export: a sweep's train and test files carry each dataset's data_source",
  withTmp(async (dir) => {
    const settings = validateVerlSettings({
      trainDatasets: ["dapo-math-17k"],
      valDatasets: ["math500", "aime2025"],
    });
    const files = await exportVerlData(dir, settings, loader);
    assertEquals(files.map((f) => [f.split, f.dataset, f.rows]), [
      ["train", "dapo-math-17k", 1],
      ["test", "math500", 2],
      ["test", "aime2025", 1],
    ]);
    const aime = await readVerlParquet(join(dir, "data", "verl", "test-aime2025.parquet"));
    assertEquals(aime[0].data_source, "aime2025");
    assertEquals(aime[0].extra_info.split, "test");
    const dapo = await readVerlParquet(join(dir, "data", "verl", "train-dapo-math-17k.parquet"));
    assertEquals(dapo[0].data_source, "math_dapo");
  }),
);

/** The fixture sweep copied to a temp folder, with its validation sets exported next to the VERL dumps. */
async function fixtureSweep(dir: string): Promise<string> {
  // kept outside a runs/ folder in the repo (.gitignore ignores runs/), laid out as a sweep here
  cpSync(join(fixtures, "verl_run"), join(dir, "runs", "ace-grpo_s0"), { recursive: true });
  // the fixture dumps were generated with DAPO's "Answer:" template
  await exportVerlData(
    dir,
    validateVerlSettings({ valDatasets: ["math500", "aime2025"], template: "dapo-answer" }),
    loader,
  );
  return join(dir, "runs", "ace-grpo_s0");
}

Deno.test(
  "verl ingest grades as the sweep's recorded protocol says: changing the record's mode changes the verdicts",
  withTmp(async (dir) => {
    const runDir = await fixtureSweep(dir);
    const correct = async (mode: "strict" | "default") => {
      const protocol = {
        datasets: ["aime2025", "math500"],
        split: "test",
        template: "dapo-answer",
        sampling: { sent: {}, serverDefaults: [] },
        grader: { mode, version: null, timeoutMs: null },
        n: 3,
        ks: [1],
      };
      writeProtocolSweep(dir, protocol);
      await ingestVerlDumps(runDir);
      return readJsonl<EvalLine>(join(runDir, "eval.jsonl")).filter((l) => l.correct).length;
    };
    const [strict, lenient] = [await correct("strict"), await correct("default")];
    // "The area is 9." has no answer marker: no_answer when strict, correct by the default mode's fallbacks.
    assertEquals(lenient - strict, 1, `strict ${strict}, default ${lenient}`);
  }),
);

Deno.test(
  "verl ingest: VERL dumps become graded eval.jsonl lines keyed by acebench problem ids",
  withTmp(async (dir) => {
    const runDir = await fixtureSweep(dir);
    const summary = await ingestVerlDumps(runDir);
    assertEquals(summary.files, 2);
    assertEquals(summary.samples, 18);
    assertEquals(summary.steps, [0, 20]);
    assertEquals(summary.problems, 3);
    assertEquals(summary.unmatched, 0);
    assertEquals(summary.finished, false); // the fixture run has no config.json
    // ace_verl's per-step diagnostics become metrics.jsonl; the repeated step 2 (a resumed job) keeps its last record
    assertEquals(summary.metricsSteps, 3);
    const metrics = readJsonl<{ step: number; reward_mean: number; ace_overconf_frac: number | null }>(
      join(runDir, "metrics.jsonl"),
    );
    assertEquals(metrics.map((m) => [m.step, m.reward_mean, m.ace_overconf_frac]), [[1, 0.25, 0.5], [
      2,
      0.5,
      0.3,
    ], [
      3,
      0.5,
      null,
    ]]);
    const lines = readJsonl<EvalLine>(join(runDir, "eval.jsonl"));
    assertEquals(lines.length, 18);
    const key = (l: EvalLine) => `${l.step}|${l.problemId}|${l.sample}`;
    assertEquals(new Set(lines.map(key)).size, 18, "sample indices are unique per (step, problem)");
    const at = (step: number, id: string) => lines.filter((l) => l.step === step && l.problemId === id);
    const half = at(0, "math500/test/algebra/1.json");
    assertEquals(half.map((l) => l.sample), [0, 1, 2]);
    assertEquals(half[0].dataset, "math500");
    assertEquals([half[0].correct, half[2].correct], [true, false]);
    assertEquals(half[0].meta, { engine: "verl", verlScore: 1, matched: true, matchedBy: "contains" });
    // acebench's grader, not VERL's exact-match score: \frac12 and 1/2 are right although VERL scored them -1
    const later = at(20, "math500/test/algebra/1.json");
    assertEquals(later.map((l) => l.correct), [true, true, true]);
    assertEquals(later.map((l) => l.meta.verlScore), [-1, -1, -1]);
    const area = at(0, "math500/test/geometry/7.json");
    assertEquals(area.map((l) => l.correct), [true, false, false]);
    assertEquals(area[2].status, "no_answer"); // strict: "The area is 9." has no answer marker
    const aime = at(0, "aime2025/I-1");
    assertEquals(aime.map((l) => [l.dataset, l.correct]), [["aime2025", true], ["aime2025", false], [
      "aime2025",
      false,
    ]]);
    assertEquals(at(20, "aime2025/I-1").map((l) => l.correct), [true, true, false]);
    // re-ingesting replaces the file with the same content
    const before = readFileSync(join(runDir, "eval.jsonl"), "utf8");
    await ingestVerlDumps(runDir);
    assertEquals(readFileSync(join(runDir, "eval.jsonl"), "utf8"), before);
  }),
);

Deno.test(
  "verl ingest: prompts decoded with other spacing or punctuation still match; else a unique ground truth",
  withTmp(async (dir) => {
    const runDir = await fixtureSweep(dir);
    const content = (id: string) => renderPrompt(records.find((r) => r.id === id)!, "dapo-answer");
    const chat = (text: string) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`;
    const dumps = join(dir, "dumps");
    const rows = [
      // a tokenizer's clean-up: "side $3$. What" → "side $3$.What", blank lines collapsed
      {
        input: chat(content("math500/test/geometry/7.json").replace(". W", ".W").replaceAll("\n\n", "\n")),
        gts: "9",
      },
      // punctuation changed on decode (curly quotes): only letters and digits still agree
      { input: chat(content("math500/test/algebra/1.json").replaceAll('"', "\u201c")), gts: "\\frac{1}{2}" },
      // the prompt is unrecognisable, but one exported problem has this ground truth
      { input: "<garbled>", gts: "70" },
      { input: "<garbled>", gts: "12345" },
    ];
    atomicWrite(
      join(dumps, "40.jsonl"),
      rows.map((r) => JSON.stringify({ ...r, output: "Answer: 9", score: 0 })).join("\r\n") + "\r\n",
    );
    const summary = await ingestVerlDumps(runDir, { dumpDir: dumps });
    assertEquals([summary.samples, summary.unmatched], [4, 1]);
    const lines = readJsonl<EvalLine>(join(runDir, "eval.jsonl"));
    assertEquals(
      lines.map((l) => [l.problemId.startsWith("prompt-") ? "prompt-…" : l.problemId, l.meta.matchedBy]),
      [
        ["math500/test/geometry/7.json", "contains"],
        ["math500/test/algebra/1.json", "alphanumeric"],
        ["aime2025/I-1", "ground-truth"],
        ["prompt-…", null],
      ],
    );
    assertEquals(lines[0].correct, true);
  }),
);

Deno.test(
  "verl ingest: the issue's plain naming (prompt, output, ground_truth, step) without exported data",
  withTmp(async (dir) => {
    const summary = await ingestVerlDumps(dir, { dumpDir: join(fixtures, "plain_dumps"), sweepDir: dir });
    assertEquals([summary.samples, summary.problems, summary.unmatched], [3, 2, 3]);
    const lines = readJsonl<EvalLine>(join(dir, "eval.jsonl"));
    assertEquals(lines.map((l) => [l.step, l.dataset, l.sample]), [[5, "unknown", 0], [5, "unknown", 1], [
      5,
      "toy",
      0,
    ]]);
    ok(/^prompt-[0-9a-f]{12}$/.test(lines[0].problemId));
    assertEquals(lines[0].problemId, lines[1].problemId);
    assertEquals(lines.slice(0, 2).map((l) => l.correct), [true, false]);
  }),
);

Deno.test(
  "verl ingest: bad dumps fail naming the file and line",
  withTmp(async (dir) => {
    const dumps = join(dir, "val_generations");
    atomicWrite(
      join(dumps, "3.jsonl"),
      '{"input": "q", "output": "Answer: 1", "gts": "1"}\n{"input": "q"}\n',
    );
    await rejects(() => readVerlDumps(dumps), /3\.jsonl:2: field 'output' is missing/);
    atomicWrite(join(dumps, "3.jsonl"), '{"input": "q", "output": "a", "gts": "1", "step": 3}\nnot json\n');
    await rejects(() => readVerlDumps(dumps), /3\.jsonl:2: invalid JSON line/);
    atomicWrite(join(dumps, "3.jsonl"), '{"input": "q", "output": "a"}\n');
    assertEquals((await readVerlDumps(dumps)).samples[0].step, 3); // step from the file name
    await rejects(() => ingestVerlDumps(dir), /3\.jsonl:1: no ground truth/);
    await rejects(() => ingestVerlDumps(join(dir, "nowhere")), /no VERL validation dumps/);
  }),
);

function pyarrowAvailable(): boolean {
  try {
    return new Deno.Command("python3", {
      args: ["-c", "import pyarrow, pandas"],
      stdout: "null",
      stderr: "null",
    })
      .outputSync().success;
  } catch {
    return false;
  }
}
const hasPyarrow = pyarrowAvailable();
skipping(
  "the pyarrow read-back of VERL parquet",
  hasPyarrow
    ? null
    : "python3 has no pyarrow/pandas (Debian has no python3-pyarrow: pip install pyarrow pandas)",
);

Deno.test({
  name: "verl export: pyarrow and pandas (what VERL reads parquet with) accept the files",
  ignore: !hasPyarrow,
  fn: withTmp(async (dir) => {
    // the fixture dumps were generated with DAPO's "Answer:" template
    await exportVerlData(
      dir,
      validateVerlSettings({ valDatasets: ["math500", "aime2025"], template: "dapo-answer" }),
      loader,
    );
    const files = [...Deno.readDirSync(join(dir, "data", "verl"))].map((e) =>
      join(dir, "data", "verl", e.name)
    );
    const out = new Deno.Command("python3", { args: [join(fixtures, "check_parquet.py"), ...files] })
      .outputSync();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    ok(out.success && text.includes("parquet OK"), text);
  }),
});

Deno.test(
  "verl ingest: VERL 0.9.0's dumps (an extra uid per sample, non-ASCII unescaped) ingest like 0.7.0's",
  withTmp(async (dir) => {
    const runDir = await fixtureSweep(dir);
    await ingestVerlDumps(runDir);
    const before = readFileSync(join(runDir, "eval.jsonl"), "utf8");
    for (const file of ["0.jsonl", "20.jsonl"]) {
      const path = join(runDir, "val_generations", file);
      const rows = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) =>
        JSON.parse(l)
      );
      // v0.9.0's _write_generations: the reward's extra fields plus "uid" ({uid}_{session}_{turn}), ensure_ascii=False
      const lines = rows.map((r, i) => JSON.stringify({ ...r, uid: `3f2c-${i}_${i}_0`, note: "é≥½" }));
      atomicWrite(path, lines.join("\n") + "\n");
      ok(readFileSync(path, "utf8").includes("é≥½"));
    }
    await ingestVerlDumps(runDir);
    assertEquals(readFileSync(join(runDir, "eval.jsonl"), "utf8"), before);
  }),
);

/**
 * The fixture sweep as a planned VERL run (config.json eval.n = 3, 20 steps) whose dumps keep only the lines
 * `keep` accepts (by step, ground truth and index within the step's file); returns the sweep and run folders.
 */
async function plannedRun(
  dir: string,
  keep: (step: number, gts: string, i: number) => boolean = () => true,
): Promise<{ sweepDir: string; runDir: string }> {
  const runDir = await fixtureSweep(dir);
  writeRunConfig(runDir, {
    runId: "ace-grpo_s0",
    engine: "verl",
    method: "ace-grpo",
    preset: "ace-grpo",
    seed: 0,
    base: 0,
    algo: { ...resolveAlgo("ace-grpo") },
    settings: { rl: { steps: 20 } },
    eval: { n: 3, ks: [1, 2, 3], every: 20 },
    record: null,
  });
  writeStatus(runDir, { state: "planned", startedAt: "2026-01-01T00:00:00.000Z" });
  for (const step of [0, 20]) {
    const path = join(runDir, "val_generations", `${step}.jsonl`);
    const rows = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "");
    const kept = rows.filter((l, i) => keep(step, JSON.parse(l).gts, i));
    atomicWrite(path, kept.map((l) => l + "\n").join(""));
  }
  return { sweepDir: dir, runDir };
}

Deno.test(
  "verl ingest: complete dumps (n samples of every exported problem) pass, record no lost samples, count restarts",
  withTmp(async (dir) => {
    const { runDir } = await plannedRun(dir);
    // two grader restarts reward.py logged in the run folder: counted into status.json
    const restart = JSON.stringify({ time: "t", host: "h", pid: 1, error: "exited" }) + "\n";
    atomicWrite(join(runDir, "verl", "grader_restarts.jsonl"), restart + restart);
    const summary = await ingestVerlDumps(runDir);
    assertEquals([summary.samples, summary.problems, summary.finished], [18, 3, true]);
    assertEquals(readStatus(runDir)?.lostSamples, undefined);
    assertEquals([summary.graderRestarts, readStatus(runDir)?.graderRestarts], [2, 2]);
  }),
);

Deno.test(
  "verl ingest: a problem absent from a step's dump, or a short cell, is refused with the counts",
  withTmp(async (dir) => {
    // step 20 lost every sample of the area problem (gts 9); nothing is written
    const absent = await plannedRun(join(dir, "absent"), (step, gts) => !(step === 20 && gts === "9"));
    await rejects(
      () => ingestVerlDumps(absent.runDir),
      new RegExp(
        `${absent.runDir}: VERL dump step 20 \\(math500\\): 1 of 2 problems absent; the run lost samples ` +
          `\\(a failed reward group\\?\\); re-run, or ingest with .deno task report ${absent.sweepDir} ` +
          `--ingest --partial. to keep them with their cells marked †$`,
      ),
    );
    ok(!exists(join(absent.runDir, "eval.jsonl")), "a refused ingest writes no eval.jsonl");
    // step 0 lost one sample of two problems (lines 0 and 6), step 20 one of one: each step named
    const short = await plannedRun(join(dir, "short"), (step, _, i) => i !== 0 && !(step === 0 && i === 6));
    await rejects(
      () => ingestVerlDumps(short.runDir),
      /VERL dump step 0 \(aime2025\): 1 problem with 2 of 3 samples; step 0 \(math500\): 1 problem with 2 of 3 samples; step 20 \(math500\): 1 problem with 2 of 3 samples; the run lost samples/,
    );
    // more samples than n: the dumps are not this run's, refused even with partial
    const over = await plannedRun(join(dir, "over"), (step, _, i) => !(step === 0 && i === 0));
    writeRunConfig(over.runDir, { ...readRunConfig(over.runDir)!, eval: { n: 2, ks: [1, 2], every: 20 } });
    await rejects(
      () => ingestVerlDumps(over.runDir, { partial: true }),
      /step 0 \(aime2025\): 1 problem with 3 of 2 samples; .*more samples than the plan's n = 2/,
    );
  }),
);

Deno.test(
  "verl ingest: report --ingest --partial keeps short dumps; their cells are marked † with what they lack",
  withTmp(async (dir) => {
    // step 20: the area problem absent, one sample of the half problem lost (line 0)
    const { sweepDir, runDir } = await plannedRun(
      dir,
      (step, gts, i) => step !== 20 || (gts !== "9" && i !== 0),
    );
    assertEquals(
      await reportMain([sweepDir, "--ingest", "--iters", "100"]).catch((e) => e.message),
      `${runDir}: VERL dump step 20 (math500): 1 of 2 problems absent, 1 problem with 2 of 3 samples; ` +
        `the run lost samples (a failed reward group?); re-run, or ingest with \`deno task report ${sweepDir} ` +
        "--ingest --partial` to keep them with their cells marked †",
    );
    assertEquals(await reportMain([sweepDir, "--ingest", "--partial", "--iters", "100"]), 0);
    const lost = "VERL dump lacks 4 of 6 samples: 1 of 2 problems absent, 1 problem with 2 of 3 samples " +
      "(ingested with --partial)";
    assertEquals(readStatus(runDir)?.lostSamples, [{ dataset: "math500", step: 20, message: lost }]);
    assertEquals(readJsonl(join(runDir, "eval.jsonl")).length, 14, "what exists is kept");
    const report = await buildReport(sweepDir, { iters: 100 });
    ok(report.issues.some((i) => i.dataset === "math500" && i.step === 20 && i.message === lost));
    const marked = (dataset: string) =>
      report.model.cells.filter((c) => c.dataset === dataset && c.step === 20).every((c) => c.incomplete);
    assertEquals([marked("math500"), marked("aime2025")], [true, false]);
    ok(readFileSync(join(sweepDir, "summary.md"), "utf8").includes(`(math500, step 20): ${lost}`));
    assertEquals(await reportMain([sweepDir, "--iters", "100"]), 1, "without --partial the report fails");
    // complete dumps ingested again clear the mark
    cpSync(join(fixtures, "verl_run", "val_generations"), join(runDir, "val_generations"), {
      recursive: true,
    });
    await ingestVerlDumps(runDir);
    assertEquals(readStatus(runDir)?.lostSamples, undefined);
  }),
);

Deno.test("verl prompt filter: the bound without a tokenizer is UTF-8 bytes plus the template's tokens", () => {
  assertEquals(tokenBound("héllo"), 6 + TEMPLATE_TOKENS);
  assertEquals(tokenBound(""), TEMPLATE_TOKENS);
});

Deno.test(
  "verl ingest: problems VERL's prompt filter drops may be absent (named, recorded), never partly present",
  withTmp(async (dir) => {
    const settings = validateVerlSettings({ valDatasets: ["math500", "aime2025"], template: "dapo-answer" });
    // every step lost the area problem (gts 9): what VERL does when its prompt is over the limit
    const { sweepDir, runDir } = await plannedRun(join(dir, "filtered"), (_, gts) => gts !== "9");
    const counted = await countPromptTokens(sweepDir, settings);
    // settings.model is a Hugging Face id, not a folder: the documented bound, saying why
    assertEquals(counted.method, "estimate");
    ok(counted.why.includes("not a local folder"), counted.why);
    const tokens = (id: string) => counted.problems.find((p) => p.id === id)!.tokens;
    const area = "math500/test/geometry/7.json", half = "math500/test/algebra/1.json";
    ok(tokens(half) < tokens(area), "the fixture's area prompt is the longer math500 one");
    const filter = writeValFilter(sweepDir, runDir, tokens(area) - 1)!;
    ok(filter.overLimit.some((p) => p.id === area) && !filter.overLimit.some((p) => p.id === half));
    const summary = await ingestVerlDumps(runDir);
    assertEquals(summary.filtered, [`math500/${area}`]);
    assertEquals(readStatus(runDir)?.filteredProblems, {
      maxPromptLength: tokens(area) - 1,
      method: "estimate",
      problems: [{ dataset: "math500", problemId: area, tokens: tokens(area) }],
    });
    assertEquals(readStatus(runDir)?.state, "done");
    // without the plan's filter the same dumps are refused (the check it replaces)
    rmSync(join(runDir, "verl", "val_filter.json"));
    await rejects(() => ingestVerlDumps(runDir), /step 0 \(math500\): 1 of 2 problems absent/);
    // a problem under the limit absent is still refused; one over it that lost a sample too
    const absent = await plannedRun(join(dir, "absent"), (_, gts) => gts !== "\\frac{1}{2}");
    writeValFilter(sweepDir, absent.runDir, tokens(area) - 1);
    await rejects(() => ingestVerlDumps(absent.runDir), /step 0 \(math500\): 1 of 2 problems absent/);
    const cut = new Set<number>(); // steps whose first area sample was dropped
    const short = await plannedRun(join(dir, "short"), (step, gts) => {
      if (gts !== "9" || cut.has(step)) return true;
      cut.add(step);
      return false;
    });
    writeValFilter(sweepDir, short.runDir, tokens(area) - 1);
    await rejects(() => ingestVerlDumps(short.runDir), /step 0 \(math500\): 1 problem with 2 of 3 samples/);
  }),
);

const noTokenizer = verlVenvMissing();
Deno.test({
  name: "verl prompt filter: with the model's tokenizer at hand, counts are VERL's (chat template, exact)",
  ignore: noTokenizer !== null,
  fn: withTmp(async (dir) => {
    const settings = {
      ...validateVerlSettings({ valDatasets: ["math500", "aime2025"], template: "dapo-answer" }),
      model: TOKENIZER_DIR,
      python: VENV_PYTHON,
    };
    await exportVerlData(dir, settings, loader);
    const counted = await countPromptTokens(dir, settings);
    assertEquals([counted.method, counted.why], ["tokenizer", TOKENIZER_DIR]);
    assertEquals(
      counted.problems.map((p) => p.id),
      records.filter((r) => r.dataset !== "dapo-math-17k").map((r) => r.id),
    );
    for (const p of counted.problems) {
      // the chat template adds tokens; a BPE token covers at least one byte
      const prompt = renderPrompt(records.find((r) => r.id === p.id)!, "dapo-answer");
      ok(p.tokens > 10 && p.tokens <= tokenBound(prompt), `${p.id}: ${p.tokens} tokens`);
    }
  }),
});
