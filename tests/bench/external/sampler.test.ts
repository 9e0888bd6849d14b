import { assertEquals, ok, rejects } from "../../assert.ts";
import { readJsonl } from "../../../common/fs.ts";
import type { Endpoint } from "../../../bench/external/client.ts";
import { sampleAll, type SampleJob, type SamplerOptions } from "../../../bench/external/sampler.ts";
import type { SampleRecord } from "../../../bench/external/samples.ts";
import { type Fault, startFaultServer } from "./fault_server.ts";

const jobs: SampleJob[] = Array.from({ length: 12 }, (_, i) => ({ id: `p${i}`, prompt: `problem ${i}` }));

function options(url: string, samplesPath: string, over: Partial<SamplerOptions> = {}): SamplerOptions {
  const endpoint: Endpoint = {
    baseUrl: url,
    model: "test-model",
    mode: "completions",
    timeoutMs: 1000,
    retry: { maxRetries: 6, baseMs: 5, maxMs: 20, maxRetryAfterMs: 1000 },
  };
  return {
    endpoint,
    params: { temperature: 1, topP: 1, maxTokens: 16 },
    n: 8,
    seed: 3,
    concurrency: 3,
    maxPerRequest: 4,
    samplesPath,
    ...over,
  };
}

/** Every problem has exactly samples 0..n-1, once each, and each text answers that problem's prompt. */
function assertComplete(path: string, n: number) {
  const rows = readJsonl<SampleRecord>(path);
  assertEquals(rows.length, jobs.length * n, "one line per sample, none repeated");
  for (const job of jobs) {
    const mine = rows.filter((r) => r.problemId === job.id);
    assertEquals(mine.map((r) => r.sample).sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    ok(mine.every((r) => r.text.startsWith(`prompt=${job.prompt}|`)), `texts of ${job.id} answer its prompt`);
    assertEquals(new Set(mine.map((r) => r.text)).size, n, `texts of ${job.id} are distinct choices`);
  }
  return rows;
}

Deno.test("sampler: faults injected under concurrency lose and double-count nothing", async () => {
  const script: Fault[] = [
    "drop",
    "429",
    "500",
    "malformed",
    "ok",
    "slow",
    "503",
    "drop",
    "empty",
    "429",
    "ok",
    "500",
  ];
  const srv = startFaultServer({ script, retryAfter: "0.05", slowMs: 1200, latencyMs: 15 });
  const dir = Deno.makeTempDirSync();
  try {
    const retries: string[] = [];
    const path = `${dir}/samples.jsonl`;
    const stats = await sampleAll(
      jobs,
      options(srv.url, path, { onRetry: (_id, reason) => retries.push(reason) }),
    );
    const rows = assertComplete(path, 8);
    assertEquals(stats.added, 96);
    assertEquals(stats.resumed, 0);
    assertEquals(stats.failed, []);
    assertEquals(stats.requests, 24, "n=8 in requests of 4");
    assertEquals(retries.length, script.filter((f) => f !== "ok").length, retries.join("; "));
    ok(srv.log.maxInFlight <= 3, `max in flight ${srv.log.maxInFlight} > concurrency 3`);
    ok(srv.log.maxInFlight >= 2, "requests did run concurrently");
    // Once the server has finished (including the slow reply the client gave up on, whose 4 choices reached
    // nobody), every choice it delivered is stored exactly once.
    await srv.close();
    assertEquals(srv.log.choicesDelivered - 4, rows.length);
    assertEquals(rows.filter((r) => r.finish_reason === "length").length, 12 * 2, "finish reasons kept");
    ok(rows.every((r) => r.usage?.prompt_tokens === 7 && r.latency_ms >= 0 && r.request_n === 4));
  } finally {
    await srv.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("sampler: resume after failures and a torn line requests only the missing samples", async () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/samples.jsonl`;
  const noRetry = (url: string) => {
    const o = options(url, path, { concurrency: 1 });
    return { ...o, endpoint: { ...o.endpoint, retry: { ...o.endpoint.retry, maxRetries: 0 } } };
  };
  // Pass 1, one request at a time and no retries: p0 fails after its first 4 samples, p1 completes, p2 fails.
  const flaky = startFaultServer({ script: ["ok", "500", "ok", "ok", "500"] });
  let first;
  try {
    first = await sampleAll(jobs, noRetry(flaky.url));
  } finally {
    await flaky.close();
  }
  assertEquals(first.failed.map((f) => f.problemId), ["p0", "p2"]);
  assertEquals(first.failed[0], {
    problemId: "p0",
    kind: "retries",
    error: "gave up after 1 attempts (last: HTTP 500: internal error)",
  });
  assertEquals(first.added, 96 - 4 - 8);
  // A crash mid-append leaves a torn line; resume must drop it, not choke on it or keep it.
  Deno.writeTextFileSync(path, '{"problemId":"p2","sample":0,"te', { append: true });

  const healthy = startFaultServer();
  try {
    const second = await sampleAll(jobs, options(healthy.url, path));
    assertEquals(second.resumed, 84);
    assertEquals(second.added, 12);
    ok(second.repairedBytes > 0);
    assertEquals(healthy.log.choicesDelivered, 12, "only the 12 missing samples were requested");
    assertEquals(
      healthy.log.bodies.map((b) => b.n),
      [4, 4, 4],
      "p0 asks for its last 4, p2 for 8 in two requests",
    );
    assertComplete(path, 8);
    const third = await sampleAll(jobs, options(healthy.url, path));
    assertEquals(
      [third.resumed, third.added, third.requests],
      [96, 0, 0],
      "a finished run makes no requests",
    );
  } finally {
    await healthy.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("sampler: a server that ignores or rejects n gets one sample per request", async () => {
  for (const quirk of [{ ignoreN: true }, { rejectN: true }]) {
    const srv = startFaultServer(quirk);
    const dir = Deno.makeTempDirSync();
    try {
      const stats = await sampleAll(jobs, options(srv.url, `${dir}/samples.jsonl`, { n: 3, concurrency: 1 }));
      assertEquals(stats.perRequest, 1, JSON.stringify(quirk));
      assertComplete(`${dir}/samples.jsonl`, 3);
    } finally {
      await srv.close();
      Deno.removeSync(dir, { recursive: true });
    }
  }
});

Deno.test("sampler: an n above the server's slots is split as it says, told once; usage marked per choice", async () => {
  const srv = startFaultServer({ maxN: 2, llamaUsage: true });
  const dir = Deno.makeTempDirSync();
  const notices: string[] = [];
  try {
    const path = `${dir}/samples.jsonl`;
    const stats = await sampleAll(
      jobs,
      options(srv.url, path, { n: 8, maxPerRequest: 8, onNotice: (m) => notices.push(m) }),
    );
    assertEquals(stats.perRequest, 2);
    assertEquals(stats.nSplit?.asked, 8);
    assertEquals(stats.nSplit?.cause, "refused");
    assertEquals(notices.length, 1, notices.join("\n"));
    ok(notices[0].includes("refused n = 8") && notices[0].includes("n = 2 per request"), notices[0]);
    const rows = assertComplete(path, 8);
    ok(rows.every((r) => r.request_n === 2 && r.usage_scope === "first_choice"));
    // Each refused n = 8 costs one request at most per lane in flight (3), never one per problem.
    ok(srv.log.faults.ok <= jobs.length * 4 + 3, JSON.stringify(srv.log.faults));
  } finally {
    await srv.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("sampler: a context rejection with n > 1 is one request per problem, not a smaller retry", async () => {
  const message = "request (300 tokens) exceeds the available context size (256 tokens), try increasing it";
  const srv = startFaultServer({ reject: (p) => (p === "problem 1" ? message : null) });
  const dir = Deno.makeTempDirSync();
  try {
    const stats = await sampleAll(jobs, options(srv.url, `${dir}/samples.jsonl`, { n: 4, concurrency: 1 }));
    assertEquals(stats.failed.length, 1);
    ok(stats.failed[0].error.includes("start llama-server with a larger -c"), stats.failed[0].error);
    const asked = srv.log.bodies.filter((b) => b.prompt === "problem 1");
    assertEquals(asked.length, 1, "one request for the rejected problem");
    assertEquals(stats.nSplit, null);
    // Every request states the sampling parameters, stop [] included.
    ok(srv.log.bodies.every((b) =>
      b.temperature === 1 && b.top_p === 1 && b.max_tokens === 16 &&
      Number.isInteger(b.seed) && Array.isArray(b.stop) && (b.stop as unknown[]).length === 0
    ));
  } finally {
    await srv.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("sampler: a refused key mid-run stops the run with a one-line error and keeps what was written", async () => {
  const srv = startFaultServer({ script: ["ok", "ok", "401"] });
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/samples.jsonl`;
    await rejects(
      sampleAll(jobs, options(srv.url, path, { concurrency: 1, maxPerRequest: 8 })),
      (e: Error) => /refused the request without an API key.*--api-key-env/.test(e.message),
    );
    assertEquals(readJsonl<SampleRecord>(path).length, 16);
    assertEquals(srv.log.requests, 3, "no requests after the fatal error");
  } finally {
    await srv.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
