// Development set of real model responses (ProcessBench GSM8K split, 400 responses of 10 open models, labelled
// by ProcessBench's final_answer_correct): agreement, false positives and false negatives of the default grader.
// Skips with a message when ../shared/grader-dev is absent. Nothing in the grader is tuned to single lines.
import { assertEquals, ok } from "../assert.ts";
import { grade } from "../../evaluators/mod.ts";
import { exists, readJsonl } from "../../common/fs.ts";
import { GRADER_DEV, missing, skipping } from "../external_inputs.ts";

const path = `${GRADER_DEV}processbench_gsm8k.jsonl`;
const haveData = exists(path);
skipping("the grader dev-set test", haveData ? null : missing("graderDev", `${path} not found`));

interface Line {
  prediction: string;
  gold: string;
  expected: boolean;
  source: string;
}

// Label errors: responses labelled incorrect whose final boxed answer equals the gold. gsm8k-70 ends "The answer
// is: $\boxed{59}$" (gold 59); gsm8k-74 ends "needs to make \boxed{2} trips" (gold 2). Graded correct, rightly.
const LABEL_ERRORS = ["gsm8k-70 ", "gsm8k-74 "];

Deno.test({
  name:
    "dev set: ≥ 396/400 agreement with ProcessBench labels, no false positive but documented label errors",
  ignore: !haveData,
  fn() {
    const lines = readJsonl<Line>(path);
    assertEquals(lines.length, 400);
    const fp: string[] = [];
    const fn: string[] = [];
    for (const [i, l] of lines.entries()) {
      const r = grade(l.prediction, l.gold);
      const id = `line ${i + 1} ${/gsm8k-\d+ /.exec(l.source)?.[0] ?? l.source}(${r.rule}: ${r.extracted})`;
      if (r.correct && !l.expected) fp.push(id);
      if (!r.correct && l.expected) fn.push(id);
    }
    const agree = lines.length - fp.length - fn.length;
    console.log(
      `dev set: agreement ${agree}/400, false positives ${fp.length}, false negatives ${fn.length}`,
    );
    for (const x of [...fp.map((f) => `FP ${f}`), ...fn.map((f) => `FN ${f}`)]) console.log(`  ${x}`);
    ok(agree >= 396, `agreement ${agree}/400`);
    assertEquals(fp.filter((f) => !LABEL_ERRORS.some((id) => f.includes(id))), []);
  },
});
