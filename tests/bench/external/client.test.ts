import { assertEquals, ok, rejects } from "../../assert.ts";
import { Rng } from "../../../common/prng.ts";
import {
  complete,
  type Endpoint,
  EndpointError,
  normaliseBaseUrl,
  preflight,
  RetriesExhaustedError,
} from "../../../bench/external/client.ts";
import { DEFAULT_RETRY, parseRetryAfter, retryDelayMs } from "../../../bench/external/retry.ts";
import { startFaultServer } from "./fault_server.ts";

const params = { temperature: 0.6, topP: 0.95, maxTokens: 64 };
const fastRetry = { maxRetries: 4, baseMs: 5, maxMs: 20, maxRetryAfterMs: 5000 };

function endpoint(url: string, over: Partial<Endpoint> = {}): Endpoint {
  return {
    baseUrl: url,
    model: "test-model",
    mode: "completions",
    timeoutMs: 2000,
    retry: fastRetry,
    ...over,
  };
}

Deno.test("retry: Retry-After parses seconds and HTTP dates; backoff doubles with jitter and caps", () => {
  assertEquals(parseRetryAfter("3"), 3000);
  assertEquals(parseRetryAfter("0.25"), 250);
  assertEquals(parseRetryAfter(null), null);
  assertEquals(parseRetryAfter("soon"), null);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assertEquals(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now), 7000);
  assertEquals(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now), 0);
  const rng = Rng.seeded(1);
  const policy = { ...DEFAULT_RETRY, baseMs: 100, maxMs: 1000 };
  for (let r = 0; r < 8; r++) {
    const d = retryDelayMs(policy, r, null, rng);
    const cap = Math.min(1000, 100 * 2 ** r);
    ok(d >= cap / 2 && d < cap, `retry ${r}: ${d} outside [${cap / 2}, ${cap})`);
  }
  assertEquals(retryDelayMs(policy, 0, 4000, rng), 4000);
  assertEquals(retryDelayMs(policy, 0, 10 ** 9, rng), DEFAULT_RETRY.maxRetryAfterMs);
});

Deno.test("client: base URL normalisation and a one-line error for a non-URL", () => {
  assertEquals(normaliseBaseUrl("http://127.0.0.1:8000"), "http://127.0.0.1:8000/v1");
  assertEquals(normaliseBaseUrl("http://127.0.0.1:8000/v1/"), "http://127.0.0.1:8000/v1");
  assertEquals(normaliseBaseUrl("https://host/api/openai/v1"), "https://host/api/openai/v1");
  const message = (url: string) => {
    try {
      normaliseBaseUrl(url);
    } catch (e) {
      return (e as Error).message;
    }
  };
  ok(/'no host' is not a URL/.test(message("no host") ?? ""));
  ok(/must start with http/.test(message("localhost:8000") ?? ""));
});

Deno.test("client: retries 429 (honouring Retry-After), 500, drops, malformed and empty replies", async () => {
  const srv = startFaultServer({
    script: ["429", "500", "drop", "malformed", "empty", "503"],
    retryAfter: "0.3",
  });
  try {
    const retries: number[] = [];
    const ep = endpoint(srv.url, { retry: { ...fastRetry, maxRetries: 6 } });
    const t0 = performance.now();
    const r = await complete(ep, "2+2?", 3, params, 11, Rng.seeded(0), (_, delayMs) => retries.push(delayMs));
    const elapsed = performance.now() - t0;
    assertEquals(r.attempts, 7);
    assertEquals(retries.length, 6);
    assertEquals(retries[0], 300, "the 429's Retry-After is used as the delay");
    ok(elapsed >= 300, `waited ${elapsed} ms, less than Retry-After`);
    assertEquals(r.choices.map((c) => c.text), [0, 1, 2].map((i) => `prompt=2+2?|seed=11|i=${i}`));
    assertEquals(r.choices.map((c) => c.finishReason), ["stop", "stop", "length"]);
    assertEquals(r.usage, { prompt_tokens: 7, completion_tokens: 15 });
    ok(r.latencyMs > 0);
    assertEquals(srv.log.bodies[0].max_tokens, 64);
    assertEquals(srv.log.bodies[0].top_p, 0.95);
    assertEquals(srv.log.bodies[0].n, 3);
  } finally {
    await srv.close();
  }
});

