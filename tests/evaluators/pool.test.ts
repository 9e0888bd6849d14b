import { assertEquals, ok, rejects } from "../assert.ts";
import { grade, gradeMany } from "../../evaluators/mod.ts";
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
    ok(r[100].rule.startsWith("timeout"));
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
