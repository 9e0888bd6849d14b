// `serve` against the official OpenAI SDK (npm `openai`) as the client: what a user's client sees, not our own
// client's reading of it. Models, completions with n/seed/stop, chat, max_completion_tokens, streaming (with
// usage in the last chunk), log-probs, and a parameter serve does not implement raising BadRequestError.
import OpenAI from "openai";
import { assertEquals, ok, rejects } from "../../assert.ts";
import { serveModel } from "../../../bench/engines/tfjs/serve.ts";
import { loadPolicy } from "../../../bench/engines/tfjs/policy.ts";
import { writeTinyCheckpoint } from "./tiny_checkpoint.ts";

const dir = Deno.makeTempDirSync({ prefix: "acebench-sdk-" });
await writeTinyCheckpoint(dir);
const { server, url } = serveModel(loadPolicy(dir), "tiny", 0);
const client = new OpenAI({ baseURL: url, apiKey: "unused", maxRetries: 0, timeout: 30_000 });
/** The error a promise rejects with (fails when it resolves). */
async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

const base = { model: "tiny", prompt: "3+4=", n: 3, seed: 5, temperature: 1, top_p: 0.9, max_tokens: 10 };

Deno.test("sdk: models.list and models.retrieve; an unknown id is NotFoundError", async () => {
  const page = await client.models.list();
  assertEquals(page.data.map((m) => m.id), ["tiny"]);
  assertEquals((await client.models.retrieve("tiny")).id, "tiny");
  await rejects(client.models.retrieve("gpt-9"), (e: Error) => e instanceof OpenAI.NotFoundError);
});

Deno.test("sdk: completions with n and seed are reproducible; stop cuts before the stop text", async () => {
  const a = await client.completions.create(base);
  assertEquals(a.choices.length, 3);
  assertEquals(a.choices.map((c) => c.index), [0, 1, 2]);
  const b = await client.completions.create(base);
  assertEquals(b.choices.map((c) => c.text), a.choices.map((c) => c.text), "same seed, same texts");
  const other = await client.completions.create({ ...base, seed: 6 });
  ok(JSON.stringify(other.choices) !== JSON.stringify(a.choices), "another seed, other texts");
  // A stop string taken from the middle of choice 0: that choice ends just before it, finish_reason "stop".
  const text0 = a.choices[0].text;
  ok(text0.length >= 3, `choice 0 is long enough to cut: ${JSON.stringify(text0)}`);
  const stop = text0.slice(2, 3);
  const cut = await client.completions.create({ ...base, stop: [stop, "\u0000never"] });
  assertEquals(cut.choices[0].text, text0.slice(0, text0.indexOf(stop)));
  assertEquals(cut.choices[0].finish_reason, "stop");
  cut.choices.forEach((c, i) => {
    const full = a.choices[i].text;
    const at = full.indexOf(stop);
    assertEquals(c.text, at < 0 ? full : full.slice(0, at), `choice ${i}`);
  });
  ok(cut.usage!.completion_tokens <= a.usage!.completion_tokens);
  const single = await client.completions.create({ ...base, stop });
  assertEquals(single.choices.map((c) => c.text), cut.choices.map((c) => c.text), "stop as a plain string");
});

Deno.test("sdk: chat uses the last user message; max_completion_tokens bounds the reply", async () => {
  const { prompt: _, ...rest } = base;
  const chat = await client.chat.completions.create({
    ...rest,
    messages: [{ role: "user", content: "3+4=" }],
  });
  const plain = await client.completions.create(base);
  assertEquals(chat.choices.map((c) => c.message.content), plain.choices.map((c) => c.text));
  assertEquals(chat.choices[0].message.role, "assistant");
  const short = await client.chat.completions.create({
    model: "tiny",
    messages: [{ role: "user", content: "3+4=" }],
    max_completion_tokens: 3,
    temperature: 1,
    n: 4,
  });
  ok(short.choices.every((c) => (c.message.content ?? "").length <= 3), JSON.stringify(short.choices));
  ok(short.usage!.completion_tokens <= 12);
});