Deno.test("client: chat mode sends messages and reads message.content", async () => {
  const srv = startFaultServer();
  try {
    const r = await complete(endpoint(srv.url, { mode: "chat" }), "hi", 2, params, 5, Rng.seeded(0));
    assertEquals(r.choices.map((c) => c.text), ["prompt=hi|seed=5|i=0", "prompt=hi|seed=5|i=1"]);
    assertEquals((srv.log.bodies[0].messages as unknown[]).length, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("client: a slow reply past the timeout is retried; persistent failure gives up naming the last failure", async () => {
  const srv = startFaultServer({ script: ["slow", "ok", "500", "500", "500"], slowMs: 400 });
  try {
    const ep = endpoint(srv.url, { timeoutMs: 150, retry: { ...fastRetry, maxRetries: 1 } });
    const r = await complete(ep, "x", 1, params, 1, Rng.seeded(0));
    assertEquals(r.attempts, 2, "the timed-out attempt was retried");
    const err = await rejects(
      complete(
        endpoint(srv.url, { retry: { ...fastRetry, maxRetries: 2 } }),
        "x",
        1,
        params,
        1,
        Rng.seeded(0),
      ),
      (e: Error) =>
        e instanceof RetriesExhaustedError &&
        /^gave up after 3 attempts \(last: HTTP 500: internal error\)$/.test(e.message),
    );
    assertEquals(err, undefined);
  } finally {
    await srv.close();
  }
});

Deno.test("client: refused key, unknown model and unreachable server are one-line errors saying what to do", async () => {
  const srv = startFaultServer({ apiKey: "sekrit", models: ["m1", "m2"] });
  try {
    await rejects(
      preflight(endpoint(srv.url, { model: "m1", apiKey: "wrong", apiKeyEnv: "MY_KEY" })),
      (e: Error) =>
        e instanceof EndpointError && /refused the key in \$MY_KEY.*--api-key-env/.test(e.message),
    );
    await rejects(
      preflight(endpoint(srv.url, { model: "nope", apiKey: "sekrit" })),
      (e: Error) =>
        /model 'nope' is not served.*m1, m2.*--model/.test(e.message) && !e.message.includes("\n"),
    );
    assertEquals((await preflight(endpoint(srv.url, { model: "m2", apiKey: "sekrit" }))).names, ["m1", "m2"]);
    // A 404 from the sampling route itself (servers without /models) names --model too.
    await rejects(
      complete(endpoint(srv.url, { model: "nope", apiKey: "sekrit" }), "x", 1, params, 1, Rng.seeded(0)),
      (e: Error) => e instanceof EndpointError && /does not exist.*check --model/.test(e.message),
    );
  } finally {
    await srv.close();
  }
  // The port is closed now: nothing listens there.
  await rejects(
    preflight(endpoint(srv.url)),
    (e: Error) =>
      /cannot reach http:\/\/127\.0\.0\.1:\d+\/v1 .*start the server or fix --endpoint/.test(e.message),
  );
});

Deno.test("client: preflight tells a web page and a failing server apart from nothing listening", async () => {
  let status = 200;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(status === 200 ? "<html>hello</html>" : "overloaded", { status }),
  );
  const url = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/v1`;
  try {
    const ep = endpoint(url, { retry: { ...fastRetry, maxRetries: 0 } });
    await rejects(
      preflight(ep),
      /is not an OpenAI-compatible API \(GET \/models: malformed JSON.*fix --endpoint/,
    );
    status = 503;
    await rejects(preflight(ep), /keeps failing \(HTTP 503: overloaded\); check the server's log/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("client: the preflight tries as often as --retries says", async () => {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    hits++;
    return new Response(JSON.stringify({ error: { message: "warming up" } }), { status: 503 });
  });
  const url = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/v1`;
  try {
    for (const maxRetries of [0, 3]) {
      hits = 0;
      await rejects(
        preflight(endpoint(url, { retry: { ...fastRetry, maxRetries } })),
        /keeps failing \(HTTP 503: warming up\)/,
      );
      assertEquals(hits, maxRetries + 1, `--retries ${maxRetries}`);
    }
  } finally {
    await server.shutdown();
  }
});
