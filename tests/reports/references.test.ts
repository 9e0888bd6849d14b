// Published reference points: the shipped CSVs parse and carry their citations, bad files name file/line/field,
// protocol differences are named, and `report --reference` overlays them on a fixture `deno task eval` folder.
import { join } from "node:path";
import { appendJsonl, writeJson } from "../../common/fs.ts";
import {
  buildReport,
  passKSpec,
  protocolDifferences,
  readReferences,
  referenceCurves,
  referenceSection,
  referencesFor,
  renderSvg,
  runProtocol,
} from "../../reports/mod.ts";
import { assertEquals, ok, throws } from "../assert.ts";
import { runCli } from "../run_cli.ts";
import type { SweepRecord } from "../../common/protocol.ts";
import { writeFolderFile } from "../../common/run_folder.ts";
import type { Folder } from "../../reports/load.ts";

const refDir = new URL("../../reports/references/", import.meta.url).pathname;

Deno.test("references: the shipped tables parse, cite their source and hold the quoted numbers", () => {
  const zhu = readReferences(join(refDir, "zhu2025_table1.csv"));
  assertEquals(zhu.length, 12);
  ok(zhu.every((r) => r.source.includes("arXiv 2506.01347") && r.protocol.includes("temperature=0.6")));
  const aime = referencesFor(zhu, "aime2025").filter((r) => r.method === "W-REINFORCE");
  assertEquals(aime.map((r) => [r.k, r.value]), [[1, 0.106], [256, 0.567]]);
  const yue = readReferences(join(refDir, "yue2025_table2.csv"));
  assertEquals(yue.filter((r) => r.method === "DAPO").map((r) => r.value), [0.756, 0.964]);
  ok(yue.every((r) => r.source.includes("arXiv 2504.13837") && r.dataset === "math500"));
});

