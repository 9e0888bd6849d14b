// The evaluation sets RLVR papers report (AIME 2024, AMC 2023, Minerva Math, OlympiadBench, GSM8K): their
// layouts from committed excerpts of the pinned files, the GitHub download path from a local stand-in, and the
// whole pinned files when a dataset mirror holds them ($ACEBENCH_DATASET_MIRROR; .ci/make_dataset_mirror.sh).
import { assertEquals, ok, rejects } from "../assert.ts";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../common/hash.ts";
import { gsm8kAnswer, lastBoxed } from "../../datasets/answers.ts";
import { fetchDataset } from "../../datasets/fetch.ts";
import { loadDataset } from "../../datasets/load.ts";
import { type Source, SOURCES } from "../../datasets/sources.ts";
import { grade } from "../../evaluators/grade.ts";
import { FIXTURES, SHARED, startServer, tempDir } from "./helpers.ts";
import { missing, skipping } from "../external_inputs.ts";

const SETS = ["aime2024", "amc2023", "minerva", "olympiadbench", "gsm8k"] as const;
const EXCERPTS = join(FIXTURES, "eval-sets");
const excerpt = (dataset: string) => readFileSync(join(EXCERPTS, dataset, "test.jsonl"));
const real = (dataset: string) => SOURCES.find((s) => s.dataset === dataset && s.id === "qwen25-math")!;

/** The pinned source of `dataset` with the excerpt's checksum in place of the published file's. */
function excerptSource(dataset: string, bytes: Uint8Array = excerpt(dataset)): Source {
  const source = real(dataset);
  return { ...source, files: [{ ...source.files[0], sha256: sha256(bytes) }] };
}

/** Records of one excerpt, fetched through the mirror path. */
async function excerptRecords(dataset: string) {
  const cacheDir = tempDir();
  await fetchDataset(dataset, { cacheDir, mirror: EXCERPTS, source: excerptSource(dataset) });
  return loadDataset(dataset, { cacheDir });
}

Deno.test("eval sets: each pinned source is a raw GitHub file at one Qwen2.5-Math commit, sha256 and licence named", () => {
  for (const dataset of SETS) {
    const s = real(dataset);
    assertEquals([s.host, s.repo, s.revision], [
      "github",
      "QwenLM/Qwen2.5-Math",
      "a45202bd16f1ec06f433442dc1152d0074773465",
    ]);
    ok(/^[0-9a-f]{64}$/.test(s.files[0].sha256 ?? ""), dataset);
    assertEquals(s.files[0].mirrorPath, `${dataset}/test.jsonl`);
    ok(s.licence.startsWith("MIT (Qwen2.5-Math evaluation/LICENSE)"), s.licence);
  }
});

Deno.test("eval sets: the excerpts normalise to ids and answers as graders expect", async () => {
  const aime = await excerptRecords("aime2024");
  assertEquals(aime.map((r) => [r.id, r.answer]), [["aime2024/I-1", "204"], ["aime2024/I-2", "25"], [
    "aime2024/II-1",
    "73",
  ]]);
  ok(aime[0].problem.startsWith("Every morning Aya goes for a $9$-kilometer-long walk"));
  const amc = await excerptRecords("amc2023");
  assertEquals(amc.map((r) => [r.id, r.answer]), [["amc2023/12A-1", "27"], ["amc2023/12A-25", "-1"]]);
  const minerva = await excerptRecords("minerva");
  assertEquals(minerva.map((r) => [r.id, r.answer]), [
    ["minerva/0", "1.6"],
    ["minerva/12", "\\frac{2 \\pi c^{2} R^{2}}{\\lambda^{5}\\left[e^{h c /(\\lambda k T)}-1\\right] d^{2}}"],
  ]);
  assertEquals(minerva[0].meta.course, "Introduction to Astronomy (8.282J Spring 2006)");
  const olympiad = await excerptRecords("olympiadbench");
  assertEquals(olympiad.map((r) => r.answer), [
    "2",
    "69,84",
    "\\angle B E A_{1}=90,\\angle A E B_{1}=90",
  ]);
  assertEquals([olympiad[1].meta.multipleAnswers, olympiad[2].meta.unit], [true, "^{\\circ}"]);
  const gsm = await excerptRecords("gsm8k");
  assertEquals(gsm.map((r) => [r.id, r.answer]), [["gsm8k/0", "18"], ["gsm8k/146", "2125"]]);
  for (const r of [...aime, ...amc, ...minerva, ...olympiad, ...gsm]) {
    assertEquals(r.template, "boxed");
    // The gold, boxed as a model would write it, grades correct against itself.
    assertEquals(grade(`The answer is $\\boxed{${r.answer}}$.`, r.answer).status, "correct", r.id);
  }
});

