// VERL 0.7.0's own algorithm code (core_algos.py from ../shared) under Debian's python3-torch: what the parity
// tests run on the same seeded cases as the RL core. `coreAlgosMissing` says why it cannot run here, or null.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeJson } from "../../../../common/fs.ts";
import { ok } from "../../../assert.ts";
import { missing, VERL_SRC } from "../../../external_inputs.ts";

const PYTHON = "/usr/bin/python3";
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
/** VERL 0.7.0's trainer/ppo/core_algos.py in ../shared. */
export const CORE_ALGOS = `${VERL_SRC}verl-0.7.0/verl/trainer/ppo/core_algos.py`;

/** Why VERL's core_algos cannot run here (no ../shared, no python3 with torch and numpy), or null. */
export function coreAlgosMissing(): string | null {
  try {
    Deno.statSync(CORE_ALGOS);
  } catch {
    return missing("verlSrc", `${CORE_ALGOS} not found`);
  }
  try {
    const probe = new Deno.Command(PYTHON, {
      args: ["-c", "import torch, numpy"],
      stdout: "null",
      stderr: "null",
    });
    if (!probe.outputSync().success) return `${PYTHON} has no torch+numpy (apt-get install -y python3-torch)`;
  } catch {
    return `${PYTHON} not found (apt-get install -y python3-torch python3-numpy)`;
  }
  return null;
}

/**
 * Run fixtures/<script> as `python3 <script> CASES.json ...args` on `cases` (written to a temporary folder, removed
 * afterwards) and return its stdout parsed as JSON; a failing script fails the test with its stderr.
 */
export async function runParityScript<T>(
  script: string,
  cases: unknown,
  args: string[],
  env: Record<string, string> = {},
): Promise<T> {
  const dir = Deno.makeTempDirSync({ prefix: "acebench-verl-parity-" });
  try {
    const path = join(dir, "cases.json");
    writeJson(path, cases);
    const out = await new Deno.Command(PYTHON, {
      args: [here(`./fixtures/${script}`), path, ...args],
      stdout: "piped",
      stderr: "piped",
      env: { PYTHONDONTWRITEBYTECODE: "1", ...env },
    }).output();
    ok(out.success, new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
