// A tfjs checkpoint behind the OpenAI-compatible API (/v1/models, /v1/models/{id}, /v1/completions,
// /v1/chat/completions, streaming included), so `deno task eval` can be demonstrated and tested end to end
// without any external service. A parameter it does not implement is refused with a 400 naming it.
import * as tf from "@tensorflow/tfjs-core";
import { tokenLogProbs } from "./model.ts";
import { type Completion, generate, type GenerateOptions, type Policy } from "./policy.ts";
import { encodePrompts } from "./tokenizer.ts";

/** Log-prob of one returned token and, when asked, the most likely alternatives at its position. */
interface TokenLogprob {
  token: string;
  logprob: number;
  top: { token: string; logprob: number }[];
}

/** Tokens of a prompt as the model sees it: the engine prepends BOS. */
const promptTokens = (policy: Policy, prompt: string) => policy.tokenizer.encode(prompt).length + 1;

/** Name of a token id: its character, or <pad>/<bos>/<eos> for the special tokens. */
function tokenName(policy: Policy, id: number): string {
  const tok = policy.tokenizer;
  return { [tok.pad]: "<pad>", [tok.bos]: "<bos>", [tok.eos]: "<eos>" }[id] ?? tok.decode([id]);
}

/**
 * Log-probs of each character of `text` after the left-padded prompt, as the sampler scored them (temperature
 * 1). With `top` > 0 the whole next-token distribution is computed at each position (one batch of vocab-size
 * rows per position), and its `top` most likely tokens are returned.
 */
async function policyLogprobs(policy: Policy, prompt: string, text: string, top: number) {
  const { model, tokenizer: tok, settings } = policy;
  const prefix = Array.from(encodePrompts(tok, [prompt], settings.model.promptLength));
  const ids = tok.encode(text);
  if (ids.length === 0) return [];
  const seq = [...prefix, ...ids];
  const chosen = tf.tidy(() =>
    tokenLogProbs(model, tf.tensor2d(seq, [1, seq.length], "int32")).logp.slice([0, prefix.length - 1])
  );
  const logp = await chosen.data();
  chosen.dispose();
  const out: TokenLogprob[] = [];
  const V = tok.vocabSize;
  for (let s = 0; s < ids.length; s++) {
    let alternatives: { token: string; logprob: number }[] = [];
    if (top > 0) {
      const ctx = seq.slice(0, prefix.length + s);
      const rows = Array.from({ length: V }, (_, v) => [...ctx, v]).flat();
      const dist = tf.tidy(() =>
        tokenLogProbs(model, tf.tensor2d(rows, [V, ctx.length + 1], "int32")).logp.slice([0, ctx.length - 1])
      );
      const all = await dist.data();
      dist.dispose();
      alternatives = Array.from(all, (lp, v) => ({ v, lp })).sort((a, b) => b.lp - a.lp || a.v - b.v)
        .slice(0, top).map(({ v, lp }) => ({ token: tokenName(policy, v), logprob: lp }));
    }
    out.push({ token: tokenName(policy, ids[s]), logprob: logp[s], top: alternatives });
  }
  return out;
}

/** A request error that becomes an OpenAI-style `{ error }` reply with this status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Longest error message sent back, in characters: a message quoting a 1 MB prompt must not echo it. */
export const MAX_ERROR_CHARS = 400;

/**
 * `text` cut to at most about MAX_ERROR_CHARS characters: its start and end (where "needs N tokens" is said)
 * around a note of how much was left out; shorter text unchanged.
 */
export function boundedMessage(text: string, max = MAX_ERROR_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.6), tail = Math.floor(max * 0.3);
  return `${text.slice(0, head)} … (${text.length - head - tail} characters left out) … ${text.slice(-tail)}`;
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
      field,
    );
  }
  return v;
}

/** Parameters both routes implement; anything else (best_of, echo, penalties, tools, …) is refused by name. */
const SHARED = "model n temperature top_p max_tokens seed stop stream stream_options".split(" ");

/** Parameters each route implements. */
const SUPPORTED = {
  completions: ["prompt", ...SHARED, "logprobs", "user"],
  chat: ["messages", ...SHARED, "max_completion_tokens", "logprobs", "top_logprobs", "user"],
};

/**
 * Values of unimplemented parameters that ask for nothing (the API's own defaults), which many clients send on
 * every request: accepting them changes no reply.
 */
const NO_OP: Record<string, unknown> = {
  presence_penalty: 0,
  frequency_penalty: 0,
  best_of: 1,
  echo: false,
  logit_bias: {},
  tools: [],
  response_format: { type: "text" },
};