Deno.test("eval sets: a row whose answer cannot be read is a bad row at its file:line", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, "minerva"));
  const good = excerpt("minerva").toString().split("\n")[0];
  const broken = JSON.stringify({ problem: "P", solution: "so \\boxed{1", type: "t", idx: 7 });
  const bytes = new TextEncoder().encode(`${good}\n${broken}\n`);
  writeFileSync(join(dir, "minerva", "test.jsonl"), bytes);
  const source = excerptSource("minerva", bytes);
  await rejects(
    fetchDataset("minerva", { cacheDir: tempDir(), mirror: dir, source }),
    /minerva\/test\.jsonl:2: solution: no closed \\boxed\{\.\.\.\} holding the answer \(pass --on-bad-row skip/,
  );
  const picture = JSON.stringify({
    id: 1,
    question: "See ![fig](a.png).",
    final_answer: ["1"],
    context: null,
  });
  mkdirSync(join(dir, "olympiadbench"));
  const obytes = new TextEncoder().encode(picture + "\n");
  writeFileSync(join(dir, "olympiadbench", "test.jsonl"), obytes);
  await rejects(
    fetchDataset("olympiadbench", {
      cacheDir: tempDir(),
      mirror: dir,
      source: excerptSource("olympiadbench", obytes),
    }),
    /olympiadbench\/test\.jsonl:1: .*question/,
  );
});

Deno.test("eval sets: downloaded from GitHub's raw layout (ACEBENCH_GITHUB_RAW), no hub token sent", async () => {
  const bytes = excerpt("amc2023");
  const server = startServer({ "QwenLM/Qwen2.5-Math/evaluation/data/amc23/test.jsonl": bytes });
  Deno.env.set("ACEBENCH_GITHUB_RAW", `${server.url}/gh/`);
  Deno.env.set("HF_TOKEN", "secret");
  try {
    const cacheDir = tempDir();
    const { manifest } = await fetchDataset("amc2023", { cacheDir, source: excerptSource("amc2023") });
    assertEquals(
      manifest.files[0].url,
      `${server.url}/gh/QwenLM/Qwen2.5-Math/a45202bd16f1ec06f433442dc1152d0074773465/evaluation/data/amc23/test.jsonl`,
    );
    assertEquals([manifest.files[0].checksum, manifest.rows.kept], ["pinned", 2]);
    assertEquals(server.seen.map((s) => s.auth), [null]);
    // The published checksum rejects the excerpt, and the error says how to provide the file.
    await rejects(
      fetchDataset("amc2023", { cacheDir: tempDir() }),
      /checksum mismatch.*Needed: QwenLM\/Qwen2\.5-Math@a45202bd.*--mirror DIR \(expects DIR\/amc2023\/test\.jsonl\).*ACEBENCH_GITHUB_RAW/,
    );
  } finally {
    Deno.env.delete("ACEBENCH_GITHUB_RAW");
    Deno.env.delete("HF_TOKEN");
    await server.close();
  }
});

Deno.test("answers: the last balanced \\boxed{} and GSM8K's '#### N'", () => {
  assertEquals(lastBoxed("a \\boxed{1} then \\boxed{\\frac{1}{2}} m"), "\\frac{1}{2}");
  assertEquals(lastBoxed("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
  assertEquals(lastBoxed("\\boxed{open"), null);
  assertEquals(lastBoxed("none"), null);
  assertEquals(gsm8kAnswer("work\n#### 1,450,000"), "1450000");
  assertEquals(gsm8kAnswer("no marker"), null);
});

const HAVE_FILES = SETS.every((d) => existsSync(join(SHARED, d, "test.jsonl")));
skipping(
  "the full evaluation-set test",
  HAVE_FILES
    ? null
    : missing("datasetMirror", `${SHARED} lacks ${SETS.map((d) => `${d}/test.jsonl`).join(", ")}`),
);

Deno.test({
  name:
    "eval sets, full files from the mirror: published counts, unique ids, every gold graded correct against itself",
  ignore: !HAVE_FILES,
  async fn() {
    const cacheDir = tempDir();
    const counts: Record<string, number> = {};
    for (const dataset of SETS) {
      await fetchDataset(dataset, { cacheDir, mirror: SHARED }); // the pinned sha256 is checked here
      const records = await loadDataset(dataset, { cacheDir });
      counts[dataset] = records.length;
      assertEquals(new Set(records.map((r) => r.id)).size, records.length, dataset);
      const misread = records.filter((r) => grade(`\\boxed{${r.answer}}`, r.answer).status !== "correct");
      assertEquals(misread.map((r) => r.id), [], `${dataset}: gold answers the grader cannot read`);
    }
    assertEquals(counts, { aime2024: 30, amc2023: 40, minerva: 272, olympiadbench: 675, gsm8k: 1319 });
  },
});
