// serve → eval on a checkpoint with the default sweep's 12-token prompt window: compact prompts fit and are
// evaluated; prompts past the window are rejected as such, the run fails, and n is never lowered for them.
import { assertEquals, ok } from "../../assert.ts";
import { exists, readJson, readJsonl, writeJson } from "../../../common/fs.ts";
import { main as reportMain } from "../../../reports/cli.ts";
import { main } from "../../../commands/eval.ts";
import type { EvalRow, SampleRecord } from "../../../bench/external/mod.ts";
import { serveModel } from "../../../bench/engines/tfjs/serve.ts";
import { loadPolicy } from "../../../bench/engines/tfjs/policy.ts";
import { writeTinyCheckpoint } from "./tiny_checkpoint.ts";
import { parseSummary, type SummaryModel } from "../../../reports/mod.ts";
import { tempDir } from "../../temp.ts";

const ckpt = tempDir();
await writeTinyCheckpoint(ckpt, 12);

const args = (url: string, out: string, template: string) => [
  ...["--endpoint", url, "--model", "tiny", "--dataset", "synthetic", "--limit", "6", "--n", "4"],
  ...["--k", "1,4", "--max-tokens", "12", "--prompt-template", template, "--completions", "--out", out],
];

/** Run eval with stderr captured (main writes through console.error). */
async function evalCaptured(argv: string[]): Promise<{ code: number; stderr: string }> {
  const lines: string[] = [], original = console.error;
  console.error = (...a: unknown[]) => lines.push(a.join(" "));
  try {
    return { code: await main(argv), stderr: lines.join("\n") };
  } finally {
    console.error = original;
  }
}

/** Serve the tiny checkpoint on a free port for `body`, then shut the server down. */
async function withServer(body: (url: string, out: string) => Promise<void>): Promise<void> {
  const { server, url } = serveModel(loadPolicy(ckpt), "tiny", 0);
  try {
    await body(url, tempDir());
  } finally {
    await server.shutdown();
  }
}

Deno.test("serve → eval: compact prompts fit a 12-token window and every problem is scored", async () => {
  await withServer(async (url, out) => {
    const { code, stderr } = await evalCaptured(args(url, out, "compact"));
    assertEquals(code, 0, stderr);
    const samples = readJsonl<SampleRecord>(`${out}/runs/tiny/samples.jsonl`);
    assertEquals(samples.length, 24);
    ok(samples.every((s) => s.usage!.prompt_tokens <= 12), "compact prompts fit the window");
    const rows = readJsonl<EvalRow>(`${out}/runs/tiny/eval.jsonl`);
    assertEquals(rows.length, 24);
    ok(rows.every((r) => typeof r.gold === "string" && r.gold.length > 0), "eval records carry the gold");
    ok(
      samples.every((s) => /^[0-9a-z+\-*%=(),]+$/.test(s.prompt ?? "")),
      "samples record the compact prompt sent",
    );
    assertEquals(readJson<{ state: string }>(`${out}/runs/tiny/status.json`).state, "done");
    // The report in eval's words: one model, the requested ks only.
    const summary = Deno.readTextFileSync(`${out}/summary.md`);
    ok(summary.includes("| method | Pass@1 | Pass@4 |"), summary);
    ok(summary.includes("of one model (95% interval over problems"), summary);
    ok(!/seed\(s\)|base model/.test(summary.split("## Reproducibility")[0]), summary);
    // Beside it, the same numbers as JSON, valid against the schema, with the protocol of this eval.
    const json = parseSummary(
      Deno.readTextFileSync(`${out}/summary.json`),
      "summary.json",
    ) as unknown as SummaryModel;
    assertEquals(json.kind, "eval");
    assertEquals(json.protocol?.template, "compact");
    assertEquals(json.protocol?.ks, [1, 4]);
    assertEquals(json.cells.filter((c) => c.slice === "all").map((c) => c.k), [1, 4]);
    assertEquals(json.comparisons, []);
    // The metadata file is eval.json; a folder from before it (its record in sweep.json) is still read, and
    // resuming it moves the record to eval.json.
    ok(exists(`${out}/eval.json`) && !exists(`${out}/sweep.json`), "the record is eval.json");
    // As the acebench of record v1 wrote it: the settings beside `record`, kind "eval".
    const { config, record, ...provenance } = readJson<Record<string, object>>(`${out}/eval.json`);
    writeJson(`${out}/sweep.json`, {
      kind: "eval",
      ...config,
      ...provenance,
      record: { ...record, version: 1 },
    });
    Deno.removeSync(`${out}/eval.json`);
    assertEquals(await reportMain([out]), 0);
    assertEquals(parseSummary(Deno.readTextFileSync(`${out}/summary.json`), "summary.json").kind, "eval");
    const again = await evalCaptured(args(url, out, "compact"));
    assertEquals(again.code, 0, again.stderr);
    ok(exists(`${out}/eval.json`) && !exists(`${out}/sweep.json`), "resuming moved the record to eval.json");
    assertEquals(readJsonl(`${out}/runs/tiny/samples.jsonl`).length, 24, "resumed, nothing sampled twice");
  });
});

Deno.test("serve → eval: prompts past the window are context errors; the run fails, n stays, no retry advice", async () => {
  await withServer(async (url, out) => {
    const { code, stderr } = await evalCaptured(args(url, out, "boxed"));
    assertEquals(code, 1, stderr);
    ok(!/sending n = /.test(stderr), `n was lowered for a prompt error: ${stderr}`);
    ok(stderr.includes("longer than the model's context length"), stderr);
    ok(stderr.includes("no problem was scored"), stderr);
    ok(stderr.includes("the server rejected 6"), stderr);
    ok(!/retry/.test(stderr), `advised a retry that cannot help: ${stderr}`);
    const status = readJson<{ state: string; reason: string }>(`${out}/runs/tiny/status.json`);
    assertEquals(status.state, "failed");
    ok(status.reason.startsWith("every problem failed"), status.reason);
  });
});

Deno.test("eval --prompt-template compact: a non-synthetic dataset is a one-line usage error", async () => {
  const out = tempDir();
  let message = "";
  try {
    await main([
      ...["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--dataset", "math500"],
      ...["--prompt-template", "compact", "--out", out],
    ]);
  } catch (e) {
    message = (e as Error).message;
  }
  ok(/compact/.test(message), message);
});
