// Pure pieces of the run report: the context-limit reading, run-health counting and scoping, the progress line.
import { assertEquals, ok } from "../../assert.ts";
import { maxTokensAdvice, parseContextLimit } from "../../../bench/external/context_limit.ts";
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
  assertEquals(parseContextLimit(vllmOld), { context: 4096, prompt: 500 });
  assertEquals(parseContextLimit(vllmNew), { context: 4096, prompt: 69 });
  assertEquals(parseContextLimit(sglang), { context: 2048, prompt: 100 });
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
  const h = runHealth("synthetic", ["p0", "p1", "p3"], onDisk, 2, 2, [
    { problemId: "p3", kind: "rejected", error: "HTTP 400: too long" },
  ]);
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
