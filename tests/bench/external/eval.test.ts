// `deno task eval` end to end: against the scripted fault server (known answers, so Pass@k is checkable), after a
// crash (SIGKILL mid-run, then resume), against `deno task serve` with a tfjs checkpoint, and on bad input.
import { assertClose, assertEquals, ok, rejects } from "../../assert.ts";
import { exists, readJson, readJsonl } from "../../../common/fs.ts";
import { fromCsv } from "../../../common/csv.ts";
import { loadDataset, renderPrompt } from "../../../datasets/mod.ts";
import { main } from "../../../commands/eval.ts";
import type { EvalRow, SampleRecord } from "../../../bench/external/mod.ts";
import { serveModel } from "../../../bench/engines/tfjs/serve.ts";
import { loadPolicy } from "../../../bench/engines/tfjs/policy.ts";
import { startFaultServer } from "./fault_server.ts";
import { writeTinyCheckpoint } from "./tiny_checkpoint.ts";
import { signalEval, spawnTaskEval } from "./task_eval.ts";
import { usage } from "../../../commands/eval.ts";
import { runCli, taskPermissions } from "../../run_cli.ts";
import { readFolderFile, readRunConfig } from "../../../common/run_folder.ts";
import type { EvalFileConfig } from "../../../bench/external/mod.ts";
import { DATASET_MIRROR, missing, skipping } from "../../external_inputs.ts";

Deno.env.set("CI", "true"); // no progress bars in test output
const synthetic = await loadDataset("synthetic");
const goldOf = new Map(synthetic.map((r) => [r.problem, r.answer]));
const template = new URL("./fixtures/qa_template.txt", import.meta.url).pathname;

/** Right on even sample indices, wrong on odd ones: Pass@1 = 1/2, Pass@2 = 5/6, Pass@4 = 1 for n = 4. */
function halfRight(prompt: string, _seed: number, i: number): string {
  const problem = prompt.match(/^Question: (.*)\n/)?.[1] ?? "";
  const gold = goldOf.get(problem);
  if (gold === undefined) return "I do not know this problem";
  return i % 2 === 0 ? `Thinking... so the answer is \\boxed{${gold}}` : "The answer is \\boxed{-12345}";
}

function evalArgs(url: string, out: string, extra: string[] = []) {
  return [
    "--endpoint",
    url,
    "--model",
    "test-model",
    "--dataset",
    "synthetic",
    "--limit",
    "6",
    "--n",
    "4",
    "--k",
    "1,2,4",
    "--completions",
    "--prompt-template",
    template,
    "--concurrency",
    "3",
    "--out",
    out,
    "--retries",
    "6",
    ...extra,
  ];
}

