// Skip messages that say how: every optional input of the tests (tests/external_inputs.ts) has its row in the
// README's table with the same variable and preparation command, its message names both and where the input comes
// from, and every test file that can skip goes through the one helper (so no message can drift from the table).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ok } from "./assert.ts";
import { type InputName, INPUTS, missing } from "./external_inputs.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const read = (rel: string) => readFileSync(join(root, rel), "utf8");

/** Every .ts file under tests/, relative to the repository root. */
function testFiles(dir = "tests"): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() && e.name !== "fixtures"
      ? testFiles(join(dir, e.name))
      : e.name.endsWith(".ts")
      ? [join(dir, e.name)]
      : []
  );
}

Deno.test("skip messages: each optional input has its README row, and its message names variable, source, command", () => {
  const rows = read("README.md").split("\n").filter((l) => l.startsWith("| ")).map((l) =>
    l.replaceAll("`", "")
  );
  for (const name of Object.keys(INPUTS) as InputName[]) {
    const input = INPUTS[name];
    const row = rows.find((r) => r.split("|")[2]?.trim().startsWith(input.variable));
    ok(row, `README's table has no row for ${input.variable}`);
    ok(row.includes(input.prepare), `README's row for ${input.variable} lacks '${input.prepare}'`);
    const message = missing(name);
    for (const part of [input.path, input.variable, input.from, input.prepare]) {
      ok(message.includes(part), `${message} lacks ${part}`);
    }
  }
});

Deno.test("skip messages: every test file that can skip says why through the helper", () => {
  // Helpers that compute an input's reason with `missing(...)`, for the files that import them.
  const reasons = ["verl_venv.ts", "core_algos.ts", "datasets/helpers.ts"];
  const inputs =
    /\b(VERL_SRC|VERL_SHARED|VERL_VENV|VENV_PYTHON|DATASET_MIRROR|GRADER_DEV|LLAMA_SERVER|SHARED)\b/;
  for (const file of testFiles().filter((f) => f !== join("tests", "external_inputs.ts"))) {
    const text = read(file);
    ok(
      !/console\.(log|warn)\(\s*[`"'](skipping\b|[^`"'\n]*\btests? skipped\b)/.test(text),
      `${file} prints its own skip message`,
    );
    if (!/\bignore(:\s*[^\s,}]|\s*[,}])/.test(text) || file.endsWith("skip_messages.test.ts")) continue;
    ok(/\bskipping\(/.test(text), `${file} has ignored tests but no skipping(...) message`);
    if (inputs.test(text)) {
      ok(
        /\bmissing\(|inputMissing\(/.test(text) || reasons.some((h) => text.includes(h.split("/").pop()!)),
        `${file} skips for an optional input without missing(...)`,
      );
    }
  }
});
