import { assertEquals, ok, rejects } from "../assert.ts";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { normalise } from "../../datasets/fetch.ts";
import { batches } from "../../datasets/formats.ts";
import { pickSource, type Source, SOURCES } from "../../datasets/sources.ts";
import { DAPO_HEAD } from "../../datasets/templates.ts";
import { aimeParquet, dapoVerlParquet, FIXTURES, openR1Parquet, tempDir } from "./helpers.ts";

const MIRROR = join(FIXTURES, "mirror");
const source = (dataset: string, id: string): Source =>
  SOURCES.find((s) => s.dataset === dataset && s.id === id)!;
const mirrorPaths = (s: Source) => s.files.map((f) => join(MIRROR, f.mirrorPath!)).filter((p) => exists(p));
const exists = (p: string) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
};

/** Write bytes to a fresh temp file and return its path. */
function temp(name: string, bytes: Uint8Array): string {
  const path = join(tempDir(), name);
  writeFileSync(path, bytes);
  return path;
}

Deno.test("math500 jsonl: a bad row fails with file and line; skip drops bad rows and duplicates", async () => {
  const path = join(MIRROR, "math500/test.jsonl");
  await rejects(normalise(source("math500", "hf"), [path]), (e: Error) => {
    assertEquals(e.message, `${path}:3: level: must be integer (pass --on-bad-row skip to drop bad rows)`);
    return true;
  });
  const lines: string[] = [];
  const { records, counts } = await normalise(source("math500", "hf"), [path], "skip", (l) => lines.push(l));
  assertEquals(counts, { read: 7, bad: 3, duplicates: 1, kept: 3 });
  assertEquals(records.map((r) => r.id), [
    "math500/test/prealgebra/1.json",
    "math500/test/algebra/2.json",
    "math500/test/prealgebra/5.json",
  ]);
  assertEquals(records[1], {
    id: "math500/test/algebra/2.json",
    dataset: "math500",
    problem: "Simplify $\\frac{6}{8}$.",
    answer: "\\frac{3}{4}",
    template: "boxed",
    meta: { subject: "Algebra", level: 2, sourceIds: { unique_id: "test/algebra/2.json" } },
  });
  ok(lines.some((l) => l.includes(`${path}:4: invalid JSON`)), lines.join("\n"));
  ok(
    lines.some((l) => l.includes(`${path}:6: (root): must have required property 'answer'`)),
    lines.join("\n"),
  );
});

Deno.test("math500 jsonl: a truncated file's torn last line is a bad row", async () => {
  const path = join(FIXTURES, "math500-truncated.jsonl");
  await rejects(normalise(source("math500", "hf"), [path]), new RegExp(`${path}:3: invalid JSON`));
  const { counts } = await normalise(source("math500", "hf"), [path], "skip");
  assertEquals(counts, { read: 3, bad: 1, duplicates: 0, kept: 2 });
});

Deno.test("aime matharena source form: answers.csv joined with problems/N.tex; bad rows named", async () => {
  const s = source("aime2025", "matharena-src");
  const paths = mirrorPaths(s);
  const csvI = join(MIRROR, "aime2025/matharena/aime_2025_I/answers.csv");
  await rejects(normalise(s, paths), new RegExp(`${csvI} row 3: no problem file .*problems/3\\.tex`));
  const { records, counts } = await normalise(s, paths, "skip");
  assertEquals(counts, { read: 5, bad: 2, duplicates: 0, kept: 3 });
  assertEquals(records.map((r) => [r.id, r.answer]), [["aime2025/I-1", "70"], ["aime2025/I-2", "588"], [
    "aime2025/II-2",
    "5",
  ]]);
  ok(records[1].problem.includes("\\begin{tikzpicture}"));
  assertEquals(
    records[0].problem,
    "Find the sum of all integer bases $b>9$ for which $17_b$ is a divisor of $97_b.$",
  );
});

Deno.test("aime yentinglin jsonl: exam and number from the AoPS url, else from the id", async () => {
  const s = source("aime2025", "yentinglin-jsonl");
  const { records, counts } = await normalise(s, mirrorPaths(s), "skip");
  assertEquals(counts, { read: 4, bad: 1, duplicates: 0, kept: 3 });
  assertEquals(records.map((r) => r.id), ["aime2025/I-1", "aime2025/II-2", "aime2025/I-4"]);
  await rejects(normalise(s, mirrorPaths(s)), /test\.jsonl:3: answer: must match pattern/);
});

