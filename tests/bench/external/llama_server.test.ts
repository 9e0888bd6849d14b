// Conformance against a real llama.cpp `llama-server` (built by bench/external/build_llama_server.sh from the
// llama.cpp source node-llama-cpp ships) serving a tiny random-weight GGUF written by tiny_gguf.ts. The real
// `deno task eval` runs against it: completions and chat, n above the server's slots, a context too small for
// the prompt, SIGKILL and resume, and the sampling parameters sent, left to the server and recorded. A counting
// pass-through proxy in front of the server shows what eval sent. Skipped with a message without the binary.
import { assertEquals, ok } from "../../assert.ts";
import { exists, readJson, readJsonl } from "../../../common/fs.ts";
import { readRunConfig } from "../../../common/run_folder.ts";
import type { SampleRecord } from "../../../bench/external/mod.ts";
import { tinyGguf } from "./tiny_gguf.ts";
import { signalEval, spawnTaskEval, taskEval } from "./task_eval.ts";
import { LLAMA_SERVER, missing, skipping } from "../../external_inputs.ts";

const BINARY = LLAMA_SERVER;
const HAVE = exists(BINARY);
skipping("the llama-server conformance tests", HAVE ? null : missing("llamaServer"));

/** A free loopback port (the OS picks one; it is closed again before llama-server binds it). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

interface Posted {
  path: string;
  body: Record<string, unknown>;
  status: number;
}

/**
 * Start llama-server on the GGUF with `ctx` tokens of context and `parallel` slots, behind a pass-through proxy
 * that records every POST (and holds each reply `delayMs`, so a run lasts long enough to be killed midway);
 * resolves once /health answers 200.
 */
async function startLlama(gguf: string, ctx: number, parallel: number, delayMs = 0) {
  const port = freePort();
  const upstream = `http://127.0.0.1:${port}`;
  const server = new Deno.Command(BINARY, {
    args: [
      "-m",
      gguf,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "-c",
      String(ctx),
      "-np",
      String(parallel),
    ]
      .concat(["-t", "1", "-a", "tiny", "--seed", "0"]),
    stdout: "null",
    stderr: "null",
  }).spawn();
  let up = false;
  for (let i = 0; i < 600 && !up; i++) { // up to 60 s on a busy machine
    await new Promise((r) => setTimeout(r, 100));
    up = await fetch(`${upstream}/health`).then(async (r) => (await r.body?.cancel(), r.ok), () => false);
  }
  if (!up) {
    server.kill("SIGKILL");
    await server.status;
    throw new Error(`llama-server did not come up on ${upstream}`);
  }
  const posts: Posted[] = [];
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = req.method === "POST" ? await req.text() : undefined;
    const res = await fetch(`${upstream}${url.pathname}${url.search}`, {
      method: req.method,
      headers: { "content-type": "application/json" },
      body: text,
    });
    if (text !== undefined) posts.push({ path: url.pathname, body: JSON.parse(text), status: res.status });
    if (text !== undefined && delayMs) await new Promise((r) => setTimeout(r, delayMs));
    return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
  });
  return {
    url: `http://127.0.0.1:${(proxy.addr as Deno.NetAddr).port}/v1`,
    upstream,
    posts,
    /** The sampling parameters each slot last ran with, as llama-server reports them (GET /slots). */
    slots: async () =>
      (await (await fetch(`${upstream}/slots`)).json()) as { params?: Record<string, unknown> }[],
    stop: async () => {
      await proxy.shutdown();
      server.kill("SIGTERM");
      await server.status;
    },
  };
}

function args(url: string, out: string, extra: string[]): string[] {
  return [
    "--endpoint",
    url,
    "--model",
    "tiny",
    "--dataset",
    "synthetic",
    "--prompt-template",
    "raw",
    "--temperature",
    "0.6",
    "--top-p",
    "0.95",
    "--max-tokens",
    "8",
    "--retries",
    "2",
    "--timeout",
    "120",
    "--out",
    out,
    ...extra,
  ];
}

