import { assertEquals, ok, rejects } from "../../assert.ts";
import { Rng } from "../../../common/prng.ts";
import { boundedMessage, MAX_ERROR_CHARS, serveModel } from "../../../bench/engines/tfjs/serve.ts";
import { loadPolicy } from "../../../bench/engines/tfjs/policy.ts";
import { complete, type Endpoint, preflight } from "../../../bench/external/client.ts";
import { writeTinyCheckpoint } from "./tiny_checkpoint.ts";
import { runCli, taskPermissions } from "../../run_cli.ts";
import { blasError, blasInfo } from "../../../bench/engines/tfjs/ops/blas.ts";
import { skipping } from "../../external_inputs.ts";

const dir = Deno.makeTempDirSync({ prefix: "acebench-serve-" });
await writeTinyCheckpoint(dir);

async function post(url: string, body: unknown) {
  const res = await fetch(url, { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

Deno.test("serve: a tfjs checkpoint answers /v1/models, /v1/completions and /v1/chat/completions", async () => {
  const { server, url } = serveModel(loadPolicy(dir), "tiny", 0);
  try {
    const models = await (await fetch(`${url}/models`)).json();
    assertEquals(models.data.map((m: { id: string }) => m.id), ["tiny"]);
    const req = { model: "tiny", prompt: "3+4=", n: 3, temperature: 1, top_p: 0.9, max_tokens: 8, seed: 5 };
    const a = await post(`${url}/completions`, req);
    assertEquals(a.status, 200, JSON.stringify(a.body));
    assertEquals(a.body.choices.length, 3);
    assertEquals(a.body.choices.map((c: { index: number }) => c.index), [0, 1, 2]);
    ok(a.body.choices.every((c: { text: string }) => c.text.length <= 8), "max_tokens bounds the reply");
    ok(a.body.choices.every((c: { finish_reason: string }) => ["stop", "length"].includes(c.finish_reason)));
    assertEquals(a.body.usage.prompt_tokens, 5, "BOS + 4 characters");
    ok(a.body.usage.completion_tokens >= 3 && a.body.usage.completion_tokens <= 24);
    const again = await post(`${url}/completions`, req);
    assertEquals(again.body.choices, a.body.choices, "same seed, same samples");
    const other = await post(`${url}/completions`, { ...req, seed: 6 });
    ok(JSON.stringify(other.body.choices) !== JSON.stringify(a.body.choices), "another seed, other samples");
    const chat = await post(`${url}/chat/completions`, {
      ...req,
      prompt: undefined,
      messages: [{ role: "user", content: "3+4=" }],
    });
    assertEquals(chat.status, 200);
    assertEquals(
      chat.body.choices.map((c: { message: { content: string } }) => c.message.content),
      a.body.choices.map((c: { text: string }) => c.text),
      "chat uses the last user message as the prompt",
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("serve: bad requests get OpenAI-style errors the client turns into one-line advice", async () => {
  const { server, url } = serveModel(loadPolicy(dir), "tiny", 0);
  try {
    const wrongModel = await post(`${url}/completions`, { model: "gpt-9", prompt: "1+1=" });
    assertEquals(wrongModel.status, 404);
    ok(wrongModel.body.error.message.includes("gpt-9"));
    const badTemp = await post(`${url}/completions`, { model: "tiny", prompt: "1+1=", temperature: -1 });
    assertEquals(badTemp.status, 400);
    ok(badTemp.body.error.message.startsWith("temperature:"));
    const badChar = await post(`${url}/completions`, { model: "tiny", prompt: "1+1=\n" });
    assertEquals(badChar.status, 400);
    ok(/not in the vocabulary/.test(badChar.body.error.message), badChar.body.error.message);
    const ep: Endpoint = {
      baseUrl: url,
      model: "gpt-9",
      mode: "completions",
      timeoutMs: 5000,
      retry: { maxRetries: 0, baseMs: 1, maxMs: 1, maxRetryAfterMs: 1 },
    };
    await rejects(
      preflight(ep),
      /model 'gpt-9' is not served .*\(it serves: tiny\); pass one of those with --model/,
    );
    const r = await complete(
      { ...ep, model: "tiny" },
      "12+3=",
      2,
      { temperature: 0, topP: 1, maxTokens: 6 },
      1,
      Rng.seeded(0),
    );
    assertEquals(r.choices.length, 2);
    assertEquals(r.choices[0].text, r.choices[1].text, "temperature 0 is greedy");
    // A 1 MB prompt, model name or parameter name is never echoed whole: the message keeps its start and end.
    const huge = "1".repeat(1_000_000);
    const long = await post(`${url}/completions`, { model: "tiny", prompt: huge });
    assertEquals(long.status, 400);
    ok(
      long.body.error.message.length <= MAX_ERROR_CHARS + 60,
      `${long.body.error.message.length} characters`,
    );
    ok(
      /^The input \(1000001 tokens\) is longer than the model's context length \(\d+ tokens\)/.test(
        long.body.error.message,
      ),
      long.body.error.message,
    );
    assertEquals(long.body.error.code, "context_length_exceeded");
    const name = await post(`${url}/completions`, { model: huge, prompt: "1" });
    assertEquals(name.status, 404);
    ok(name.body.error.message.length <= MAX_ERROR_CHARS + 60);
    const param = await post(`${url}/completions`, { model: "tiny", prompt: "1", [huge]: 1 });
    assertEquals(param.status, 400);
    ok(param.body.error.message.length <= MAX_ERROR_CHARS + 60 && param.body.error.param.length < 200);
    assertEquals(boundedMessage("short"), "short");
  } finally {
    await server.shutdown();
  }
});

/** `deno task serve` on the test checkpoint with `extra` flags: its URL and first line, and a SIGINT stop (its exit code). */
async function startServe(extra: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...taskPermissions("serve"),
      new URL("../../../cli.ts", import.meta.url).pathname,
      "serve",
      "--checkpoint",
      dir,
      "--port",
      "0",
      "--model",
      "tiny",
      "--prompt-template",
      "raw",
      ...extra,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { CI: "true" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/at (http\S+) /.test(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const stop = async () => {
    child.kill("SIGINT");
    await reader.cancel();
    const status = await child.status;
    await child.stderr.cancel();
    return status.code;
  };
  return { url: out.match(/at (http\S+) /)?.[1], out, stop };
}

Deno.test("serve: the CLI serves on --port 0 and stops cleanly on SIGINT", async () => {
  const { url, out, stop } = await startServe(["--backend", "cpu"]);
  try {
    ok(url, `no URL in the serve output: ${out}`);
    const models = await (await fetch(`${url}/models`)).json();
    assertEquals(models.data[0].id, "tiny");
  } finally {
    assertEquals(await stop(), 0);
  }
});

Deno.test({
  name:
    "serve: --blas-threads runs the products on that many threads, the same replies for 2 and 3, and exits",
  ignore: skipping("serve --blas-threads", blasInfo() === null ? blasError() : null),
  fn: async () => {
    const replies: unknown[] = [];
    for (const threads of ["2", "3"]) {
      const { url, out, stop } = await startServe(["--backend", "blas", "--blas-threads", threads]);
      try {
        ok(url, `no URL in the serve output: ${out}`);
        const cores = navigator.hardwareConcurrency ?? 1;
        ok(out.includes(`${Math.min(Number(threads), cores)} BLAS thread(s)`), out);
        const req = { model: "tiny", prompt: "3+4=", n: 4, temperature: 1, max_tokens: 8, seed: 5 };
        const res = await fetch(`${url}/completions`, { method: "POST", body: JSON.stringify(req) });
        replies.push((await res.json()).choices);
      } finally {
        assertEquals(await stop(), 0);
      }
    }
    assertEquals(replies[0], replies[1], "above one thread the cut, so the bits, are the same");
  },
});

Deno.test("serve: --blas-threads on a backend without BLAS threads is a usage error naming the flag", async () => {
  const r = await runCli(["serve", "--checkpoint", dir, "--backend", "cpu", "--blas-threads", "2"]);
  const err = r.stderr.trim();
  assertEquals(r.code, 2, err);
  ok(/--blas-threads: only the blas backend has BLAS threads \(backend is cpu\)/.test(err), err);
});

Deno.test("serve: the CLI refuses a checkpoint whose prompt length cannot hold the --prompt-template", async () => {
  const r = await runCli([
    "serve",
    "--checkpoint",
    dir,
    "--port",
    "0",
    "--backend",
    "cpu",
    "--prompt-template",
    "boxed",
  ]);
  const err = r.stderr;
  assertEquals(r.code, 1, err);
  ok(
    /its prompts hold 16 tokens \(context 28\), but template 'boxed' alone needs \d+ with BOS.*--prompt-template/
      .test(err),
    err,
  );
});

globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