Deno.test("aime matharena parquet: int64 columns become numbers, answers strings", async () => {
  const path = temp(
    "aime.parquet",
    aimeParquet([
      { idx: 1, problem: "First.", answer: 70 },
      { idx: 16, problem: "Sixteenth.", answer: 5 },
      { idx: 30, problem: null, answer: 1 },
    ]),
  );
  const s = source("aime2025", "matharena");
  await rejects(normalise(s, [path]), new RegExp(`${path} row 3: problem: must be string`));
  const { records } = await normalise(s, [path], "skip");
  assertEquals(records.map((r) => [r.id, r.answer, r.meta.sourceIds]), [
    ["aime2025/I-1", "70", { problem_idx: 1 }],
    ["aime2025/II-1", "5", { problem_idx: 16 }],
  ]);
});

Deno.test("dapo upstream parquet: 100x repeats deduplicated, template stripped, CJK flagged", async () => {
  const base = [
    { problem: "What is $2+2$?", answer: "4", index: "a1b2c3d4-0000-0000-0000-000000000001", wrapped: true },
    { problem: "求 $3+4$ 的值。", answer: "7", index: "a1b2c3d4-0000-0000-0000-000000000002", wrapped: true },
    // Same text, different record (upstream has such pairs): both are kept.
    { problem: "What is $2+2$?", answer: "4", index: "a1b2c3d4-0000-0000-0000-000000000003", wrapped: true },
  ];
  const rows = [...base, ...base, ...base, { problem: "Bad.", answer: null, index: "bad", wrapped: true }];
  const path = temp("dapo.parquet", dapoVerlParquet(rows));
  const s = source("dapo-math-17k", "bytedtsinghua");
  await rejects(
    normalise(s, [path]),
    new RegExp(`${path} row 10: reward_model.ground_truth: must be string`),
  );
  const { records, counts, problems } = await normalise(s, [path], "skip");
  assertEquals(counts, { read: 10, bad: 1, duplicates: 6, kept: 3 });
  assertEquals(problems, 2);
  assertEquals(records[0], {
    id: "dapo/a1b2c3d4-0000-0000-0000-000000000001",
    dataset: "dapo-math-17k",
    problem: "What is $2+2$?",
    answer: "4",
    template: "dapo-answer",
    meta: {
      sourceIds: { index: "a1b2c3d4-0000-0000-0000-000000000001", data_source: "math_dapo" },
      cjk: false,
    },
  });
  assertEquals(records[1].meta.cjk, true);
  ok(records.every((r) => !r.problem.includes(DAPO_HEAD.slice(0, 20))));
});

Deno.test("dapo one-row-per-record parquet: bare prompts and integer index", async () => {
  const path = temp(
    "svs.parquet",
    dapoVerlParquet([
      { problem: "One?", answer: "1", index: 0 },
      { problem: "Two?", answer: "2", index: 1 },
      { problem: null, answer: "3", index: 2 },
    ]),
  );
  const s = source("dapo-math-17k", "svs");
  await rejects(normalise(s, [path]), new RegExp(`${path} row 3: prompt: must NOT have fewer than 1 items`));
  const { records } = await normalise(s, [path], "skip");
  assertEquals(records.map((r) => [r.id, r.problem, r.answer]), [["dapo/0", "One?", "1"], [
    "dapo/1",
    "Two?",
    "2",
  ]]);
});

Deno.test("dapo open-r1 parquet: prompt and solution columns", async () => {
  const path = temp("openr1.parquet", openR1Parquet([{ prompt: "Three?", solution: "3" }]));
  const { records } = await normalise(source("dapo-math-17k", "open-r1"), [path]);
  assertEquals(records[0].problem, "Three?");
  assertEquals(records[0].answer, "3");
  ok(/^dapo\/sha-[0-9a-f]{12}$/.test(records[0].id), records[0].id);
});

Deno.test("parquet: a truncated file is a clear file-level error", async () => {
  const bytes = dapoVerlParquet([{ problem: "One?", answer: "1", index: 0 }]);
  const path = temp("cut.parquet", bytes.subarray(0, bytes.length >> 1));
  await rejects(
    normalise(source("dapo-math-17k", "svs"), [path], "skip"),
    new RegExp(`${path}: not a readable parquet file \\(truncated or corrupt\\?\\)`),
  );
});

Deno.test("sources: defaults pick the hub online and the offline copies with a mirror", () => {
  assertEquals(["math500", "aime2025", "dapo-math-17k"].map((d) => pickSource(d).id), [
    "hf",
    "matharena",
    "bytedtsinghua",
  ]);
  assertEquals(
    ["math500", "aime2025", "dapo-math-17k"].map((d) => pickSource(d, { mirror: true }).id),
    ["hf", "matharena-src", "svs"],
  );
  ok(SOURCES.every((s) => s.files.length > 0 && s.licence));
});

Deno.test("parquet: row groups are read in batches of whole groups covering every row once", () => {
  assertEquals(batches([4, 4, 4, 4, 1], 8), [[0, 8], [8, 16], [16, 17]]);
  assertEquals(batches([100], 8), [[0, 100]]);
  assertEquals(batches([], 8), []);
});
