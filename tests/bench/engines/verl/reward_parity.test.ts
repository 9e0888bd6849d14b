// The reward that trains is the grade that is reported: ≥ 5,000 responses in the forms models write, built from
// real gold answers (MATH-500 and DAPO-Math-17K from ../shared/datasets), graded by `deno task grade --strict` and
// scored by the reward function VERL runs (bench/engines/verl/reward.py): directly with python3, and through VERL
// 0.7.0's real reward managers (trainer-side naive and dapo, the reward loop's naive and dapo) with real
// tokenisation when the VERL venv exists. Every path must agree with the grade on every response.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists } from "../../../../common/fs.ts";
import { parquetReadObjects } from "hyparquet";
import { assert, assertEquals } from "../../../assert.ts";
import { responseForms } from "./fixtures/response_forms.ts";
import { graderCommand, TOKENIZER_DIR, VENV_PYTHON, VERL_PYTHONPATH, verlVenvMissing } from "./verl_venv.ts";
import { DATASET_MIRROR, missing, skipping } from "../../../external_inputs.ts";

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const root = here("../../../../");
const datasets = DATASET_MIRROR;
const MATH500 = join(datasets, "math500", "test.jsonl");
const DAPO = join(datasets, "dapo-math-17k", "dapo_math_17k.parquet");
const REWARD_PY = join(root, "bench", "engines", "verl", "reward.py");
/** DAPO golds taken (every k-th row, spread over the file). */
const DAPO_GOLDS = 300;

interface CorpusLine {
  prediction: string;
  gold: string;
  data_source: string;
  form: string;
}

async function corpus(): Promise<CorpusLine[]> {
  const math = readFileSync(MATH500, "utf8").split("\n").filter((l) => l.trim()).map((l) =>
    String(JSON.parse(l).answer)
  );
  const bytes = readFileSync(DAPO);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const dapoRows = await parquetReadObjects({ file, columns: ["reward_model"] }) as {
    reward_model: { ground_truth: string };
  }[];
  const step = Math.floor(dapoRows.length / DAPO_GOLDS);
  const dapo = Array.from(
    { length: DAPO_GOLDS },
    (_, k) => String(dapoRows[k * step].reward_model.ground_truth),
  );
  const lines: CorpusLine[] = [];
  for (const [source, golds] of [["math", math], ["math_dapo", dapo]] as const) {
    for (const gold of golds) {
      for (const { prediction, form } of responseForms(gold)) {
        lines.push({ prediction, gold, data_source: source, form });
      }
    }
  }
  return lines;
}

function run(cmd: string, args: string[], env: Record<string, string> = {}): void {
  const out = new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).outputSync();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr).slice(-4000)}`);
  }
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

function gradeStrict(dir: string, lines: CorpusLine[]): boolean[] {
  const input = join(dir, "corpus.jsonl");
  const output = join(dir, "graded.jsonl");
  run(Deno.execPath(), [
    "run",
    "--quiet",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-sys",
    join(root, "cli.ts"),
    "grade",
    "--strict",
    "--input",
    input,
    "--output",
    output,
  ]);
  const graded = readJsonl<{ correct: boolean }>(output);
  assertEquals(graded.length, lines.length, "grade --strict graded every line");
  return graded.map((g) => g.correct);
}

/** Disagreements of one reward path with the grade, as "form: prediction | gold" lines. */
function disagreements(
  lines: CorpusLine[],
  grade: boolean[],
  scored: Record<string, { acc: boolean; score: number }>[],
  path: string,
  wrongScore: number,
): string[] {
  const bad: string[] = [];
  lines.forEach((line, i) => {
    const r = scored[i][path];
    if (r.acc !== grade[i] || r.score !== (grade[i] ? 1 : wrongScore)) {
      bad.push(`${path} ${line.form}: acc ${r.acc} score ${r.score} vs grade ${grade[i]} | ${line.gold}`);
    }
  });
  return bad;
}

const missingData = !exists(MATH500) || !exists(DAPO)
  ? missing("datasetMirror", `${datasets} (MATH-500, DAPO-Math-17K) not found`)
  : null;
const venvReason = missingData ?? verlVenvMissing();
if (!skipping("reward/grade parity", missingData)) {
  skipping("reward/grade parity through VERL's reward managers", venvReason);
}

Deno.test({
  name:
    "verl reward: reward.py (direct, and through VERL's four reward managers) = grade --strict on ≥ 5,000 responses",
  ignore: missingData !== null,
  fn: async () => {
    const lines = await corpus();
    assert(lines.length >= 5000, `corpus has ${lines.length} responses`);
    const dir = mkdtempSync(join(tmpdir(), "acebench-reward-parity-"));
    try {
      writeFileSync(join(dir, "corpus.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      const grade = gradeStrict(dir, lines);
      const correct = grade.filter(Boolean).length;
      // a corpus the grade calls all right or all wrong could not show a disagreement
      assert(
        correct > 0.3 * lines.length && correct < 0.8 * lines.length,
        `${correct}/${lines.length} correct`,
      );
      const env = { ACE_VERL_GRADER: graderCommand() };
      const out = join(dir, "direct.jsonl");
      run("python3", [here("./fixtures/reward_parity.py"), REWARD_PY, join(dir, "corpus.jsonl"), out], env);
      const paths = ["direct"];
      const scored = readJsonl<Record<string, { acc: boolean; score: number }>>(out);
      if (venvReason === null) {
        const verlOut = join(dir, "verl.jsonl");
        run(VENV_PYTHON, [
          here("./fixtures/reward_parity.py"),
          REWARD_PY,
          join(dir, "corpus.jsonl"),
          verlOut,
          "--verl",
          TOKENIZER_DIR,
        ], { ...env, PYTHONPATH: VERL_PYTHONPATH });
        const viaVerl = readJsonl<
          Record<string, { acc: boolean; score: number }> & { decoded_same: boolean }
        >(
          verlOut,
        );
        viaVerl.forEach((row, i) => Object.assign(scored[i], row));
        const changed = viaVerl.filter((r) => !r.decoded_same).length;
        console.log(`tokeniser round trip changed ${changed} of ${lines.length} responses`);
        paths.push("verl_naive", "verl_dapo", "loop_naive", "loop_dapo");
      }
      const bad = paths.flatMap((p) => disagreements(lines, grade, scored, p, -1));
      console.log(
        `reward/grade parity: ${lines.length} responses (${correct} correct by grade --strict), paths ${
          paths.join(", ")
        }: ${bad.length} disagreements`,
      );
      assertEquals(bad.slice(0, 20), [], `${bad.length} reward/grade disagreements`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