const requested = (posts: Posted[]) =>
  posts.reduce((t, p) => t + (p.status === 200 ? Number(p.body.n) : 0), 0);

Deno.test({
  name: "llama-server: completions and chat, n above its slots split once, usage marked, sampling recorded",
  ignore: !HAVE,
  async fn() {
    const dir = Deno.makeTempDirSync();
    const gguf = `${dir}/tiny.gguf`;
    Deno.writeFileSync(gguf, tinyGguf());
    const srv = await startLlama(gguf, 1024, 2);
    try {
      // Completions, n = 4 against 2 slots: llama.cpp answers 400, eval splits into n = 2 and says so once.
      const a = await taskEval(args(srv.url, `${dir}/a`, ["--completions", "--limit", "6", "--n", "4"]));
      assertEquals(a.code, 0, a.stderr);
      assertEquals(a.stderr.match(/refused n = 4/g)?.length, 1, a.stderr);
      ok(a.stderr.includes("Value must be between 1 <= value <= 2"), a.stderr);
      const samples = readJsonl<SampleRecord>(`${dir}/a/runs/tiny/samples.jsonl`);
      assertEquals(samples.length, 24);
      assertEquals(new Set(samples.map((s) => `${s.problemId}#${s.sample}`)).size, 24);
      ok(samples.every((s) => s.request_n === 2 && s.usage_scope === "first_choice"), "usage of one choice");
      ok(
        srv.posts.every((p) =>
          p.path === "/v1/completions" && p.body.temperature === 0.6 && p.body.top_p === 0.95 &&
          p.body.max_tokens === 8 && Number.isInteger(p.body.seed) && JSON.stringify(p.body.stop) === "[]" &&
          !("top_k" in p.body) && !("min_p" in p.body)
        ),
        "eval sends its own parameters and nothing else",
      );
      const summaryA = Deno.readTextFileSync(`${dir}/a/summary.md`);
      ok(
        summaryA.includes(
          "top_k, min_p, repetition_penalty, repeat_penalty, presence_penalty, " +
            "frequency_penalty: server default (not sent)",
        ),
        summaryA,
      );
      ok(summaryA.includes("as reported by the server"), summaryA);
      ok(summaryA.includes("requests split to n = 2, the server refused n = 4"), summaryA);
      const configA = readRunConfig(`${dir}/a/runs/tiny`)!.record!.protocol.sampling;
      ok(
        configA.serverDefaults.includes("top_k") &&
          configA.serverDefaults.includes("min_p"),
      );
      ok(!("top_k" in configA.sent) && !("min_p" in configA.sent), JSON.stringify(configA.sent));
      // What the server's default was: llama-server reports top_k 40, min_p 0.05 for the slots that sampled.
      const used = (await srv.slots()).map((s) => s.params ?? {}).filter((p) => p.top_k !== undefined);
      ok(used.some((p) => p.top_k === 40 && Math.abs(Number(p.min_p) - 0.05) < 1e-6), JSON.stringify(used));

      // Chat with the truncation switched off by --sampling: sent on every request, honoured, recorded.
      const before = srv.posts.length;
      const b = await taskEval(
        args(srv.url, `${dir}/b`, ["--chat", "--limit", "4", "--n", "2", "--sampling", "top_k=0,min_p=0"]),
      );
      assertEquals(b.code, 0, b.stderr);
      ok(!b.stderr.includes("refused n"), b.stderr);
      const chat = srv.posts.slice(before);
      assertEquals(chat.length, 4);
      ok(chat.every((p) => p.path === "/v1/chat/completions" && p.body.top_k === 0 && p.body.min_p === 0));
      const slotParams = (await srv.slots()).map((s) => s.params ?? {});
      ok(slotParams.some((p) => p.top_k === 0 && p.min_p === 0), JSON.stringify(slotParams));
      const configB = readRunConfig(`${dir}/b/runs/tiny`)!.record!.protocol.sampling;
      ok(configB.sent.top_k === 0 && configB.sent.min_p === 0, JSON.stringify(configB.sent));
      ok(
        !configB.serverDefaults.includes("top_k") &&
          !configB.serverDefaults.includes("min_p"),
      );
      const summaryB = Deno.readTextFileSync(`${dir}/b/summary.md`);
      ok(summaryB.includes("sent with --sampling: top_k 0, min_p 0"), summaryB);
      ok(
        summaryB.includes(
          "repetition_penalty, repeat_penalty, presence_penalty, frequency_penalty: server default",
        ),
      );
      assertEquals(readJsonl<SampleRecord>(`${dir}/b/runs/tiny/samples.jsonl`).length, 8);
    } finally {
      await srv.stop();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "llama-server: a prompt past its context is recognised, with advice, and asked for once per problem",
  ignore: !HAVE,
  async fn() {
    const dir = Deno.makeTempDirSync();
    const gguf = `${dir}/tiny.gguf`;
    Deno.writeFileSync(gguf, tinyGguf());
    // One byte-fallback or character token per character: this template alone is far past 256 tokens.
    const template = `${dir}/long.txt`;
    Deno.writeTextFileSync(template, `${"Think it over. ".repeat(40)}{problem}`);
    const srv = await startLlama(gguf, 256, 2);
    try {
      const r = await taskEval([
        ...args(srv.url, `${dir}/out`, ["--completions", "--limit", "3", "--n", "2"]),
        "--prompt-template",
        template,
      ]);
      assertEquals(r.code, 1, r.stderr);
      ok(r.stderr.includes("exceeds the available context size"), r.stderr);
      ok(r.stderr.includes("start llama-server with a larger -c"), r.stderr);
      assertEquals(srv.posts.length, 3, "one request per rejected problem");
      ok(srv.posts.every((p) => p.status === 400 && p.body.n === 2));
      const status = readJson<{ state: string; failedProblems: unknown[] }>(
        `${dir}/out/runs/tiny/status.json`,
      );
      assertEquals([status.state, status.failedProblems.length], ["done", 3]);
    } finally {
      await srv.stop();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "llama-server: SIGKILL mid-run, then the same command loses and repeats nothing; a full resume sends 0",
  ignore: !HAVE,
  async fn() {
    const dir = Deno.makeTempDirSync();
    const gguf = `${dir}/tiny.gguf`;
    Deno.writeFileSync(gguf, tinyGguf());
    // The tiny model answers in milliseconds: replies held 150 ms give the kill a window.
    const srv = await startLlama(gguf, 1024, 2, 150);
    const cmd = args(srv.url, `${dir}/out`, [
      "--completions",
      "--limit",
      "8",
      "--n",
      "4",
      "--max-n-per-request",
      "2",
      "--concurrency",
      "1",
      "--max-tokens",
      "24",
    ]);
    const path = `${dir}/out/runs/tiny/samples.jsonl`;
    try {
      const task = spawnTaskEval(cmd);
      for (let i = 0; i < 3000; i++) { // up to 60 s
        await new Promise((r) => setTimeout(r, 20));
        if (exists(path) && readJsonl(path).length >= 6) break;
      }
      await signalEval(task, "SIGKILL");
      await task.done();
      const before = readJsonl<SampleRecord>(path);
      ok(before.length >= 6 && before.length < 32, `killed after ${before.length} samples`);
      const postsBefore = srv.posts.length;
      const resumed = await taskEval(cmd);
      assertEquals(resumed.code, 0, resumed.stderr);
      const after = readJsonl<SampleRecord>(path);
      assertEquals(after.length, 32);
      assertEquals(new Set(after.map((s) => `${s.problemId}#${s.sample}`)).size, 32, "no duplicates");
      assertEquals(after.slice(0, before.length), before, "the samples written before the kill are kept");
      assertEquals(requested(srv.posts.slice(postsBefore)), 32 - before.length, "only the missing samples");
      const postsResumed = srv.posts.length;
      const again = await taskEval(cmd);
      assertEquals(again.code, 0, again.stderr);
      assertEquals(srv.posts.length, postsResumed, "a full resume sends 0 requests");
      ok(again.stdout.includes("(32 resumed, 0 new"), again.stdout);
    } finally {
      await srv.stop();
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
