// Full-data checks over ../shared/datasets: every gold matches itself, its \boxed{} form and reformatted
// variants, and does not match other problems' distinct answers (sampled pairs, seeded). Skips without the data.
import { assertEquals } from "../assert.ts";
import { grade } from "../../evaluators/mod.ts";
import { exists } from "../../common/fs.ts";
import { fromCsv } from "../../common/csv.ts";
import { Rng } from "../../common/prng.ts";
import { parquetReadObjects } from "hyparquet";
import { DATASET_MIRROR, missing, skipping } from "../external_inputs.ts";

const root = DATASET_MIRROR;
const haveData = exists(root);
skipping("the grader's full-data tests", haveData ? null : missing("datasetMirror"));

/** MATH-500, AIME 2025 and (a seeded sample of) DAPO gold answers. */
async function golds(): Promise<Record<string, string[]>> {
  const math500 = Deno.readTextFileSync(`${root}math500/test.jsonl`).trim().split("\n").map((l) =>
    JSON.parse(l).answer
  );
  const aime = ["I", "II"].flatMap((part) =>
    fromCsv(Deno.readTextFileSync(`${root}aime2025/matharena/aime_2025_${part}/answers.csv`)).map((r) =>
      String((r as Record<string, unknown>).answer)
    )
  );
  const buf = Deno.readFileSync(`${root}dapo-math-17k/dapo_math_17k.parquet`);
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const rows = await parquetReadObjects({ file, columns: ["reward_model"] }) as {
    reward_model: { ground_truth: string };
  }[];
  // Every distinct DAPO ground truth (17,917 rows repeat far fewer distinct answers).
  const dapo = [...new Set(rows.map((r) => r.reward_model.ground_truth))];
  return { math500, aime2025: aime, dapo };
}

// Textually different golds of different problems that are genuinely the same value.
// ("x=5" is graded as the value 5 by design: a lone-symbol assignment gold accepts its value.)
const KNOWN_EQUAL = new Set<string>(["5|x=5", "x=5|5"]);

// Reformatted but equal forms of a gold answer, as models write them.
function variants(gold: string): string[] {
  return [
    `\\boxed{${gold}}`,
    `Thus we obtain the result.\n\\boxed{${gold}}`,
    `The final answer is $${gold}$. I hope it is correct.`,
    `Some work.\nAnswer: $${gold}$`,
    `<think>maybe \\boxed{wrong}</think>so \\boxed{${gold.replace(/\\frac/g, "\\dfrac")}}`,
    `\\boxed{${gold.replace(/(?<![a-zA-Z]) /g, "")}}`,
    `\\boxed{${gold.replace(/,(?!\s|\\!|\d{3})/g, ", ")}}`,
  ];
}

Deno.test({
  name: "datasets: every gold matches itself and its reformatted variants",
  ignore: !haveData,
  async fn() {
    const failures: string[] = [];
    for (const [name, list] of Object.entries(await golds())) {
      for (const [i, gold] of list.entries()) {
        for (const v of [gold, ...variants(gold)]) {
          const r = grade(v, gold);
          if (!r.correct) {
            failures.push(`${name}[${i}] ${JSON.stringify(gold)} vs ${JSON.stringify(v)}: ${r.status}`);
          }
        }
      }
    }
    assertEquals(failures, []);
  },
});

Deno.test({
  name: "datasets: golds do not match other problems' distinct answers",
  ignore: !haveData,
  async fn() {
    const sets = await golds();
    const all = Object.values(sets).flat();
    const rng = Rng.seeded(99);
    // MATH-500 gold i vs gold i+1 (all of them), then seeded random pairs across the three datasets.
    const pairs: [string, string][] = sets.math500.slice(1).map((b, i) => [sets.math500[i], b]);
    for (let t = 0; t < 4000; t++) pairs.push([all[rng.int(all.length)], all[rng.int(all.length)]]);
    const falsePositives: string[] = [];
    for (const [a, b] of pairs) {
      if (a.replace(/\s/g, "") === b.replace(/\s/g, "") || KNOWN_EQUAL.has(`${a}|${b}`)) continue;
      if (grade(`\\boxed{${a}}`, b).correct) falsePositives.push(`${a}|${b}`);
    }
    assertEquals([...new Set(falsePositives)], []);
  },
});
