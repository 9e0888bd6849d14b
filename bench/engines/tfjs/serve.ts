// A tfjs checkpoint behind the OpenAI-compatible API (/v1/models, /v1/completions, /v1/chat/completions), so
// `deno task eval` can be demonstrated and tested end to end without any external service.
import { generate, loadPolicy } from "./policy.ts";

/** Sampling request as the served model sees it (OpenAI names mapped to camelCase). */
export interface ServeSampling {
  n: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  seed: number;
}

/** What the HTTP layer needs from a model: its name, sampling, and a token count for usage. */
export interface ServedModel {
  id: string;
  /** n completions per prompt, as [prompt][sample]; throws on a prompt the model cannot take. */
  generate(
    prompts: readonly string[],
    s: ServeSampling,
  ): Promise<{ text: string; tokens: number; finishReason: string }[][]>;
  promptTokens(prompt: string): number;
}

/** Wrap a tfjs checkpoint folder (a run's checkpoints/, a step-* folder, a sweep's base/) as a served model. */
export function tfjsServedModel(checkpointDir: string, id: string): ServedModel {
  const policy = loadPolicy(checkpointDir);
  return {
    id,
    generate: (prompts, s) => generate(policy, prompts, s),
    // The engine prepends BOS to every prompt.
    promptTokens: (prompt) => policy.tokenizer.encode(prompt).length + 1,
  };
}

/** A request error that becomes an OpenAI-style `{ error }` reply with this status. */
class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function reply(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A number field of the body: absent → fallback; wrong type or out of [min, max] → 400 naming the field. */
function numberField(
  body: Record<string, unknown>,
  field: string,
  fallback: number,
  min: number,
  max: number,
  int = false,
) {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max || (int && !Number.isInteger(v))) {
    throw new HttpError(
      400,
      `${field}: expected ${int ? "an integer" : "a number"} in [${min}, ${max}], got ${JSON.stringify(v)}`,
    );
  }
  return v;
}

/**
 * Sampling fields. Defaults follow the OpenAI API as vLLM implements it: n 1, temperature 1, top_p 1, and
 * max_tokens 16 for completions but the rest of the context for chat (generate caps it at the context).
 */
function samplingOf(body: Record<string, unknown>, chat: boolean): ServeSampling {
  return {
    n: numberField(body, "n", 1, 1, 1024, true),
    temperature: numberField(body, "temperature", 1, 0, 100),
    topP: numberField(body, "top_p", 1, Number.MIN_VALUE, 1),
    maxTokens: numberField(body, "max_tokens", chat ? 1e9 : 16, 1, 1e9, true),
    // A missing seed is 0, not wall-clock entropy: every random choice in acebench is reproducible.
    seed: numberField(body, "seed", 0, -(2 ** 53), 2 ** 53, true),
  };
}

/** The prompt of a completions request (a string, or a one-element list). */
function completionPrompt(body: Record<string, unknown>): string {
  const p = Array.isArray(body.prompt) && body.prompt.length === 1 ? body.prompt[0] : body.prompt;
  if (typeof p !== "string") throw new HttpError(400, "prompt: expected a string");
  return p;
}

/** The prompt of a chat request: the last user message (the tfjs models have no chat template). */
function chatPrompt(body: Record<string, unknown>): string {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new HttpError(400, "messages: expected a non-empty list");
  }
  const last = [...messages].reverse().find((m) => m?.role === "user");
  if (typeof last?.content !== "string") {
    throw new HttpError(400, "messages: expected a user message with string content");
  }
  return last.content;
}

/** The OpenAI-compatible request handler for one model; `counter` numbers the reply ids. */
function openAiHandler(model: ServedModel): (req: Request) => Promise<Response> {
  let counter = 0;
  const created = Math.floor(Date.now() / 1000);
  return async (req) => {
    const path = new URL(req.url).pathname.replace(/\/+$/, "");
    try {
      if (req.method === "GET" && path === "/v1/models") {
        return reply(200, {
          object: "list",
          data: [{ id: model.id, object: "model", created, owned_by: "acebench" }],
        });
      }
      const chat = path === "/v1/chat/completions";
      if (!chat && path !== "/v1/completions") throw new HttpError(404, `no route ${req.method} ${path}`);
      if (req.method !== "POST") throw new HttpError(405, `${path} takes POST`);
      let body: Record<string, unknown>;
      try {
        body = await req.json();
      } catch {
        throw new HttpError(400, "request body is not JSON");
      }
      if (body.model !== model.id) {
        throw new HttpError(
          404,
          `The model \`${body.model}\` does not exist (this server serves '${model.id}')`,
        );
      }
      if (body.stream) throw new HttpError(400, "stream: streaming is not supported by acebench serve");
      const sampling = samplingOf(body, chat);
      const prompt = chat ? chatPrompt(body) : completionPrompt(body);
      let outs;
      try {
        outs = (await model.generate([prompt], sampling))[0];
      } catch (e) {
        throw new HttpError(400, (e as Error).message.split("\n")[0]);
      }
      const id = `${chat ? "chatcmpl" : "cmpl"}-${++counter}`;
      const choices = outs.map((o, index) =>
        chat
          ? { index, message: { role: "assistant", content: o.text }, finish_reason: o.finishReason }
          : { index, text: o.text, finish_reason: o.finishReason, logprobs: null }
      );
      const promptTokens = model.promptTokens(prompt);
      const completionTokens = outs.reduce((t, o) => t + o.tokens, 0);
      return reply(200, {
        id,
        object: chat ? "chat.completion" : "text_completion",
        created: Math.floor(Date.now() / 1000),
        model: model.id,
        choices,
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      });
    } catch (e) {
      if (e instanceof HttpError) {
        return reply(e.status, { error: { message: e.message, type: "invalid_request_error" } });
      }
      return reply(500, { error: { message: (e as Error).message.split("\n")[0], type: "server_error" } });
    }
  };
}

/** Serve a model on 127.0.0.1 (loopback only); port 0 lets the OS choose. Returns the server and its base URL. */
export function serveModel(model: ServedModel, port: number): { server: Deno.HttpServer; url: string } {
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, openAiHandler(model));
  const addr = server.addr as Deno.NetAddr;
  return { server, url: `http://127.0.0.1:${addr.port}/v1` };
}