Deno.test("references: a bad file names its line and field", () => {
  const dir = Deno.makeTempDirSync({ prefix: "acebench-ref-" });
  try {
    const path = join(dir, "r.csv");
    Deno.writeTextFileSync(path, "model,dataset,method,k,value,source,protocol\nm,d,x,1,1.2,s,p\n");
    throws(() => readReferences(path), /r\.csv:2: value is '1\.2'/);
    Deno.writeTextFileSync(path, "model,dataset,method,k,value,source\n");
    throws(() => readReferences(path), /r\.csv:1: column 'protocol' is missing/);
    throws(() => readReferences(join(dir, "none.csv")), /cannot read/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("references: protocol differences name each setting, and what is not stated", () => {
  const p = "unbiased pass@k; n=256; temperature=0.6; top_p=0.95; max_tokens=4096";
  assertEquals(
    protocolDifferences(p, { temperature: 0.6, top_p: 1, max_tokens: 4096, n: 8, grader: "acebench" }),
    [
      "top_p 0.95 vs 1",
      "n 256 vs 8",
      "grader not stated by the reference",
    ],
  );
  assertEquals(protocolDifferences("n=4; grader=acebench", { n: 4, grader: "acebench" }), [
    "temperature not stated by the reference",
    "top_p not stated by the reference",
    "max_tokens not stated by the reference",
  ]);
  assertEquals(protocolDifferences("temperature=1", {}).slice(0, 1), [
    "temperature 1 in the reference, not recorded for this run",
  ]);
});

/** An evaluation's record: aime2025, n = 4, temperature 1.0, graded in `mode`. */
function evalRecord(mode: "strict" | "default"): SweepRecord {
  return {
    version: 2,
    design: { kind: "seeds", seeds: [0] },
    methods: [{ name: "Qwen2.5-Math-7B", preset: "external", family: "standard", baseline: null }],
    protocol: {
      datasets: ["aime2025"],
      split: "test",
      template: "boxed",
      sampling: {
        sent: { temperature: 1, top_p: 1, max_tokens: 2048, seed: 0, stop: [] },
        serverDefaults: [],
      },
      grader: { mode, version: "abc", timeoutMs: 2000 },
      n: 4,
      ks: [1, 4],
    },
  };
}

/** eval.json of an evaluation of the first `limit` problems (or `limit` drawn with `subsetSeed`). */
function evalFile(limit: number | null, record: SweepRecord, subsetSeed: number | null = null): Folder {
  const config = {
    command: null,
    endpoint: "http://127.0.0.1:8080/v1",
    model: "Qwen2.5-Math-7B",
    mode: "chat" as const,
    dataset: "aime2025",
    limit,
    subsetSeed,
    template: { name: "boxed", text: "{problem}" },
  };
  return {
    kind: "eval",
    config,
    record,
    configHash: "h",
    runIds: ["qwen"],
    versions: {},
    machine: {},
    writtenAt: "2026-12-04T00:00:00Z",
  };
}

/** A `deno task eval` folder as eval.json v2 holds it: Qwen2.5-Math-7B on aime2025, 3 problems. */
function evalFolder(): string {
  const dir = Deno.makeTempDirSync({ prefix: "acebench-eval-" });
  writeFolderFile(dir, evalFile(null, evalRecord("default")));
  const run = join(dir, "runs", "qwen");
  Deno.mkdirSync(run, { recursive: true });
  writeJson(join(run, "config.json"), {
    runId: "qwen",
    engine: "external",
    method: "Qwen2.5-Math-7B",
    preset: "external",
    seed: 0,
    eval: { n: 4, ks: [1, 4], every: 0 },
  });
  const correct = [[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 1]];
  const lines = correct.flatMap((row, p) =>
    row.map((c, sample) => ({
      step: 0,
      dataset: "aime2025",
      problemId: `aime2025/I-${p + 1}`,
      sample,
      correct: c === 1,
      status: c ? "correct" : "wrong",
      extracted: c ? "7" : "3",
    }))
  );
  appendJsonl(join(run, "eval.jsonl"), lines);
  return dir;
}

Deno.test("report --reference: an eval folder beside Zhu et al.'s AIME 2025 points, protocol differences named", async () => {
  const dir = evalFolder();
  try {
    const references = readReferences(join(refDir, "zhu2025_table1.csv"));
    const report = await buildReport(dir, { iters: 200, references });
    const s = report.summary;
    ok(s.includes("### aime2025: published reference points"), s);
    // pass@1 of this run: (1/4 + 0 + 3/4)/3 = 0.333; the reference's k = 256 has no value here (n = 4)
    ok(
      s.includes(
        "| GRPO (Zhu et al. 2025, arXiv 2506.01347, Table 1) | Qwen2.5-Math-7B | 1 | 0.103 | 0.333 |",
      ),
      s,
    );
    ok(s.includes("| 256 | 0.500 | – |"), s);
    ok(s.includes("temperature 0.6 vs 1; top_p 0.95 vs 1; max_tokens 4096 vs 2048; n 256 vs 4"), s);
    ok(!s.includes("math: published"), "MATH points are not matched to another dataset");
    // The grader's mode is stated (and compared with the reference's).
    ok(
      s.includes(
        "This report's protocol: temperature 1, top_p 1, max_tokens 2048, n 4, grader acebench default (",
      ),
      s,
    );
    writeFolderFile(dir, evalFile(null, evalRecord("strict")));
    const strict = (await buildReport(dir, { iters: 200, references })).summary;
    ok(strict.includes("n 4, grader acebench strict ("), strict);
    const curves = referenceCurves(references, "aime2025");
    assertEquals(curves.length, 3);
    const svg = await renderSvg(passKSpec(report.cells, "aime2025", "step 0 (before RL)", curves));
    ok(
      svg.includes("W-REINFORCE, Qwen2.5-Math-7B (Zhu et al. 2025, arXiv 2506.01347)"),
      "legend names the source",
    );
    // The CLI: writes the overlay, and says which reference datasets matched nothing.
    const perms = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys"]; // the report task's
    const out = await runCli(["report", dir, "--reference", join(refDir, "zhu2025_table1.csv")], perms);
    assertEquals(out.code, 0, out.stderr);
    ok(out.stderr.includes("dataset(s) math match no dataset of this report (aime2025)"), out.stderr);
    ok(Deno.readTextFileSync(join(dir, "plots", "passk_aime2025.svg")).includes("Zhu et al. 2025"));
    const bad = await runCli(["report", "--compare", dir, dir, "--reference", "x.csv"], perms);
    assertEquals(bad.code, 2);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("references: a --limit eval is named a subset beside every published number", () => {
  const full = runProtocol(evalFile(null, evalRecord("default")));
  assertEquals(full.subset, undefined);
  const run = runProtocol(evalFile(200, evalRecord("default")));
  assertEquals(run.subset, "first 200 problems, --limit 200");
  assertEquals(
    runProtocol(evalFile(50, evalRecord("default"), 3)).subset,
    "50 problems drawn with --subset-seed 3",
  );
  const refs = [{
    model: "m",
    dataset: "math500",
    method: "base",
    k: 1,
    value: 0.5,
    source: "Paper 2025",
    protocol: "n=4; temperature=1; top_p=1; max_tokens=64; grader=acebench",
  }];
  const cell = { method: "m", dataset: "math500", slice: "all", k: 1, mean: 0.4 };
  const lines = referenceSection(refs, [cell as never], "math500", run).join("\n");
  ok(
    lines.includes(
      "- Paper 2025: this report covers a subset (first 200 problems, --limit 200), the reference the full set",
    ),
    lines,
  );
});
