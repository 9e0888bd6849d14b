// Pure pieces of the run report: the context-limit reading, run-health counting and scoping, the progress line.
import { assertEquals, ok, throws } from "../../assert.ts";
import { isContextError, maxTokensAdvice, parseContextLimit } from "../../../bench/external/context_limit.ts";
import { describeSampling, parseServerSampling, serverDefaults } from "../../../bench/external/sampling.ts";
import { nLimitOf } from "../../../bench/external/sampler.ts";
import { renderHealth, retryCause, runHealth } from "../../../bench/external/health.ts";
import { formatSeconds, ProgressLog } from "../../../bench/external/progress_log.ts";
import type { SampleRecord } from "../../../bench/external/samples.ts";

Deno.test("context limit: vLLM, OpenAI and SGLang wordings give the --max-tokens that fits", () => {
  // Wordings as these servers emit them (vLLM serving_engine.py; OpenAI API; SGLang tokenizer_manager.py).
  const vllmOld = "This model's maximum context length is 4096 tokens. However, you requested 4596 tokens " +
    "(500 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.";
  const vllmNew =
    "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context " +
    "length is 4096 tokens and your request has 69 input tokens (4096 > 4096 - 69).";
  const sglang = "Requested token count exceeds the model's maximum context length of 2048 tokens. You " +
    "requested a total of 2100 tokens: 100 tokens from the input messages and 2000 tokens for the completion.";
  assertEquals(parseContextLimit(vllmOld), { context: 4096, prompt: 500, perSlot: false });
  assertEquals(parseContextLimit(vllmNew), { context: 4096, prompt: 69, perSlot: false });
  assertEquals(parseContextLimit(sglang), { context: 2048, prompt: 100, perSlot: false });
  assertEquals(parseContextLimit("HTTP 400: bad request"), null);
  assertEquals(
    maxTokensAdvice(vllmOld, 4096),
    "--max-tokens 3596 would fit (context 4096 − prompt 500 tokens)",
  );
  assertEquals(maxTokensAdvice("bad request", 4096), "");
  ok(
    maxTokensAdvice("maximum context length is 100 tokens, 120 in the prompt", 8).includes(
      "no --max-tokens fits",
    ),
  );
});

function rec(problemId: string, sample: number, over: Partial<SampleRecord> = {}): SampleRecord {
  return {
    problemId,
    sample,
    text: "x",
    finish_reason: "stop",
    usage: { prompt_tokens: 10, completion_tokens: 40 },
    latency_ms: 100,
    request: `${problemId}#0`,
    request_n: 4,
    attempts: 1,
    ...over,
  };
}

Deno.test("run health: counts only this run's problems and sample indices; tokens pro rata; retries by cause", () => {
  const onDisk = new Map<string, Map<number, SampleRecord>>();
  // p0: one request of 4 samples, two retries before it; sample 3 cut off. p1: same. p2: not selected.
  for (const id of ["p0", "p1", "p2"]) {
    const m = new Map<number, SampleRecord>();
    for (let i = 0; i < 4; i++) {
      m.set(
        i,
        rec(id, i, {
          finish_reason: i === 3 ? "length" : "stop",
          attempts: id === "p0" ? 3 : 1,
          retry_reasons: id === "p0" ? ["HTTP 503: busy", "no reply within 600000 ms"] : undefined,
          latency_ms: id === "p0" ? 300 : 100,
        }),
      );
    }
    onDisk.set(id, m);
  }
  const failed = [{ problemId: "p3", kind: "rejected" as const, error: "HTTP 400: too long" }];
  const given = { dataset: "synthetic", n: 2, scored: 2, failed, excludeTruncated: false, nSplit: null };
  const h = runHealth(given, ["p0", "p1", "p3"], onDisk);
  assertEquals(h.samplesKept, 4, "2 problems × n 2 (p2 not selected, indices 2-3 beyond --n)");
  assertEquals(h.truncated, 0, "the truncated sample 3 is beyond --n 2");
  assertEquals(h.requests, 2);
  assertEquals(h.promptTokens, 20);
  assertEquals(h.completionTokens, 40, "half of each request's 40 completion tokens");
  assertEquals(h.retries, 2);
  assertEquals(h.retryCauses, { "HTTP 503": 1, timeout: 1 });
  assertEquals(h.latencyMs, { p50: 100, p95: 300, p99: 300 });
  const md = renderHealth(h);
  ok(md.includes("| samples kept | 4 of 6 (3 problems × n 2) |"), md);
  ok(md.includes("| Pass@k computed over | 2 of 3 problems (1 left out) |"), md);
  ok(md.includes("- `p3`: HTTP 400: too long"), md);
  assertEquals(retryCause("connection dropped mid-reply (x)"), "dropped connection");
  assertEquals(retryCause("malformed JSON reply: {"), "malformed reply");
  assertEquals(retryCause("fetch failed: Connection refused"), "network error");
});

