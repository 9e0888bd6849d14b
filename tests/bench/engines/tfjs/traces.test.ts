import { assertEquals, ok, throws } from "../../../assert.ts";
import { type Family, generateTasks } from "../../../../datasets/mod.ts";
import { grade } from "../../../../evaluators/mod.ts";
import {
  methodsOf,
  renderPrompt,
  renderTrace,
  TRACE_FAMILIES,
} from "../../../../bench/engines/tfjs/traces.ts";
import { defaultSettings, taskSets } from "../../../../bench/engines/tfjs/settings.ts";

const families = Object.keys(TRACE_FAMILIES) as Family[];

Deno.test("traces: the strict grader agrees with each method's own answer; correct methods are always right", () => {
  for (const family of families) {
    for (let d = 1; d <= TRACE_FAMILIES[family].maxDifficulty; d++) {
      const records = generateTasks({
        seed: 3,
        split: "train",
        count: 60,
        families: [family],
        difficulty: d,
      });
      for (const method of methodsOf(family)) {
        let right = 0;
        for (const r of records) {
          const { text, answer } = renderTrace(method, r.meta.params!);
          const g = grade(text, r.answer, { strict: true });
          assertEquals(
            g.correct,
            answer === r.answer,
            `${family}/${method.name} d${d} on ${r.problem}: ${text}`,
          );
          assertEquals(g.rule, "boxed");
          if (g.correct) right++;
        }
        if (method.correct) assertEquals(right, records.length, `${family}/${method.name} d${d}`);
      }
    }
  }
});

Deno.test("traces: every shortcut is right on some problems and wrong on others (tempting, not random)", () => {
  for (const family of families) {
    const records = generateTasks({ seed: 5, split: "train", count: 400, families: [family], difficulty: 2 });
    for (const method of methodsOf(family).filter((m) => !m.correct)) {
      const right = records.filter((r) => renderTrace(method, r.meta.params!).answer === r.answer).length;
      ok(
        right > 0 && right < records.length,
        `${family}/${method.name}: right on ${right}/${records.length}`,
      );
    }
  }
});

Deno.test("traces: known examples render compactly", () => {
  const arith = methodsOf("arith");
  const p = { terms: [3, 4, 5], ops: ["+", "*"] };
  assertEquals(arith.map((m) => renderTrace(m, p).text), [
    "4*5=20;3+20=23;\\boxed{23}",
    "3+4=7;7*5=35;\\boxed{35}",
    "4*5=20;3+20=23;\\boxed{23}",
  ]);
  assertEquals(renderTrace(arith[2], { terms: [2, 8], ops: ["-"] }).text, "2-8=6;\\boxed{6}");
  assertEquals(renderTrace(methodsOf("gcd")[0], { a: 12, b: 18 }).text, "18%12=6;12%6=0;\\boxed{6}");
  assertEquals(renderTrace(methodsOf("mod")[1], { a: 47, m: 6 }).text, "47->7;6*1=6;7-6=1;\\boxed{1}");
  const [rec] = generateTasks({ seed: 1, split: "test", count: 1, families: ["linear"], difficulty: 3 });
  ok(/^\d+x[+-]\d+=-?\d+$/.test(renderPrompt(rec)), renderPrompt(rec));
  throws(() => methodsOf("frac"), /family 'frac' has no methods/);
  throws(() => renderTrace(arith[0], { a: 1 }), /arith needs terms/);
});

Deno.test("traces: default-settings prompts and traces fit the default token budget", () => {
  const s = defaultSettings();
  const { train, test } = taskSets(s);
  assertEquals(new Set(train.map((r) => r.meta.family)), new Set(s.tasks.families));
  for (const r of [...train, ...test]) {
    ok(renderPrompt(r).length + 1 <= s.model.promptLength, renderPrompt(r));
    for (const m of methodsOf(r.meta.family!)) {
      ok(renderTrace(m, r.meta.params!).text.length + 1 <= s.rl.maxNewTokens, `${m.name} on ${r.problem}`);
    }
  }
});

Deno.test("renderPrompt refuses shapes the compact prompts cannot express (mod with b/e, linear with k)", () => {
  for (const family of ["mod", "linear"] as Family[]) {
    const hard = generateTasks({ seed: 1, split: "train", count: 40, families: [family], difficulty: 5 });
    const tricky = hard.filter((r) => ["b", "e", "k"].some((key) => key in (r.meta.params ?? {})));
    if (tricky.length === 0) throw new Error(`no hard ${family} record generated`);
    for (const r of tricky) throws(() => renderPrompt(r), /compact prompts do not express/);
  }
});
