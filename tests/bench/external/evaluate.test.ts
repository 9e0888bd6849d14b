import { assertEquals, ok, throws } from "../../assert.ts";
import { join } from "node:path";
import {
  gradeSamples,
  modelSlug,
  samplesIdentity,
  selectProblems,
} from "../../../bench/external/evaluate.ts";
import { gradeMany, type GradeManyItem } from "../../../evaluators/pool.ts";
import { tempDir } from "../../temp.ts";
import { applyTemplate, defaultTemplateFor } from "../../../bench/external/templates.ts";
import { resolveTemplate } from "../../../datasets/mod.ts";
import type { EvalSettings } from "../../../bench/external/evaluate.ts";
import { configHash } from "../../../common/hash.ts";

Deno.test("evaluate: model slugs are folder-safe and keep the name readable", () => {
  assertEquals(modelSlug("Qwen/Qwen2.5-Math-7B"), "Qwen_Qwen2.5-Math-7B");
  assertEquals(modelSlug("llama3.1:8b-instruct"), "llama3.1_8b-instruct");
  assertEquals(modelSlug("../.."), "model");
});

Deno.test("evaluate: a seeded subset is stable, in dataset order, and a larger limit extends it", () => {
  const items = Array.from({ length: 50 }, (_, i) => i);
  assertEquals(selectProblems(items, 5, null), [0, 1, 2, 3, 4]);
  assertEquals(selectProblems(items, null, null).length, 50);
  const a = selectProblems(items, 10, 7);
  assertEquals(a, selectProblems(items, 10, 7));
  assertEquals(a, [...a].sort((x, y) => x - y));
  ok(a.some((x) => x >= 10), "not just the first ten");
  const b = selectProblems(items, 20, 7);
  ok(a.every((x) => b.includes(x)), "limit 20 contains limit 10's problems");
});

Deno.test("evaluate: the samples identity ignores n, k, limit and endpoint but not sampling settings", () => {
  const base: EvalSettings = {
    endpoint: "http://127.0.0.1:1/v1",
    model: "m",
    mode: "chat",
    dataset: "math500",
    limit: 10,
    subsetSeed: null,
    template: resolveTemplate("boxed"),
    n: 4,
    ks: [1, 4],
    temperature: 0.6,
    topP: 0.95,
    maxTokens: 100,
    seed: 0,
    server: {},
  };
  const id = samplesIdentity(base);
  // A folder made before --sampling existed (no `server` in its hash) keeps its identity.
  const old = {
    model: "m",
    mode: "chat",
    dataset: "math500",
    subsetSeed: null,
    template: base.template.text,
    temperature: 0.6,
    topP: 0.95,
    maxTokens: 100,
    seed: 0,
  };
  assertEquals(configHash(old), id);
  ok(samplesIdentity({ ...base, server: { top_k: 40 } }) !== id, "--sampling changes the samples");
  ok(
    samplesIdentity({ ...base, server: { top_k: 40 } }) !==
      samplesIdentity({ ...base, server: { top_k: 0 } }),
  );
  assertEquals(samplesIdentity({ ...base, n: 8, ks: [8], limit: 20, endpoint: "http://h:2/v1" }), id);
  for (
    const change of [{ temperature: 1 }, { maxTokens: 50 }, { seed: 1 }, { mode: "completions" as const }]
  ) {
    ok(samplesIdentity({ ...base, ...change }) !== id, JSON.stringify(change));
  }
});

Deno.test("templates: shipped names, files with {problem}, and one-line errors", () => {
  assertEquals(defaultTemplateFor("dapo-math-17k"), "dapo-answer");
  assertEquals(defaultTemplateFor("math500"), "boxed");
  const boxed = resolveTemplate("boxed");
  assertEquals(
    applyTemplate(boxed, "What is $1+1$?"),
    "What is $1+1$?\n\nPlease reason step by step, and put your final answer within \\boxed{}.",
  );
  ok(applyTemplate(resolveTemplate("dapo-answer"), "P").includes("Answer:"));
  assertEquals(
    applyTemplate(resolveTemplate("raw"), "costs $$5"),
    "costs $$5",
    "replacement text is literal",
  );
  const file = new URL("./fixtures/qa_template.txt", import.meta.url).pathname;
  assertEquals(
    applyTemplate(resolveTemplate(file), "2+2?"),
    "Question: 2+2?\nGive the final answer in \\boxed{}.\n",
  );
  throws(
    () => resolveTemplate("nope"),
    /neither a shipped template \(dapo-answer, boxed, raw\) nor a readable file/,
  );
  const noSlot = Deno.makeTempFileSync();
  Deno.writeTextFileSync(noSlot, "no placeholder");
  throws(() => resolveTemplate(noSlot), /has no \{problem\} placeholder/);
  Deno.removeSync(noSlot);
});

Deno.test("evaluate: grading reads each problem's text (a set asked for without an order is a set in strict mode)", async () => {
  const dir = tempDir();
  try {
    const problem = {
      id: "p0",
      problem: "Find all possible values. Enter all possible values, separated by commas.",
      answer: "-2, -1, 1, 2",
      meta: {},
    };
    const paths = {
      runId: "r",
      runDir: dir,
      samplesPath: join(dir, "samples.jsonl"),
      statusPath: join(dir, "status.json"),
    };
    const sample = {
      problemId: "p0",
      sample: 0,
      text: "\\boxed{2, 1, -1, -2}",
      finish_reason: "stop",
      usage: null,
      latency_ms: 1,
      request: "p0#0",
      request_n: 1,
      attempts: 1,
    };
    Deno.writeTextFileSync(paths.samplesPath, JSON.stringify(sample) + "\n");
    const strict = (items: GradeManyItem[]) =>
      gradeMany(items.map((i) => ({ ...i, strict: true })), { workers: 0 });
    const [withText] = await gradeSamples([problem], "d", paths, 1, strict);
    assertEquals(withText.correct, true);
    const [without] = await gradeSamples(
      [problem],
      "d",
      paths,
      1,
      (items) => strict(items.map(({ problem: _, ...i }) => i)),
    );
    assertEquals(without.correct, false, "without the problem's text strict mode reads the list's order");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