Deno.test("progress line: done/total, rate of new samples, ETA and the last error", () => {
  let t = 0;
  const lines: string[] = [];
  const log = new ProgressLog("eval m", 100, 15_000, (l) => lines.push(l), () => t);
  log.update(20); // resumed
  t = 10_000;
  log.update(40);
  log.error("p7: HTTP 503: busy");
  assertEquals(log.line(), "eval m: 40/100 samples, 2.0/s, ETA 30s, last error: p7: HTTP 503: busy");
  assertEquals(formatSeconds(212), "3m32s");
  assertEquals(formatSeconds(4000), "1h06m");
});

Deno.test("context limit: llama.cpp's and the other vLLM/SGLang wordings are recognised, with advice", () => {
  // llama.cpp tools/server/server-context.cpp (the ones node-llama-cpp 3.21.1 ships).
  const llama = "request (300 tokens) exceeds the available context size (256 tokens), try increasing it";
  const llamaCache = "input (300 tokens) is larger than the max context size (256 tokens). skipping";
  // vLLM renderer (params.py) and engine (input_processor.py); SGLang tokenizer_manager.py.
  const vllmRenderer =
    "This model's maximum context length is 4096 tokens. However, you requested 100 output " +
    "tokens and your prompt contains at least 4001 input tokens, for a total of at least 4101 tokens.";
  const vllmEngine = "The decoder prompt (length 5000) is longer than the maximum model length of 4096. " +
    "Make sure that `max_model_len` is no smaller than the number of text tokens.";
  const sglangInput = "The input (3000 tokens) is longer than the model's context length (2048 tokens).";
  assertEquals(parseContextLimit(llama), { context: 256, prompt: 300, perSlot: true });
  assertEquals(parseContextLimit(llamaCache), { context: 256, prompt: 300, perSlot: true });
  assertEquals(parseContextLimit(vllmRenderer), { context: 4096, prompt: 4001, perSlot: false });
  assertEquals(parseContextLimit(vllmEngine), { context: 4096, prompt: 5000, perSlot: false });
  assertEquals(parseContextLimit(sglangInput), { context: 2048, prompt: 3000, perSlot: false });
  assertEquals(
    maxTokensAdvice(llama, 64),
    "the prompt alone (300 tokens) fills the 256-token context; start llama-server with a larger -c " +
      "(it is shared among its --parallel slots)",
  );
  assertEquals(
    maxTokensAdvice(vllmRenderer, 100),
    "--max-tokens 95 would fit (context 4096 − prompt 4001 tokens)",
  );
  // Older llama.cpp said it without numbers: still a context rejection (no smaller-n retry), with advice.
  const bare = "the request exceeds the available context size, try increasing it";
  assertEquals(parseContextLimit(bare), null);
  ok(isContextError(bare) && maxTokensAdvice(bare, 64).includes("lower --max-tokens"));
  ok(!isContextError("Field 'n': Value must be between 1 <= value <= 2, but got 4"));
  assertEquals(nLimitOf("Field 'n': Value must be between 1 <= value <= 2, but got 4"), 2);
  assertEquals(nLimitOf("n must be 1"), null);
});