const isNoOp = (key: string, value: unknown) =>
  key in NO_OP && JSON.stringify(NO_OP[key]) === JSON.stringify(value);

/**
 * Refuse the first parameter the route does not implement (null, or a value that asks for nothing such as
 * presence_penalty 0, counts as absent).
 */
function refuseUnsupported(body: Record<string, unknown>, chat: boolean): void {
  const known: readonly string[] = SUPPORTED[chat ? "chat" : "completions"];
  const extra = Object.keys(body).find((k) =>
    !known.includes(k) && body[k] !== null && body[k] !== undefined && !isNoOp(k, body[k])
  );
  if (extra !== undefined) {
    throw new HttpError(
      400,
      `Unsupported parameter: '${extra}' is not supported by acebench serve on ${
        chat ? "/v1/chat/completions" : "/v1/completions"
      } (it supports: ${known.join(", ")})`,
      extra,
      "unsupported_parameter",
    );
  }
}

/**
 * Sampling fields. Defaults follow the OpenAI API as vLLM implements it: n 1, temperature 1, top_p 1, and
 * max_tokens 16 for completions but the rest of the context for chat (generate caps it at the context).
 */
function samplingOf(body: Record<string, unknown>, chat: boolean): GenerateOptions {
  const maxField = chat && body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
  return {
    n: numberField(body, "n", 1, 1, 1024, true),
    temperature: numberField(body, "temperature", 1, 0, 100),
    topP: numberField(body, "top_p", 1, Number.MIN_VALUE, 1),
    maxTokens: numberField(body, maxField, chat ? 1e9 : 16, 1, 1e9, true),
    // A missing seed is 0, not wall-clock entropy: every random choice in acebench is reproducible.
    seed: numberField(body, "seed", 0, -(2 ** 53), 2 ** 53, true),
  };
}

/** `stop`: absent, a string, or a list of up to 4 non-empty strings. */
function stopsOf(body: Record<string, unknown>): string[] {
  const v = body.stop;
  if (v === undefined || v === null) return [];
  const list = typeof v === "string" ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || list.some((s) => typeof s !== "string" || s === "")) {
    throw new HttpError(400, "stop: expected a string or a list of up to 4 non-empty strings", "stop");
  }
  return list as string[];
}

/** How many top alternatives to return per token, or null for no log-probs. */
function logprobsOf(body: Record<string, unknown>, chat: boolean): number | null {
  if (chat) {
    if (body.logprobs != null && typeof body.logprobs !== "boolean") {
      throw new HttpError(400, "logprobs: expected true or false", "logprobs");
    }
    const top = numberField(body, "top_logprobs", 0, 0, 20, true);
    if (body.top_logprobs != null && body.logprobs !== true) {
      throw new HttpError(400, "top_logprobs: needs logprobs: true", "top_logprobs");
    }
    return body.logprobs === true ? top : null;
  }
  return body.logprobs == null ? null : numberField(body, "logprobs", 0, 0, 5, true);
}

/**
 * A prompt past the model's prompt window is a 400 with OpenAI's code `context_length_exceeded`, worded like
 * SGLang's ("The input (N tokens) is longer than the model's context length (P tokens)") so clients that parse it
 * see that no max_tokens fits. Prompts with characters outside the vocabulary fail later, in `generate`.
 */
function refuseLongPrompt(policy: Policy, prompt: string, chat: boolean): void {
  const window = policy.settings.model.promptLength;
  let tokens: number;
  try {
    tokens = promptTokens(policy, prompt);
  } catch {
    tokens = [...prompt].length + 1; // a character outside the vocabulary: BOS + one token per character
  }
  if (tokens <= window) return;
  throw new HttpError(
    400,
    `The input (${tokens} tokens) is longer than the model's context length (${window} tokens) ` +
      `for a prompt; this model was trained on compact prompts (eval --prompt-template compact)`,
    chat ? "messages" : "prompt",
    "context_length_exceeded",
  );
}

/** The prompt of a completions request (a string, or a one-element list). */
function completionPrompt(body: Record<string, unknown>): string {
  const p = Array.isArray(body.prompt) && body.prompt.length === 1 ? body.prompt[0] : body.prompt;
  if (typeof p !== "string") throw new HttpError(400, "prompt: expected a string", "prompt");
  return p;
}

