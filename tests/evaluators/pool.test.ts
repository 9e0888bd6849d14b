import { assertEquals, ok, rejects } from "../assert.ts";
import { exists } from "../../common/fs.ts";
import { grade, gradeMany, verdictOf } from "../../evaluators/mod.ts";
import { GraderPool } from "../../evaluators/pool.ts";

const items = Array.from({ length: 300 }, (_, i) => ({
  prediction: i % 3 === 0
    ? `\\boxed{${i}}`
    : i % 3 === 1
    ? `Answer: ${i + 1}`
    : `no marker here, just a long sentence ${i}`,
  gold: String(i),
  strict: i % 7 === 0,
}));
const inline = items.map((it) => grade(it.prediction, it.gold, { strict: it.strict }));

Deno.test("gradeMany: a worker gives exactly the inline results, in order, strict flag per item", async () => {
  assertEquals(await gradeMany(items, { workers: 1 }), inline);
  assertEquals(await gradeMany(items, { workers: 0 }), inline);
  assertEquals(await gradeMany(items.slice(0, 5)), inline.slice(0, 5));
  assertEquals(await gradeMany([]), []);
  const strict = await gradeMany([{ prediction: "42", gold: "42", strict: true }, {
    prediction: "42",
    gold: "42",
  }]);
  assertEquals(strict.map((x) => x.status), ["no_answer", "correct"]);
});

Deno.test("pool: a stuck answer times out, its worker is replaced, nothing else is lost", async () => {
  const pool = new GraderPool(1, new URL("./fixtures/hanging_worker.ts", import.meta.url).href);
  try {
    const batch = [...items.slice(0, 100), { prediction: "HANG", gold: "1" }, ...items.slice(100)];
    const r = await pool.grade(batch, { timeoutMs: 300, batchSize: 16 });
    assertEquals(r.length, batch.length);
    assertEquals(r[100].status, "timeout");
    assertEquals(r[100].rule, "timeout_300ms (retried 1× alone on a fresh worker)");
    assertEquals(verdictOf(r[100].status), "ungraded");
    assertEquals([...r.slice(0, 100), ...r.slice(101)], inline);
    // One call at a time per pool: a second concurrent call is refused, not interleaved.
    const first = pool.grade(items.slice(0, 8));
    await rejects(pool.grade(items.slice(0, 8)), /one call at a time/);
    assertEquals(await first, inline.slice(0, 8));
    // The replacement worker serves the next call.
    assertEquals(await pool.grade(items.slice(0, 40), { batchSize: 4 }), inline.slice(0, 40));
  } finally {
    pool.close();
  }
});

// A worker that is terminated keeps running for a while (Deno lets it finish its task before stopping the
// isolate), so it must not write where its replacement reports progress. ~50 pathological answers that each
// outlive the timeout, mixed with ordinary ones, on both cores kept busy by two spinning workers.
Deno.test("pool: many timeouts in one batch, cores busy: every input gets exactly one verdict, its own or timeout", async () => {
  const spin = `self.onmessage = () => { for (;;) { /* keep a core busy */ } };`;
  const spinners = [0, 1].map(() =>
    new Worker(URL.createObjectURL(new Blob([spin], { type: "text/javascript" })), { type: "module" })
  );
  spinners.forEach((w) => w.postMessage(0));
  const pool = new GraderPool(2, new URL("./fixtures/slow_worker.ts", import.meta.url).href);
  try {
    const batch = Array.from(
      { length: 150 },
      (_, i) =>
        i % 3 === 1
          ? { prediction: "SLOW", gold: "1" }
          : { prediction: String(i), gold: String(i % 5 ? i : -i) },
    );
    // No retry here (this test is about a terminated worker's late writes; the retry is tested above).
    const r = await pool.grade(batch, { timeoutMs: 300, batchSize: 12, retries: 0 });
    assertEquals(r.length, batch.length);
    // Each input has one verdict: its own result, or `timeout`. A starved watchdog may let a slow answer finish
    // (its real verdict) and a starved worker may time out on a fast one, so only the proportions are bounded.
    const problems = batch.flatMap((it, i) => {
      const own = it.prediction === "SLOW" ? "wrong" : it.prediction === it.gold ? "correct" : "wrong";
      return r[i]?.status === own || r[i]?.status === "timeout" ? [] : [`${i}: ${r[i]?.status ?? "missing"}`];
    });
    assertEquals(problems, []);
    const slow = batch.flatMap((it, i) => it.prediction === "SLOW" ? [r[i].status] : []);
    const fast = batch.flatMap((it, i) => it.prediction === "SLOW" ? [] : [r[i].status]);
    ok(slow.filter((s) => s === "timeout").length >= 30, `slow answers timed out: ${slow.join(" ")}`);
    ok(fast.filter((s) => s === "timeout").length <= 15, `fast answers timed out: ${fast.join(" ")}`);
  } finally {
    pool.close();
    spinners.forEach((w) => w.terminate());
  }
});

Deno.test("pool: an answer stuck once (a load spike) is retried alone on a fresh worker and gets its own verdict", async () => {
  const marker = Deno.makeTempFileSync();
  Deno.removeSync(marker);
  const pool = new GraderPool(1, new URL("./fixtures/once_worker.ts", import.meta.url).href);
  try {
    const batch = [{ prediction: "1", gold: "1" }, { prediction: `ONCE:${marker}`, gold: "7" }, {
      prediction: "2",
      gold: "3",
    }];
    const r = await pool.grade(batch, { timeoutMs: 200 });
    assertEquals(r.map((x) => x.status), ["correct", "correct", "wrong"]);
    Deno.removeSync(marker);
    const once = await pool.grade(batch, { timeoutMs: 200, retries: 0 });
    assertEquals(once.map((x) => verdictOf(x.status)), ["correct", "ungraded", "incorrect"]);
  } finally {
    pool.close();
    if (exists(marker)) Deno.removeSync(marker);
  }
});