Deno.test("sampling: --sampling parses pairs and JSON, refuses eval's own parameters, records server defaults", () => {
  assertEquals(parseServerSampling("top_k=40,min_p=0,ignore_eos=false,mode=x"), {
    top_k: 40,
    min_p: 0,
    ignore_eos: false,
    mode: "x",
  });
  assertEquals(parseServerSampling('{"top_k": 0, "dry_sequence_breakers": ["\\n"]}'), {
    top_k: 0,
    dry_sequence_breakers: ["\n"],
  });
  throws(() => parseServerSampling("temperature=1"), /'temperature' is set by --temperature/);
  throws(() => parseServerSampling("top_k"), /'top_k' is not NAME=VALUE/);
  throws(() => parseServerSampling("top_k=1,top_k=2"), /given twice/);
  throws(() => parseServerSampling("Top-K=1"), /not a parameter name/);
  throws(() => parseServerSampling("{"), /not a JSON object/);
  assertEquals(
    serverDefaults({ top_k: 0, min_p: 0 }),
    ["repetition_penalty", "repeat_penalty", "presence_penalty", "frequency_penalty"],
  );
  const lines = describeSampling({ temperature: 0.6, top_p: 0.95, max_tokens: 64, seed: 0, stop: [] }, 4);
  assertEquals(
    lines[2],
    "top_k, min_p, repetition_penalty, repeat_penalty, presence_penalty, frequency_penalty: server default " +
      "(not sent)",
  );
  ok(lines[0].includes("temperature 0.6, top_p 0.95, max_tokens 64, n 4"));
  assertEquals(
    describeSampling({ temperature: 1, top_p: 1, max_tokens: 1, seed: 0, stop: [], top_k: 40 }, 1)[1],
    "sent with --sampling: top_k 40",
  );
});

Deno.test("run health: usage of one choice per request (llama.cpp, n > 1) is marked as reported, not spread", () => {
  const onDisk = new Map<string, Map<number, SampleRecord>>();
  // p0: one request of 4 choices whose usage covers choice 0 only (30 tokens); p1: two requests of 2.
  onDisk.set(
    "p0",
    new Map(
      [0, 1, 2, 3].map((
        i,
      ) => [
        i,
        rec("p0", i, { usage_scope: "first_choice", usage: { prompt_tokens: 10, completion_tokens: 30 } }),
      ]),
    ),
  );
  onDisk.set(
    "p1",
    new Map(
      [0, 1, 2, 3].map((
        i,
      ) => [
        i,
        rec("p1", i, {
          request: `p1#${i < 2 ? 0 : 2}`,
          request_n: 2,
          usage_scope: "first_choice",
          usage: { prompt_tokens: 10, completion_tokens: 7 },
        }),
      ]),
    ),
  );
  const nSplit = {
    asked: 4,
    perRequest: 2,
    cause: "refused" as const,
    reason: "HTTP 400: Field 'n': Value must be between 1 <= value <= 2, but got 4",
  };
  const given = { dataset: "d", n: 4, scored: 2, failed: [], excludeTruncated: false, nSplit };
  const h = runHealth(given, ["p0", "p1"], onDisk);
  assertEquals(h.completionTokens, 30 + 7 + 7);
  assertEquals(h.samplesWithUsage, 3);
  assertEquals(h.usageCounted, "as reported by the server");
  assertEquals(h.requestSizes, [2, 4]);
  const text = renderHealth(h);
  ok(text.includes("as reported by the server"), text);
  ok(text.includes("cover 3 of 8 samples"), text);
  ok(text.includes("requests split to n = 2, the server refused n = 4"), text);
  // Usage covering all choices: shared pro rata, counted per choice, nothing marked.
  const full = runHealth(
    { dataset: "d", n: 4, scored: 1, failed: [], excludeTruncated: false, nSplit: null },
    ["p0"],
    new Map([["p0", new Map([0, 1, 2, 3].map((i) => [i, rec("p0", i)]))]]),
  );
  assertEquals([full.completionTokens, full.samplesWithUsage, full.usageCounted], [40, 4, "per choice"]);
  ok(!renderHealth(full).includes("as reported"));
});
