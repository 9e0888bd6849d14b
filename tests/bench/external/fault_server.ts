// A scripted OpenAI-compatible server on loopback that injects faults, for the client and eval tests.
// Replies are deterministic in (prompt, seed, choice index), so a test can check every stored sample.

/** A fault injected into one request; "ok" answers normally. */
export type Fault =
  | "ok"
  | "429" // rate limited, with Retry-After: retryAfter
  | "500"
  | "503"
  | "drop" // status 200, then the connection dies mid-body
  | "malformed" // status 200 with a body that is not JSON
  | "empty" // status 200, valid JSON without choices
  | "slow" // answers after slowMs (past the client's timeout in the tests that use it)
  | "401"
  | "404"
  | "400";

/** Server behaviour: the fault script is consumed one entry per request, in arrival order, then "ok". */
export interface FaultServerOptions {
  script?: Fault[];
  /** Value of the Retry-After header on 429s (seconds, as text). */
  retryAfter?: string;
  slowMs?: number;
  /** Delay of every normal answer, so concurrent requests overlap. */
  latencyMs?: number;
  /** Ignore `n` and always answer one choice (like servers without n support). */
  ignoreN?: boolean;
  /** Answer 400 to any request with n > 1. */
  rejectN?: boolean;
  /** Answer llama.cpp's 400 to n above this (its --parallel slot count), in llama.cpp's words. */
  maxN?: number;
  /** Reply like llama.cpp with n > 1: `timings` present, usage of the first choice only. */
  llamaUsage?: boolean;
  models?: string[];
  /** Required bearer key; requests without it get 401. */
  apiKey?: string;
  /** A 400 with this message for the prompts it returns a message for (e.g. vLLM's context-limit error). */
  reject?: (prompt: string) => string | null;
  /** Answer texts; default echoes prompt, seed and index. */
  answer?: (prompt: string, seed: number, index: number) => string;
}

/** What the server saw; `choicesDelivered` counts choices in bodies sent whole (not dropped). */
export interface FaultServerLog {
  requests: number;
  faults: Record<string, number>;
  choicesDelivered: number;
  maxInFlight: number;
  bodies: Record<string, unknown>[];
}

/** The default deterministic answer text. */
function echoAnswer(prompt: string, seed: number, index: number): string {
  return `prompt=${prompt}|seed=${seed}|i=${index}`;
}

/** Start the server on 127.0.0.1 with an OS-chosen port; `close()` shuts it down. */
export function startFaultServer(opts: FaultServerOptions = {}) {
  const script = [...(opts.script ?? [])];
  const models = opts.models ?? ["test-model"];
  const log: FaultServerLog = { requests: 0, faults: {}, choicesDelivered: 0, maxInFlight: 0, bodies: [] };
  let inFlight = 0;
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });

  const answer = async (req: Request): Promise<Response> => {
    if (opts.apiKey && req.headers.get("authorization") !== `Bearer ${opts.apiKey}`) {
      return json(401, { error: { message: "Incorrect API key provided" } });
    }
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname === "/v1/models") {
      return json(200, { object: "list", data: models.map((id) => ({ id, object: "model" })) });
    }
    const chat = url.pathname === "/v1/chat/completions";
    if (!chat && url.pathname !== "/v1/completions") {
      return json(404, { error: { message: "no such route" } });
    }
    const body = await req.json();
    log.requests++;
    log.bodies.push(body);
    const fault = script.shift() ?? "ok";
    log.faults[fault] = (log.faults[fault] ?? 0) + 1;
    switch (fault) {
      case "429":
        return json(429, { error: { message: "rate limited" } }, { "retry-after": opts.retryAfter ?? "0" });
      case "500":
      case "503":
        return json(Number(fault), { error: { message: "internal error" } });
      case "401":
        return json(401, { error: { message: "Incorrect API key provided" } });
      case "400":
        return json(400, { error: { message: "bad request" } });
      case "malformed":
        return new Response('{"choices": [{"text": "oops"', { status: 200 });
      case "empty":
        return json(200, { choices: [] });
      case "drop":
        // Promise 500 bytes, send a few, end: the client sees the connection close mid-body.
        return new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode('{"choices": [{"text": "partial'));
              c.close();
            },
          }),
          { status: 200, headers: { "content-type": "application/json", "content-length": "500" } },
        );
      case "slow":
        await new Promise((r) => setTimeout(r, opts.slowMs ?? 500));
        break;
    }
    if (!models.includes(body.model)) {
      return json(404, { error: { message: `The model \`${body.model}\` does not exist.` } });
    }
    const n = Number(body.n ?? 1);
    const rejected = opts.reject?.(chat ? body.messages.at(-1).content : body.prompt);
    if (rejected) return json(400, { error: { message: rejected, type: "BadRequestError", code: 400 } });
    if (opts.rejectN && n > 1) return json(400, { error: { message: "n must be 1" } });
    if (opts.maxN !== undefined && n > opts.maxN) {
      const message = `Field 'n': Value must be between 1 <= value <= ${opts.maxN}, but got ${n}`;
      return json(400, { error: { code: 400, message, type: "invalid_request_error" } });
    }
    if (opts.latencyMs) await new Promise((r) => setTimeout(r, opts.latencyMs));
    const prompt = chat ? body.messages.at(-1).content : body.prompt;
    const count = opts.ignoreN ? 1 : n;
    const make = opts.answer ?? echoAnswer;
    const choices = Array.from({ length: count }, (_, i) => {
      const text = make(prompt, body.seed, i);
      return chat
        ? {
          index: i,
          message: { role: "assistant", content: text },
          finish_reason: i % 3 === 2 ? "length" : "stop",
        }
        : { index: i, text, finish_reason: i % 3 === 2 ? "length" : "stop" };
    });
    log.choicesDelivered += count;
    return json(200, {
      id: `r${log.requests}`,
      choices,
      usage: { prompt_tokens: 7, completion_tokens: 5 * (opts.llamaUsage ? 1 : count) },
      ...(opts.llamaUsage ? { timings: { predicted_n: 5 } } : {}),
    });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    inFlight++;
    log.maxInFlight = Math.max(log.maxInFlight, inFlight);
    try {
      return await answer(req);
    } finally {
      inFlight--;
    }
  });
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}/v1`,
    log,
    close: () => server.shutdown(),
  };
}