/** The prompt of a chat request: the last user message (the tfjs models have no chat template). */
function chatPrompt(body: Record<string, unknown>): string {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new HttpError(400, "messages: expected a non-empty list", "messages");
  }
  const last = [...messages].reverse().find((m) => m?.role === "user");
  if (typeof last?.content !== "string") {
    throw new HttpError(400, "messages: expected a user message with string content", "messages");
  }
  return last.content;
}

/** Cut a text at the first stop sequence (the sequence itself is not returned, as in the OpenAI API). */
function applyStop(text: string, stops: readonly string[]): { text: string; stopped: boolean } {
  let cut = -1;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && (cut < 0 || i < cut)) cut = i;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

/** A completion as returned: cut at a stop sequence, with its log-probs when asked. */
type Generated = Completion & { logprobs: TokenLogprob[] | null };

/** Log-probs in the legacy completions shape: parallel lists of tokens, their log-probs, top maps, offsets. */
function completionLogprobs(lps: TokenLogprob[], top: number) {
  let offset = 0;
  return {
    tokens: lps.map((t) => t.token),
    token_logprobs: lps.map((t) => t.logprob),
    top_logprobs: top > 0 ? lps.map((t) => Object.fromEntries(t.top.map((a) => [a.token, a.logprob]))) : null,
    text_offset: lps.map((t) => (offset += t.token.length) - t.token.length),
  };
}

/** Log-probs in the chat shape: one entry per token with its UTF-8 bytes and top alternatives. */
function chatLogprobs(lps: TokenLogprob[]) {
  const bytes = (s: string) => [...new TextEncoder().encode(s)];
  return {
    content: lps.map((t) => ({
      token: t.token,
      logprob: t.logprob,
      bytes: bytes(t.token),
      top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob, bytes: bytes(a.token) })),
    })),
    refusal: null,
  };
}

/** Log-probs in the route's shape (chat or legacy completions). */
const logprobsShape = (chat: boolean, lps: TokenLogprob[], top: number) =>
  chat ? chatLogprobs(lps) : completionLogprobs(lps, top);

