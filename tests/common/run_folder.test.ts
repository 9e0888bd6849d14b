// The one migration step of sweep.json/eval.json and config.json, on a folder written by the acebench of record
// v1 (fixtures/v1_sweep: its config's fields beside `record`), and the report of that folder after it.
import { join } from "node:path";
import { cpSync } from "node:fs";
import { assertEquals, ok, throws } from "../assert.ts";
import { readJson, writeJson } from "../../common/fs.ts";
import { RECORD_VERSION } from "../../common/protocol.ts";
import {
  migrateFolderFile,
  migrateRunConfig,
  readFolderFile,
  readRunConfig,
  removeDuplicates,
  writeFolderFile,
} from "../../common/run_folder.ts";
import { readSweepConfig, sweepHash } from "../../bench/sweep/config.ts";
import { runCli } from "../run_cli.ts";
import { tempDir } from "../temp.ts";

const fixture = new URL("./fixtures/v1_sweep/", import.meta.url).pathname;
const v1 = () => readJson<Record<string, unknown>>(join(fixture, "sweep.json"));

Deno.test("run folder: a v1 sweep.json migrates to config, record v2 and provenance, nothing twice", () => {
  const old = v1();
  const before = structuredClone(old);
  const file = migrateFolderFile(old, join(fixture, "sweep.json"));
  assertEquals(old, before, "the migration is pure: its input is not changed");
  assertEquals(file.kind, "sweep");
  assertEquals(file.record, { ...old.record as object, version: RECORD_VERSION });
  const { configHash, runIds, versions, machine, writtenAt, record: _r, backend: _b, ...config } = old;
  assertEquals(file.config, config);
  assertEquals({ ...file, kind: undefined, config: undefined, record: undefined }, {
    kind: undefined,
    config: undefined,
    record: undefined,
    configHash,
    runIds,
    versions,
    machine,
    writtenAt,
  });
  // Written back it is version 2, which migrates to itself.
  const dir = tempDir();
  writeFolderFile(dir, file);
  const stored = readJson<Record<string, unknown>>(join(dir, "sweep.json"));
  ok(!("kind" in stored) && !("seeds" in stored) && !("backend" in stored), Object.keys(stored).join(", "));
  assertEquals(migrateFolderFile(stored, join(dir, "sweep.json")), file);
  assertEquals(readFolderFile(dir), file);
});

Deno.test("run folder: a v1 sweep.json is still a --config, with the config hash it was written with", () => {
  const migrated = readSweepConfig(join(fixture, "sweep.json"));
  assertEquals(migrated.name, "v1-fixture");
  assertEquals(migrated.seeds, [0, 1]);
  assertEquals(sweepHash(migrated), v1().configHash, "resuming the old folder is allowed");
  const dir = tempDir();
  writeFolderFile(dir, readFolderFile(fixture)!);
  assertEquals(readSweepConfig(join(dir, "sweep.json")), migrated);
});

Deno.test("run folder: a v1 config.json migrates (record v2, validated); older ones get base 0, algo.ace, settings.rl", () => {
  const run = readRunConfig(join(fixture, "runs", "ace-grpo_s0"))!;
  assertEquals(run.record?.version, RECORD_VERSION);
  assertEquals(run.record?.method, { name: "ace-grpo", preset: "ace-grpo", family: "ace", baseline: "grpo" });
  assertEquals(run.record?.protocol.grader.mode, "none");
  const raw = { runId: "a_s0", method: "a", ace: { enabled: true }, algo: { klCoef: 0 }, rl: { steps: 3 } };
  const old = migrateRunConfig(raw);
  assertEquals(old.base, 0);
  assertEquals(old.algo, { klCoef: 0, ace: { enabled: true } });
  assertEquals(old.settings, { rl: { steps: 3 } });
  assertEquals(old.record, null);
  ok(!("ace" in old) && !("rl" in old), "ace once, in algo; rl once, in settings");
});

Deno.test("run folder: an evaluation's v1 sweep.json (kind eval) migrates to an eval without the sweep fields", () => {
  const old = {
    kind: "eval",
    name: "m on math500",
    engine: "external",
    methods: [{ name: "m", preset: "external" }],
    seeds: [0],
    sampling: { n: 2 },
    eval: { n: 2, ks: [1, 2] },
    model: "m",
    dataset: "math500",
    limit: null,
    configHash: "abc",
    runIds: ["m"],
  };
  const file = migrateFolderFile(old, "x/sweep.json");
  assertEquals(file.kind, "eval");
  assertEquals(file.config, { model: "m", dataset: "math500", limit: null });
  assertEquals(file.record, null);
});

Deno.test("run folder: `deno task report` renders the v1 folder as the acebench that wrote it did", async () => {
  const dir = join(tempDir(), "v1");
  cpSync(fixture, dir, { recursive: true });
  const { code, stderr } = await runCli(["report", dir]);
  assertEquals(code, 0, stderr);
  const summary = Deno.readTextFileSync(join(dir, "summary.md")).replaceAll(dir, "FIXTURE");
  assertEquals(summary, Deno.readTextFileSync(join(fixture, "summary.md")));
});

Deno.test("run folder: a record of another version is refused on read, naming the file, not migrated", () => {
  const dir = tempDir();
  writeJson(join(dir, "sweep.json"), { ...v1(), record: { ...v1().record as object, version: 3 } });
  throws(() => readFolderFile(dir), (e: Error) => {
    ok(e.message.includes(`${dir}/sweep.json: record.version: 3 is not the version`), e.message);
    return true;
  });
});

Deno.test("run folder: --repair's removeDuplicates keeps the first of repeated samples and metrics lines, in order", () => {
  const dir = tempDir();
  const lines = (rs: object[]) => rs.map((r) => JSON.stringify(r) + "\n").join("");
  const sample = (problemId: string, sample: number, correct: boolean) => ({
    step: 0,
    dataset: "d",
    problemId,
    sample,
    correct,
    status: "x",
    extracted: null,
  });
  const samples = [sample("a", 0, true), sample("b", 0, false), sample("a", 0, false), sample("a", 1, true)];
  Deno.writeTextFileSync(join(dir, "eval.jsonl"), lines(samples));
  const metrics = [{ step: 1, v: 1 }, { step: 2, v: 2 }, { step: 1, v: 3 }, { step: 2, v: 4 }, {
    step: 3,
    v: 5,
  }];
  Deno.writeTextFileSync(join(dir, "metrics.jsonl"), lines(metrics));
  assertEquals(removeDuplicates(dir), { evalSamples: 1, metricsLines: 2 });
  assertEquals(Deno.readTextFileSync(join(dir, "eval.jsonl")), lines([samples[0], samples[1], samples[3]]));
  assertEquals(
    Deno.readTextFileSync(join(dir, "metrics.jsonl")),
    lines([metrics[0], metrics[1], metrics[4]]),
  );
  assertEquals(
    removeDuplicates(dir),
    { evalSamples: 0, metricsLines: 0 },
    "nothing repeated: nothing dropped",
  );
});
