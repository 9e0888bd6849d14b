// `deno task eval --suite rlvr` against the scripted OpenAI-compatible stand-in: the six math sets from fixture
// excerpts, one eval folder per set, and suite.md / suite.csv with a column per set holding the scripted Pass@k.
import { assertEquals, ok, rejects } from "../../assert.ts";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { fromCsv } from "../../../common/csv.ts";
import { exists } from "../../../common/fs.ts";
import { sha256 } from "../../../common/hash.ts";
import { fetchDataset } from "../../../datasets/fetch.ts";
import { loadDataset, type MathRecord } from "../../../datasets/mod.ts";
import { type Source, SOURCES } from "../../../datasets/sources.ts";
import { main } from "../../../commands/eval.ts";
import { SUITES } from "../../../commands/eval_suite.ts";
import { startFaultServer } from "./fault_server.ts";
import { tempDir } from "../../temp.ts";

Deno.env.set("CI", "true"); // no progress bars in test output
const FIXTURES = new URL("../../datasets/fixtures/", import.meta.url).pathname;
const template = new URL("./fixtures/qa_template.txt", import.meta.url).pathname;

/** A registered source with the checksums of the fixture copies in `mirror` pinned instead of the published ones. */
function fixtureSource(dataset: string, id: string, mirror: string): Source {
  const real = SOURCES.find((s) => s.dataset === dataset && s.id === id)!;
  const files = real.files.map((f) => ({ ...f, sha256: sha256(readFileSync(join(mirror, f.mirrorPath!))) }));
  return { ...real, files };
}

/** A cache holding the six sets of the rlvr suite, from the committed fixtures. */
async function fixtureCache(): Promise<{ cacheDir: string; records: MathRecord[] }> {
  const cacheDir = tempDir();
  const mirror = join(FIXTURES, "mirror");
  const excerpts = join(FIXTURES, "eval-sets");
  const sources: [string, string, string][] = [
    ["math500", "hf", mirror],
    ["aime2025", "yentinglin-jsonl", mirror],
    ...["aime2024", "amc2023", "minerva", "olympiadbench"].map((d) =>
      [d, "qwen25-math", excerpts] as [
        string,
        string,
        string,
      ]
    ),
  ];
  for (const [dataset, id, dir] of sources) {
    await fetchDataset(dataset, {
      cacheDir,
      mirror: dir,
      source: fixtureSource(dataset, id, dir),
      onBadRow: "skip",
    });
  }
  const records = (await Promise.all(SUITES.rlvr.map((d) => loadDataset(d, { cacheDir })))).flat();
  return { cacheDir, records };
}

Deno.test("eval --suite rlvr: six evals, one report with a column per set and the scripted Pass@k", async () => {
  const { cacheDir, records } = await fixtureCache();
  const byProblem = new Map(records.map((r) => [r.problem, r]));
  // Sample 0 right and sample 1 wrong (Pass@1 = 0.5, Pass@2 = 1), except AIME 2024: always wrong (0, 0).
  const srv = startFaultServer({
    answer: (prompt, _seed, i) => {
      const r = byProblem.get(prompt.match(/^Question: ([\s\S]*)\nGive the final answer/)?.[1] ?? "");
      if (!r) return "unknown problem";
      return i === 0 && r.dataset !== "aime2024" ? `\\boxed{${r.answer}}` : "\\boxed{-98765}";
    },
  });
  const out = join(tempDir(), "suite");
  const args = [
    "--suite",
    "rlvr",
    "--endpoint",
    srv.url,
    "--model",
    "test-model",
    "--cache-dir",
    cacheDir,
    "--n",
    "2",
    "--completions",
    "--prompt-template",
    template,
    "--out",
    out,
  ];
  try {
    assertEquals(await main(args), 0);
    for (const d of SUITES.rlvr) ok(exists(join(out, d, "summary.md")), `${d}/summary.md`);
    const csv = fromCsv(Deno.readTextFileSync(join(out, "suite.csv")));
    const row = (metric: string) => csv.find((r) => r.metric === metric)!;
    assertEquals(Object.keys(csv[0]), ["metric", ...SUITES.rlvr, "mean of sets"]);
    assertEquals(row("Pass@1"), {
      metric: "Pass@1",
      math500: "0.500000",
      aime2024: "0.000000",
      aime2025: "0.500000",
      amc2023: "0.500000",
      minerva: "0.500000",
      olympiadbench: "0.500000",
      "mean of sets": (2.5 / 6).toFixed(6),
    });
    assertEquals(row("Pass@2").aime2024, "0.000000");
    assertEquals(row("Pass@2").minerva, "1.000000");
    assertEquals(row("Pass@1 se").math500, "0.000000"); // every problem scores exactly 0.5
    const counts = records.reduce(
      (m, r) => m.set(r.dataset, (m.get(r.dataset) ?? 0) + 1),
      new Map<string, number>(),
    );
    assertEquals(row("problems scored").amc2023, `${counts.get("amc2023")}/${counts.get("amc2023")}`);
    const md = Deno.readTextFileSync(join(out, "suite.md"));
    ok(md.startsWith("# rlvr suite: test-model\n"), md);
    ok(
      md.includes(
        "| metric | math500 | aime2024 | aime2025 | amc2023 | minerva | olympiadbench | mean of sets |",
      ),
      md,
    );
    ok(md.includes("| Pass@1 | 0.500 ± 0.000 | 0.000 ± 0.000 |"), md);
    ok(md.includes("n = 2, temperature 0.6"), md);
    // Re-running resumes every set without a request.
    const before = srv.log.requests;
    assertEquals(await main(args), 0);
    assertEquals(srv.log.requests - before, 0, "no sampling request");
    // A model the server does not serve fails every set alike: the suite stops at the first, in one line.
    const wrongModel = args.map((a) => a === "test-model" ? "other-model" : a === out ? `${out}-wrong` : a);
    await rejects(main(wrongModel), /model 'other-model' is not served by .* \(it serves: test-model\)/);
    ok(!exists(join(`${out}-wrong`, "aime2024")), "no second set was tried");
  } finally {
    await srv.close();
  }
});

Deno.test("eval --suite: unfetched sets are named before any request; bad combinations are usage errors", async () => {
  const out = join(tempDir(), "suite");
  const base = ["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--out", out];
  await rejects(
    main(["--suite", "rlvr", "--cache-dir", tempDir(), ...base]),
    /the suite needs math500, aime2024, aime2025, amc2023, minerva, olympiadbench, not fetched yet: run `deno task fetch math500 aime2024/,
  );
  await rejects(main(["--suite", "nope", ...base]), /--suite: unknown 'nope' \(known: rlvr\)/);
  await rejects(
    main(["--suite", "rlvr", "--dataset", "math500", ...base]),
    /--suite and --dataset exclude each other/,
  );
  ok(!exists(out), "nothing written");
});