Deno.test("eval: faults, grading and the Pass@k report match the scripted answers", async () => {
  const srv = startFaultServer({
    script: ["500", "429", "drop", "malformed", "ok", "503"],
    retryAfter: "0.05",
    answer: halfRight,
    latencyMs: 5,
  });
  const out = Deno.makeTempDirSync();
  try {
    assertEquals(await main(evalArgs(srv.url, out)), 0);
    const run = `${out}/runs/test-model`;
    const samples = readJsonl<SampleRecord>(`${run}/samples.jsonl`);
    assertEquals(samples.length, 24);
    assertEquals(new Set(samples.map((s) => `${s.problemId}#${s.sample}`)).size, 24, "no sample twice");
    const rows = readJsonl<EvalRow>(`${run}/eval.jsonl`);
    assertEquals(rows.length, 24);
    assertEquals(rows.filter((r) => r.correct).length, 12);
    ok(rows.every((r) => r.correct === (r.sample % 2 === 0)), "even samples right, odd wrong");
    ok(rows.every((r) => r.step === 0 && r.dataset === "synthetic" && typeof r.rule === "string"));
    assertEquals(rows.filter((r) => r.meta.truncated).length, 6, "finish_reason length is flagged");
    const file = readFolderFile<EvalFileConfig>(out)!;
    assertEquals(file.kind, "eval");
    assertEquals(file.config.template.text, Deno.readTextFileSync(template));
    assertEquals(file.record!.protocol.n, 4);
    assertEquals(readJson<{ state: string }>(`${run}/status.json`).state, "done");
    const csv = fromCsv(Deno.readTextFileSync(`${out}/passk.csv`)) as Record<string, string>[];
    const all = csv.filter((r) => r.slice === "all");
    const at = (k: number) =>
      Number(all.find((r) => Number(r.k) === k)?.passAtK ?? all.find((r) => Number(r.k) === k)?.pass_at_k);
    assertClose(at(1), 0.5, 1e-6, "pass@1"); // passk.csv keeps 6 decimals
    assertClose(at(2), 5 / 6, 1e-6, "pass@2");
    assertClose(at(4), 1, 1e-6, "pass@4");
    ok(Deno.readTextFileSync(`${out}/summary.md`).includes("test-model"));
    // Same command again: everything is on disk, so no sampling request is made.
    const before = srv.log.requests;
    assertEquals(await main(evalArgs(srv.url, out)), 0);
    assertEquals(srv.log.requests, before);
    // Different sampling settings may not be mixed into the same folder.
    await rejects(
      main(evalArgs(srv.url, out, ["--temperature", "0.2"])),
      /different settings.*another --out/,
    );
  } finally {
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("eval: killed mid-run (SIGKILL), the same command resumes without losing or repeating samples", async () => {
  const srv = startFaultServer({ answer: halfRight, latencyMs: 60 });
  // One sample per request: every answer is choice 0, so every stored sample is a right one.
  const oneAtATime = ["--max-n-per-request", "1", "--concurrency", "1"];
  const out = Deno.makeTempDirSync();
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...taskPermissions("eval"),
        new URL("../../../cli.ts", import.meta.url).pathname,
        "eval",
        ...evalArgs(srv.url, out, oneAtATime),
      ],
      stdout: "null",
      stderr: "null",
      env: { CI: "true" },
    }).spawn();
    const samplesPath = `${out}/runs/test-model/samples.jsonl`;
    for (let i = 0; i < 1500; i++) { // up to 30 s: the child may start slowly on a busy machine
      await new Promise((r) => setTimeout(r, 20));
      if (readJsonl(samplesPath).length >= 5) break;
    }
    child.kill("SIGKILL");
    await child.status;
    const before = readJsonl<SampleRecord>(samplesPath);
    ok(before.length >= 5 && before.length < 24, `killed after ${before.length} samples`);
    const requestsBefore = srv.log.requests;
    assertEquals(await main(evalArgs(srv.url, out, oneAtATime)), 0);
    const after = readJsonl<SampleRecord>(samplesPath);
    assertEquals(after.length, 24);
    assertEquals(new Set(after.map((s) => `${s.problemId}#${s.sample}`)).size, 24);
    assertEquals(
      after.slice(0, before.length),
      before,
      "samples written before the crash are kept as they were",
    );
    const resumedChoices = srv.log.bodies.slice(requestsBefore).reduce((t, b) => t + Number(b.n), 0);
    assertEquals(resumedChoices, 24 - before.length, "the resumed run asked only for the missing samples");
    const notRight = readJsonl<EvalRow>(`${out}/runs/test-model/eval.jsonl`).filter((r) => !r.correct);
    const texts = new Map(after.map((s) => [`${s.problemId}#${s.sample}`, s.text]));
    assertEquals(
      notRight.map((r) =>
        `${r.problemId}#${r.sample} ${r.status} ${r.rule} ${texts.get(`${r.problemId}#${r.sample}`)}`
      ),
      [],
    );
  } finally {
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("eval: against `serve` with a tfjs checkpoint, the whole path runs and is reproducible", async () => {
  const ckpt = Deno.makeTempDirSync();
  await writeTinyCheckpoint(ckpt, 40);
  const { server, url } = serveModel(loadPolicy(ckpt), "tiny", 0);
  const outA = Deno.makeTempDirSync(), outB = Deno.makeTempDirSync();
  try {
    const args = (out: string, extra: string[] = []) => [
      "--endpoint",
      url,
      "--model",
      "tiny",
      "--dataset",
      "synthetic",
      "--limit",
      "5",
      "--subset-seed",
      "3",
      "--n",
      "4",
      "--temperature",
      "1",
      "--top-p",
      "1",
      "--max-tokens",
      "12",
      "--prompt-template",
      "raw",
      "--out",
      out,
      ...extra,
    ];
    assertEquals(await main(args(outA)), 0);
    assertEquals(await main(args(outB, ["--chat", "--concurrency", "1", "--max-n-per-request", "2"])), 0);
    const texts = (out: string) =>
      readJsonl<SampleRecord>(`${out}/runs/tiny/samples.jsonl`).map((s) =>
        `${s.problemId}#${s.sample}:${s.text}`
      ).sort();
    assertEquals(texts(outA).length, 20);
    const rows = readJsonl<EvalRow>(`${outA}/runs/tiny/eval.jsonl`);
    assertEquals(rows.length, 20);
    ok(rows.every((r) => ["correct", "wrong", "no_answer", "parse_error", "timeout"].includes(r.status)));
    const usage = readJsonl<SampleRecord>(`${outA}/runs/tiny/samples.jsonl`)[0].usage!;
    ok(usage.prompt_tokens > 1 && usage.completion_tokens >= 4);
    ok(Deno.readTextFileSync(`${outA}/passk.csv`).length > 0);
    // Request seeds derive from (seed, problem, first sample index), so the same command in a fresh folder
    // reproduces every text; a chat run with n=2 per request draws its last two samples under other seeds.
    ok(JSON.stringify(texts(outB)) !== JSON.stringify(texts(outA)));
    const outC = Deno.makeTempDirSync();
    assertEquals(await main(args(outC)), 0);
    assertEquals(texts(outC), texts(outA));
    Deno.removeSync(outC, { recursive: true });
  } finally {
    await server.shutdown();
    for (const d of [ckpt, outA, outB]) Deno.removeSync(d, { recursive: true });
  }
});

Deno.test("eval: bad input gets one-line errors that say what to do", async () => {
  const out = Deno.makeTempDirSync();
  const empty = Deno.makeTempDirSync();
  try {
    await rejects(
      main([
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--dataset",
        "math500",
        "--cache-dir",
        empty,
        "--out",
        out,
      ]),
      /dataset 'math500' is not fetched yet: run `deno task fetch math500 --cache-dir .*` or pass --mirror DIR/,
    );
    // A port that was just free: nothing listens there.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const closedPort = (listener.addr as Deno.NetAddr).port;
    listener.close();
    await rejects(
      main([
        "--endpoint",
        `http://127.0.0.1:${closedPort}/v1`,
        "--model",
        "m",
        "--dataset",
        "synthetic",
        "--limit",
        "1",
        "--out",
        out,
        "--retries",
        "0",
      ]),
      new RegExp(
        `cannot reach http://127\\.0\\.0\\.1:${closedPort}/v1 \\(.*\\); start the server or fix --endpoint`,
      ),
    );
    assertEquals(
      [...Deno.readDirSync(out)].map((e) => e.name),
      [],
      "a failed preflight writes nothing, no lock left",
    );
    const fresh = `${out}/new-folder`;
    await rejects(
      main([
        "--endpoint",
        `http://127.0.0.1:${closedPort}/v1`,
        "--model",
        "m",
        "--dataset",
        "synthetic",
        "--limit",
        "1",
        "--out",
        fresh,
        "--retries",
        "0",
      ]),
      /cannot reach/,
    );
    ok(!exists(fresh), "a folder created for the lock is removed again");
    await rejects(
      main(["--endpoint", "x", "--model", "m", "--dataset", "nope", "--out", out]),
      /--dataset: unknown 'nope'/,
    );
    await rejects(
      main([
        "--endpoint",
        "http://h",
        "--model",
        "m",
        "--dataset",
        "aime2025",
        "--n",
        "4",
        "--k",
        "8",
        "--out",
        out,
      ]),
      /k=8 > --n 4/,
    );
    await rejects(
      main([
        "--endpoint",
        "http://h",
        "--model",
        "m",
        "--dataset",
        "aime2025",
        "--prompt-template",
        "nope.txt",
        "--out",
        out,
      ]),
      /--prompt-template: 'nope.txt' is neither a shipped template/,
    );
    Deno.env.delete("ACEBENCH_TEST_NO_KEY");
    await rejects(
      main([
        "--endpoint",
        "http://h",
        "--model",
        "m",
        "--dataset",
        "synthetic",
        "--api-key-env",
        "ACEBENCH_TEST_NO_KEY",
        "--out",
        out,
      ]),
      /--api-key-env ACEBENCH_TEST_NO_KEY: the variable is empty or not set/,
    );
    const srv = startFaultServer({ apiKey: "right" });
    Deno.env.set("ACEBENCH_TEST_KEY", "wrong");
    try {
      await rejects(
        main([
          "--endpoint",
          srv.url,
          "--model",
          "test-model",
          "--dataset",
          "synthetic",
          "--limit",
          "1",
          "--api-key-env",
          "ACEBENCH_TEST_KEY",
          "--out",
          out,
        ]),
        /refused the key in \$ACEBENCH_TEST_KEY .*pass --api-key-env VAR naming a variable that holds a valid key/,
      );
      Deno.env.set("ACEBENCH_TEST_KEY", "right");
      await rejects(
        main([
          "--endpoint",
          srv.url,
          "--model",
          "gpt-9",
          "--dataset",
          "synthetic",
          "--limit",
          "1",
          "--api-key-env",
          "ACEBENCH_TEST_KEY",
          "--out",
          out,
        ]),
        /model 'gpt-9' is not served by .*pass one of those with --model/,
      );
    } finally {
      await srv.close();
    }
  } finally {
    Deno.removeSync(out, { recursive: true });
    Deno.removeSync(empty, { recursive: true });
  }
});

const mirror = DATASET_MIRROR.slice(0, -1);
const haveMirror = exists(mirror);
skipping("the eval full-data test", haveMirror ? null : missing("datasetMirror"));

Deno.test({
  name: "eval: MATH-500 from the mirror, graded per subject and level in the report",
  ignore: !haveMirror,
  async fn() {
    const cache = Deno.makeTempDirSync(), out = Deno.makeTempDirSync();
    const records = await loadDataset("math500", { cacheDir: cache, mirror });
    const goldByPrompt = new Map(records.map((r) => [renderPrompt(r, "boxed"), r.answer]));
    const srv = startFaultServer({
      answer: (prompt, _seed, i) =>
        i % 2 === 0 ? `So we get \\boxed{${goldByPrompt.get(prompt)}}.` : "\\boxed{\\pi^{99}}",
    });
    try {
      const args = [
        "--endpoint",
        srv.url,
        "--model",
        "test-model",
        "--dataset",
        "math500",
        "--cache-dir",
        cache,
      ];
      assertEquals(await main([...args, "--limit", "12", "--subset-seed", "5", "--n", "2", "--out", out]), 0);
      const rows = readJsonl<EvalRow>(`${out}/runs/test-model/eval.jsonl`);
      assertEquals(rows.length, 24);
      const wrong = rows.filter((r) => r.correct !== (r.sample === 0));
      assertEquals(
        wrong.map((r) => `${r.problemId}#${r.sample}: ${r.status} ${r.extracted}`),
        [],
        "gold graded right",
      );
      ok(rows.every((r) => typeof r.meta.subject === "string" && Number.isInteger(r.meta.level)));
      const slices = new Set(
        (fromCsv(Deno.readTextFileSync(`${out}/passk.csv`)) as { slice: string }[]).map((r) => r.slice),
      );
      ok(
        [...slices].some((s) => s.startsWith("subject=")) && [...slices].some((s) => s.startsWith("level=")),
        [...slices].join(),
      );
    } finally {
      await srv.close();
      Deno.removeSync(cache, { recursive: true });
      Deno.removeSync(out, { recursive: true });
    }
  },
});

const cliPath = new URL("../../../cli.ts", import.meta.url).pathname;
/** vLLM's wording when prompt + max_tokens exceed the context (vllm/entrypoints/openai/serving_engine.py). */
const vllmContextError = "This model's maximum context length is 2048 tokens. However, you requested 4150 " +
  "tokens (54 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.";

Deno.test("eval: a problem the server rejects is listed, left out of Pass@k, and the only one a re-run requests", async () => {
  const victim = synthetic[2];
  let rejecting = true;
  const srv = startFaultServer({
    answer: halfRight,
    reject: (prompt) =>
      rejecting && prompt.includes(`Question: ${victim.problem}\n`) ? vllmContextError : null,
  });
  const out = Deno.makeTempDirSync();
  const errors: string[] = [];
  const error = console.error;
  console.error = (...a: unknown[]) => errors.push(a.join(" "));
  try {
    assertEquals(await main(evalArgs(srv.url, out)), 1, "non-zero exit when a problem failed");
    console.error = error;
    const run = `${out}/runs/test-model`;
    const samples = readJsonl<SampleRecord>(`${run}/samples.jsonl`);
    assertEquals(samples.length, 20, "the other 5 problems × 4 samples were all sampled");
    ok(samples.every((s) => s.problemId !== victim.id));
    const status = readJson<{ state: string; failedProblems: { problemId: string; error: string }[] }>(
      `${run}/status.json`,
    );
    assertEquals(status.state, "done");
    assertEquals(status.failedProblems.map((f) => f.problemId), [victim.id]);
    ok(status.failedProblems[0].error.startsWith("HTTP 400: This model's maximum context length"));
    ok(
      status.failedProblems[0].error.endsWith(
        "--max-tokens 1994 would fit (context 2048 − prompt 54 tokens)",
      ),
    );
    const printed = errors.filter((l) => l.includes(victim.id));
    assertEquals(printed.length, 1, `the problem is named once: ${errors.join("\n")}`);
    ok(printed[0].includes("--max-tokens 1994 would fit"), printed[0]);
    const summary = Deno.readTextFileSync(`${out}/summary.md`);
    ok(summary.includes("## Run health: synthetic"), summary);
    ok(summary.includes("| Pass@k computed over | 5 of 6 problems (1 left out) |"), summary);
    ok(summary.includes(`- \`${victim.id}\`: HTTP 400: This model's maximum context length`), summary);
    ok(summary.includes("| truncated (finish_reason length) | 5 (25.0%), graded as they are |"), summary);
    const csv = fromCsv(Deno.readTextFileSync(`${out}/passk.csv`)) as Record<string, string>[];
    const all = csv.filter((r) => r.slice === "all");
    assertEquals(all.map((r) => r.problems), ["5", "5", "5"]);
    assertEquals(all.map((r) => r.truncated), ["5", "5", "5"], "passk.csv counts the truncated samples");
    assertEquals((Deno.statSync(`${run}/samples.jsonl`).mode! & 0o777).toString(8), "644");
    // The server accepts it now: the same command asks for that problem only, and exits 0.
    rejecting = false;
    const before = srv.log.bodies.length;
    assertEquals(await main(evalArgs(srv.url, out)), 0);
    const asked = srv.log.bodies.slice(before).map((b) => String(b.prompt));
    ok(asked.length > 0 && asked.every((p) => p.includes(`Question: ${victim.problem}\n`)), asked.join());
    assertEquals(readJsonl(`${run}/samples.jsonl`).length, 24);
    assertEquals(readJson<Record<string, unknown>>(`${run}/status.json`).failedProblems, undefined);
  } finally {
    console.error = error;
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("eval: --exclude-truncated leaves cut-off samples out of Pass@k; run health counts retries by cause", async () => {
  const srv = startFaultServer({ answer: halfRight, script: ["503", "503", "429"], retryAfter: "0" });
  const out = Deno.makeTempDirSync();
  try {
    assertEquals(await main(evalArgs(srv.url, out, ["--exclude-truncated", "--concurrency", "1"])), 0);
    const rows = readJsonl<EvalRow>(`${out}/runs/test-model/eval.jsonl`);
    assertEquals(rows.length, 18, "the fault server cuts off sample 2 of every 4: 6 left out");
    ok(rows.every((r) => !r.meta.truncated));
    const summary = Deno.readTextFileSync(`${out}/summary.md`);
    ok(summary.includes("| truncated (finish_reason length) | 6 (25.0%), excluded from Pass@k"), summary);
    ok(summary.includes("| retries | 3 (HTTP 503: 2, HTTP 429: 1) |"), summary);
    ok(/\| prompt \/ completion tokens \| 42 \/ 120 \|/.test(summary), summary);
  } finally {
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("eval: folder state is checked before anything is written; a corrupt line is repaired with --repair", async () => {
  const srv = startFaultServer({ answer: halfRight });
  const out = Deno.makeTempDirSync();
  try {
    assertEquals(await main(evalArgs(srv.url, out)), 0);
    const run = `${out}/runs/test-model`;
    // A key refused after the preflight (GET /models is open, sampling is not): the folder stays as it was.
    const sweepBefore = Deno.readTextFileSync(`${out}/eval.json`);
    const statusBefore = Deno.readTextFileSync(`${run}/status.json`);
    const refusing = startFaultServer({ script: ["401", "401", "401"] });
    try {
      await rejects(main(evalArgs(refusing.url, out, ["--n", "8", "--k", "1"])), /refused/);
    } finally {
      await refusing.close();
    }
    assertEquals(Deno.readTextFileSync(`${out}/eval.json`), sweepBefore);
    assertEquals(Deno.readTextFileSync(`${run}/status.json`), statusBefore);
    // A corrupt line in the middle: the error names the line and --repair; --repair drops it after a backup.
    const lines = Deno.readTextFileSync(`${run}/samples.jsonl`).split("\n");
    lines[3] = '{"problemId": "synthetic/x", "sam';
    Deno.writeTextFileSync(`${run}/samples.jsonl`, lines.join("\n"));
    await rejects(main(evalArgs(srv.url, out)), /samples\.jsonl:4: invalid JSON .*--repair to drop/);
    const before = srv.log.bodies.length;
    assertEquals(await main(evalArgs(srv.url, out, ["--repair"])), 0);
    assertEquals(srv.log.bodies.length - before, 1, "only the dropped sample is requested again");
    assertEquals(readJsonl(`${run}/samples.jsonl`).length, 24);
    ok([...Deno.readDirSync(run)].some((e) => e.name.startsWith("samples.jsonl.bak-")), "a backup is kept");
    // Samples without the eval.json that says how they were made are refused, not reused.
    Deno.removeSync(`${out}/eval.json`);
    await rejects(main(evalArgs(srv.url, out)), /holds samples .* but no eval\.json.*move runs\/ away/);
    ok(!exists(`${out}/eval.json`), "nothing was written");
  } finally {
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("eval CLI: negative and empty values are one-line errors naming the flag, then where help is", async () => {
  const run = async (...args: string[]) => {
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...taskPermissions("eval"), cliPath, "eval", ...args],
      env: { CI: "true" },
    }).output();
    return { code: r.code, err: new TextDecoder().decode(r.stderr) };
  };
  const base = [
    "--endpoint",
    "http://127.0.0.1:9/v1",
    "--model",
    "m",
    "--dataset",
    "synthetic",
    "--out",
    "x",
  ];
  const negative = await run(...base, "--seed", "-1");
  assertEquals(negative.code, 2);
  assertEquals(
    negative.err.trim().split("\n"),
    ["acebench eval: --seed: expected a number in [0, Infinity], got '-1'", "see `deno task eval --help`"],
  );
  const empty = await run(...base, "--k=");
  assertEquals(empty.code, 2);
  assertEquals(empty.err.trim().split("\n")[0], "acebench eval: --k: the value is empty");
});

Deno.test("eval: Ctrl-C (SIGINT) or SIGTERM leaves status 'interrupted', frees the folder, and resumes", async () => {
  const srv = startFaultServer({ answer: halfRight, latencyMs: 150 });
  const out = Deno.makeTempDirSync();
  const args = evalArgs(srv.url, out, ["--max-n-per-request", "1", "--concurrency", "1"]);
  const samplesPath = `${out}/runs/test-model/samples.jsonl`;
  try {
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      const task = spawnTaskEval(args);
      const had = exists(samplesPath) ? readJsonl(samplesPath).length : 0;
      for (let i = 0; i < 1500; i++) { // up to 30 s
        await new Promise((r) => setTimeout(r, 20));
        if (exists(samplesPath) && readJsonl(samplesPath).length >= had + 2) break;
      }
      await signalEval(task, signal);
      const r = await task.done();
      assertEquals(r.code, code, r.stderr);
      ok(r.stderr.includes(`interrupted by ${signal}`), r.stderr);
      const status = readJson<{ state: string; reason: string }>(`${out}/runs/test-model/status.json`);
      assertEquals(status.state, "interrupted");
      ok(status.reason.includes(signal) && status.reason.includes("re-run the same command"), status.reason);
      ok(!exists(`${out}/.lock`), "the lock is released");
      ok(readJsonl(samplesPath).length < 24, "stopped before the end");
    }
    assertEquals(await main(args), 0);
    const samples = readJsonl<SampleRecord>(samplesPath);
    assertEquals(new Set(samples.map((s) => `${s.problemId}#${s.sample}`)).size, 24);
    assertEquals(samples.length, 24);
    assertEquals(readJson<{ state: string }>(`${out}/runs/test-model/status.json`).state, "done");
  } finally {
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

Deno.test("eval: --sampling parameters are sent, recorded in config.json and the report, the rest named as defaults", async () => {
  const srv = startFaultServer({ answer: halfRight });
  const out = Deno.makeTempDirSync();
  try {
    await rejects(main(evalArgs(srv.url, out, ["--sampling", "temperature=1"])), /set by --temperature/);
    assertEquals(await main(evalArgs(srv.url, out, ["--sampling", "top_k=5,repetition_penalty=1.1"])), 0);
    ok(srv.log.bodies.every((b) => b.top_k === 5 && b.repetition_penalty === 1.1 && !("min_p" in b)));
    const sampling = readRunConfig(`${out}/runs/test-model`)!.record!.protocol.sampling;
    const { top_k, repetition_penalty } = sampling.sent;
    assertEquals({ top_k, repetition_penalty }, { top_k: 5, repetition_penalty: 1.1 });
    assertEquals(sampling.serverDefaults, [
      "min_p",
      "repeat_penalty",
      "presence_penalty",
      "frequency_penalty",
    ]);
    const summary = Deno.readTextFileSync(`${out}/summary.md`);
    ok(summary.includes("sent with --sampling: top_k 5, repetition_penalty 1.1"), summary);
    ok(
      summary.includes(
        "min_p, repeat_penalty, presence_penalty, frequency_penalty: server default (not sent)",
      ),
    );
    // Other server parameters are other samples: the folder refuses them.
    await rejects(
      main(evalArgs(srv.url, out, ["--sampling", "top_k=6,repetition_penalty=1.1"])),
      /different settings/,
    );
    ok(/--n N +samples per problem.*\(default 1\)/.test(usage), "--help shows the true default of --n");
  } finally {
    await srv.close();
    Deno.removeSync(out, { recursive: true });
  }
});

/** Boxed on even sample indices; the bare number in prose on odd ones (only the default grader reads it). */
function boxedOrProse(prompt: string, _seed: number, i: number): string {
  const gold = goldOf.get(prompt.match(/^Question: (.*)\n/)?.[1] ?? "") ?? "0";
  return i % 2 === 0 ? `so the answer is \\boxed{${gold}}` : `Adding up, the result is ${gold}`;
}

Deno.test("eval: --grader strict|default is recorded and printed; report --compare refuses the other mode", async () => {
  const srv = startFaultServer({ answer: boxedOrProse });
  const root = Deno.makeTempDirSync();
  const [lenient, strict] = [`${root}/default`, `${root}/strict`];
  try {
    assertEquals(await main(evalArgs(srv.url, lenient)), 0);
    assertEquals(await main(evalArgs(srv.url, strict, ["--grader", "strict"])), 0);
    const correct = (dir: string) =>
      readJsonl<EvalRow>(`${dir}/runs/test-model/eval.jsonl`).filter((r) => r.correct).length;
    assertEquals(correct(strict), 12, "strict reads only the boxed answers");
    ok(correct(lenient) > 12, `the default grader also reads prose answers: ${correct(lenient)}`);
    const mode = (dir: string) => readFolderFile(dir)!.record!.protocol.grader.mode;
    assertEquals([mode(lenient), mode(strict)], ["default", "strict"]);
    ok(
      Deno.readTextFileSync(`${strict}/summary.md`).includes(
        "- grader: strict (explicit answer markers only",
      ),
    );
    const refused = await runCli(["report", "--compare", lenient, strict]);
    assertEquals(refused.code, 2, refused.stderr);
    ok(refused.stderr.includes('grader.mode is "default" in'), refused.stderr);
    ok(refused.stderr.includes("--allow-protocol-change"), refused.stderr);
    const allowed = await runCli(["report", "--compare", lenient, strict, "--allow-protocol-change"]);
    assertEquals(allowed.code, 0, allowed.stderr);
    ok(allowed.stdout.includes('| grader.mode | `"default"` | `"strict"` | ≠ |'), allowed.stdout);
    ok(allowed.stdout.includes("warning: evaluation protocol differs: grader.mode"), allowed.stdout);
    // Eval outputs speak of one model's evaluation: no seeds, base models or sweeps where there are none.
    ok(/hashes .*the grader mode is not part of it/.test(allowed.stdout), allowed.stdout);
    ok(allowed.stdout.includes("paired by problem"), allowed.stdout);
    const rendered = [
      ["report --compare", allowed.stdout],
      ...[lenient, strict].flatMap((dir) => [
        [`${dir}/summary.md`, Deno.readTextFileSync(`${dir}/summary.md`)],
        [`${dir}/plots/passk_synthetic.svg`, Deno.readTextFileSync(`${dir}/plots/passk_synthetic.svg`)],
      ]),
    ];
    for (const [name, text] of rendered) {
      const words = text.match(/\bseeds\b|\bbase models?\b|\bbases\b|\bsweeps?\b|[^(]\bseed\(s\)/gi);
      const at = words ? text.indexOf(words[0]) : 0;
      ok(
        words === null,
        `${name} speaks of a sweep: ${words?.join(", ")}: …${text.slice(at - 200, at + 100)}…`,
      );
    }
    // Two evals pair problem by problem whatever their --seed (a protocol change) and model names: a row each.
    assertEquals(await main(evalArgs(srv.url, `${root}/seed1`, ["--seed", "1"])), 0);
    const seeds = await runCli(["report", "--compare", lenient, `${root}/seed1`, "--allow-protocol-change"]);
    assertEquals(seeds.code, 0, seeds.stderr);
    ok(seeds.stdout.includes("| test-model | synthetic | "), seeds.stdout);
    await rejects(
      main(evalArgs(srv.url, `${root}/x`, ["--grader", "lenient"])),
      /--grader: expected one of default, strict, got 'lenient'/,
    );
  } finally {
    await srv.close();
    Deno.removeSync(root, { recursive: true });
  }
});