Deno.test("sdk: streaming chat and completions reassemble the same texts; usage arrives in the last chunk", async () => {
  const { prompt: _, ...rest } = base;
  const messages = [{ role: "user" as const, content: "3+4=" }];
  const whole = await client.chat.completions.create({ ...rest, messages });
  const stream = await client.chat.completions.create({
    ...rest,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  const texts = ["", "", ""];
  const finish: (string | null)[] = [null, null, null];
  let usage = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    for (const c of chunk.choices) {
      texts[c.index] += c.delta.content ?? "";
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assertEquals(texts, whole.choices.map((c) => c.message.content));
  assertEquals(finish, whole.choices.map((c) => c.finish_reason));
  assertEquals(usage, whole.usage);
  ok(chunks > 3, `${chunks} chunks`);
  const plain = await client.completions.create(base);
  const s2 = await client.completions.create({ ...base, stream: true });
  const t2 = ["", "", ""];
  let sawUsage = false;
  for await (const chunk of s2) {
    for (const c of chunk.choices) t2[c.index] += c.text;
    if (chunk.usage) sawUsage = true;
  }
  assertEquals(t2, plain.choices.map((c) => c.text));
  ok(!sawUsage, "no usage without stream_options.include_usage");
});

Deno.test("sdk: log-probs on chat and completions; at temperature 0 the chosen token is the top one", async () => {
  const r = await client.chat.completions.create({
    model: "tiny",
    messages: [{ role: "user", content: "12+3=" }],
    temperature: 0,
    max_tokens: 6,
    logprobs: true,
    top_logprobs: 3,
  });
  const content = r.choices[0].logprobs!.content!;
  assertEquals(content.map((t) => t.token).join(""), r.choices[0].message.content);
  for (const t of content) {
    assertEquals(t.top_logprobs.length, 3);
    assertEquals(t.top_logprobs[0].token, t.token, "greedy picks the most likely token");
    ok(Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-5);
    ok(t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob && t.logprob <= 0);
  }
  const c = await client.completions.create({ ...base, n: 1, max_tokens: 4, logprobs: 2 });
  const lp = c.choices[0].logprobs!;
  assertEquals(lp.tokens!.join(""), c.choices[0].text);
  assertEquals(lp.token_logprobs!.length, lp.tokens!.length);
  ok(lp.top_logprobs!.every((m) => Object.keys(m).length === 2));
});

Deno.test("sdk: a parameter serve does not implement raises BadRequestError naming it", async () => {
  for (
    const [extra, name] of [[{ best_of: 2 }, "best_of"], [{ echo: true }, "echo"], [
      { suffix: "x" },
      "suffix",
    ]]
  ) {
    const err = await caught(client.completions.create({ ...base, ...extra as object }));
    ok(err instanceof OpenAI.BadRequestError, String(err));
    assertEquals((err as InstanceType<typeof OpenAI.BadRequestError>).param, name);
    ok((err as Error).message.includes(`'${name}'`), (err as Error).message);
  }
  const chatErr = await caught(client.chat.completions.create({
    model: "tiny",
    messages: [{ role: "user", content: "1+1=" }],
    presence_penalty: 0.5,
  }));
  ok(chatErr instanceof OpenAI.BadRequestError && chatErr.param === "presence_penalty", String(chatErr));
  assertEquals(chatErr.status, 400);
  // The API's own defaults ask for nothing, so clients that always send them are served.
  const noOps = await client.chat.completions.create({
    model: "tiny",
    messages: [{ role: "user", content: "1+1=" }],
    presence_penalty: 0,
    frequency_penalty: 0,
    logit_bias: {},
    max_tokens: 2,
  });
  assertEquals(noOps.choices.length, 1);
  const tools = await caught(client.chat.completions.create({
    model: "tiny",
    messages: [{ role: "user", content: "1+1=" }],
    response_format: { type: "json_object" },
  }));
  ok(tools instanceof OpenAI.BadRequestError && tools.param === "response_format", String(tools));
});

globalThis.addEventListener("unload", () => {
  server.shutdown();
  Deno.removeSync(dir, { recursive: true });
});