/** Server-sent events of a finished generation, in OpenAI's chunk format, ending with `data: [DONE]`. */
function streamReply(
  chat: boolean,
  head: { id: string; created: number; model: string },
  outs: Generated[],
  top: number,
  usage: Record<string, number> | null,
): Response {
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const events: unknown[] = [];
  const chunk = (choices: unknown[]) => ({ ...head, object, choices, ...(usage ? { usage: null } : {}) });
  // A chunk of one choice: a piece of text (null: none, at the end) with its log-probs and finish reason.
  const piece = (index: number, text: string | null, logprobs: unknown, finish: string | null) =>
    chunk([{
      index,
      ...(chat ? { delta: text === null ? {} : { content: text } } : { text: text ?? "" }),
      logprobs,
      finish_reason: finish,
    }]);
  outs.forEach((o, index) => {
    if (chat) events.push(chunk([{ index, delta: { role: "assistant", content: "" }, finish_reason: null }]));
    // One chunk per token, as a streaming server sends them (the text is whole already: sampling is batched).
    const pieces = o.logprobs ?? [...o.text].map((token) => ({ token, logprob: 0, top: [] }));
    pieces.forEach((p) => {
      events.push(piece(index, p.token, o.logprobs ? logprobsShape(chat, [p], top) : null, null));
    });
    events.push(piece(index, null, null, o.finishReason));
  });
  if (usage) events.push({ ...head, object, choices: [], usage });
  const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
  return new Response(text, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

/** The OpenAI-compatible request handler for `policy` served as `modelId`; `counter` numbers the reply ids. */
function openAiHandler(policy: Policy, modelId: string): (req: Request) => Promise<Response> {
  let counter = 0;
  const created = Math.floor(Date.now() / 1000);
  const modelObject = { id: modelId, object: "model", created, owned_by: "acebench" };
  const notFound = (id: unknown) =>
    new HttpError(
      404,
      `The model \`${id}\` does not exist (this server serves '${modelId}')`,
      "model",
      "model_not_found",
    );
  return async (req) => {
    const path = new URL(req.url).pathname.replace(/\/+$/, "");
    try {
      if (req.method === "GET" && path === "/v1/models") {
        return reply(200, { object: "list", data: [modelObject] });
      }
      if (req.method === "GET" && path.startsWith("/v1/models/")) {
        const id = decodeURIComponent(path.slice("/v1/models/".length));
        if (id !== modelId) throw notFound(id);
        return reply(200, modelObject);
      }
      const chat = path === "/v1/chat/completions";
      if (!chat && path !== "/v1/completions") throw new HttpError(404, `no route ${req.method} ${path}`);
      if (req.method !== "POST") throw new HttpError(405, `${path} takes POST`);
      const body: Record<string, unknown> = await req.json().catch(() => {
        throw new HttpError(400, "request body is not JSON");
      });
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw new HttpError(400, "request body must be a JSON object");
      }
      if (body.model !== modelId) throw notFound(body.model);
      refuseUnsupported(body, chat);
      const sampling = samplingOf(body, chat);
      const stops = stopsOf(body);
      const top = logprobsOf(body, chat);
      const stream = body.stream === true;
      const includeUsage =
        (body.stream_options as { include_usage?: unknown } | null)?.include_usage === true;
      const prompt = chat ? chatPrompt(body) : completionPrompt(body);
      refuseLongPrompt(policy, prompt, chat);
      let raw;
      try {
        raw = (await generate(policy, [prompt], sampling))[0];
      } catch (e) {
        throw new HttpError(400, (e as Error).message.split("\n")[0], chat ? "messages" : "prompt");
      }
      const outs: Generated[] = [];
      for (const o of raw) {
        const cut = applyStop(o.text, stops);
        outs.push({
          text: cut.text,
          finishReason: cut.stopped ? "stop" : o.finishReason,
          tokens: cut.stopped ? policy.tokenizer.encode(cut.text).length : o.tokens,
          logprobs: top === null ? null : await policyLogprobs(policy, prompt, cut.text, top),
        });
      }
      const prompted = promptTokens(policy, prompt), completed = outs.reduce((t, o) => t + o.tokens, 0);
      const usage = {
        prompt_tokens: prompted,
        completion_tokens: completed,
        total_tokens: prompted + completed,
      };
      const head = {
        id: `${chat ? "chatcmpl" : "cmpl"}-${++counter}`,
        created: Math.floor(Date.now() / 1000),
        model: modelId,
      };
      if (stream) return streamReply(chat, head, outs, top ?? 0, includeUsage ? usage : null);
      const choices = outs.map((o, index) => ({
        index,
        ...(chat ? { message: { role: "assistant", content: o.text } } : { text: o.text }),
        logprobs: o.logprobs ? logprobsShape(chat, o.logprobs, top ?? 0) : null,
        finish_reason: o.finishReason,
      }));
      return reply(200, { ...head, object: chat ? "chat.completion" : "text_completion", choices, usage });
    } catch (e) {
      const known = e instanceof HttpError ? e : null, status = known?.status ?? 500;
      return reply(status, {
        error: {
          message: boundedMessage(known ? known.message : (e as Error).message.split("\n")[0]),
          type: status >= 500 ? "server_error" : "invalid_request_error",
          param: known?.param == null ? null : boundedMessage(known.param, 100),
          code: known?.code ?? null,
        },
      });
    }
  };
}

/**
 * Serve `policy` (e.g. `loadPolicy` of a checkpoint folder) as model `id` on 127.0.0.1 (loopback only); port 0 lets
 * the OS choose. Returns the server and its base URL.
 */
export function serveModel(policy: Policy, id: string, port: number) {
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, openAiHandler(policy, id));
  const addr = server.addr as Deno.NetAddr;
  return { server, url: `http://127.0.0.1:${addr.port}/v1` };
}

/**
 * Why a checkpoint cannot take prompts made with `template` (a text with `{problem}`), or null when it can:
 * BOS + the template's own text + a one-character problem must fit the model's prompt length, and every
 * template character must be in the vocabulary. The reason ends with what to do.
 */
export function templateMisfit(policy: Policy, template: { name: string; text: string }): string | null {
  const fixed = template.text.replace("{problem}", "");
  const P = policy.settings.model.promptLength;
  const context = P + policy.settings.rl.maxNewTokens;
  // A character tokenizer: one token per character (BOS added in front).
  const need = 1 + [...fixed].length + 1;
  if (need > P) {
    return `its prompts hold ${P} tokens (context ${context}), but template '${template.name}' alone needs ` +
      `${need - 1} with BOS, before any problem; serve a checkpoint with a longer model.promptLength, or a ` +
      `shorter --prompt-template (e.g. raw, then pass --prompt-template raw to eval as well)`;
  }
  try {
    policy.tokenizer.encode(fixed);
  } catch (e) {
    return `template '${template.name}': ${(e as Error).message}; use a template made of characters the ` +
      `model knows (e.g. raw)`;
  }
  return null;
}
