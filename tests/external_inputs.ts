// Where tests find their optional external inputs, each through one environment variable, falling back to a
// sibling folder `../shared/…` (or a cache under ~/.cache/acebench) where a development machine has one. A test
// that needs an absent input skips with `missing(...)`'s message: the path, the variable, where the input comes
// from and the command that prepares it, the same words as the README's table ("Running the full test suite";
// tests/skip_messages.test.ts keeps the two in step).
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One optional input: its variable, its default place, where it comes from and how to prepare it. */
interface ExternalInput {
  variable: string;
  /** The path used: $variable, else the fallback. */
  path: string;
  from: string;
  prepare: string;
}

const sibling = (rel: string) => fileURLToPath(new URL(`../../shared/${rel}`, import.meta.url));
const cache = join(Deno.env.get("HOME") ?? "/root", ".cache", "acebench");
const folder = (dir: string) => dir.endsWith("/") ? dir : `${dir}/`;
const input = (variable: string, fallback: string, from: string, prepare: string): ExternalInput => ({
  variable,
  path: Deno.env.get(variable) || fallback,
  from,
  prepare,
});

/** The optional inputs of the tests, by name (the README's table has a row for each). */
export const INPUTS = {
  verlSrc: input(
    "ACEBENCH_VERL_SRC",
    sibling("verl"),
    "the v0.7.0 and v0.9.0 tags of github.com/volcengine/verl, Hydra v1.3.2 and the pinned third-party packages",
    "clone them into DIR/verl-0.7.0, DIR/verl-0.9.0, DIR/hydra-1.3.2 and DIR/third_party/ (no script)",
  ),
  verlVenv: input(
    "ACEBENCH_VERL_VENV",
    join(cache, "verl-venv"),
    "the local pip index and $ACEBENCH_VERL_SRC/third_party",
    "bash .ci/setup_verl_venv.sh",
  ),
  datasetMirror: input(
    "ACEBENCH_DATASET_MIRROR",
    sibling("datasets"),
    "public GitHub files at pinned commits (bash .ci/make_dataset_mirror.sh --urls lists them)",
    "bash .ci/make_dataset_mirror.sh DIR",
  ),
  graderDev: input(
    "ACEBENCH_GRADER_DEV",
    sibling("grader-dev"),
    "ProcessBench's gsm8k.json with its labels and GSM8K's test.jsonl gold",
    "no script: build processbench_gsm8k.jsonl from those two files",
  ),
  llamaServer: input(
    "ACEBENCH_LLAMA_SERVER",
    join(Deno.env.get("ACEBENCH_LLAMA_CACHE") ?? join(cache, "llama.cpp"), "bin", "llama-server"),
    "llama.cpp's source as the npm package node-llama-cpp ships it",
    "bash bench/external/build_llama_server.sh (55 min on two busy cores)",
  ),
} as const;

/** The name of an optional input. */
export type InputName = keyof typeof INPUTS;

/**
 * Why a test cannot run for want of input `name`: "<path> not found" (or `detail`), then the variable, where the
 * input comes from and the command that prepares it.
 */
export function missing(name: InputName, detail?: string): string {
  const i = INPUTS[name];
  return `${detail ?? `${i.path} not found`}: set ${i.variable} (${i.from}; prepare: ${i.prepare})`;
}

/** Print "skipping <what>: <reason>" when `reason` is not null; returns whether the test is skipped. */
export function skipping(what: string, reason: string | null): boolean {
  if (reason !== null) console.log(`skipping ${what}: ${reason}`);
  return reason !== null;
}

/** VERL and Hydra sources (verl-0.7.0/, verl-0.9.0/, hydra-1.3.2/, third_party/): $ACEBENCH_VERL_SRC. Ends in "/". */
export const VERL_SRC = folder(INPUTS.verlSrc.path);
/** A dataset mirror laid out like `deno task fetch --mirror` expects: $ACEBENCH_DATASET_MIRROR. Ends in "/". */
export const DATASET_MIRROR = folder(INPUTS.datasetMirror.path);
/** The grader's labelled development set (processbench_*.jsonl): $ACEBENCH_GRADER_DEV. Ends in "/". */
export const GRADER_DEV = folder(INPUTS.graderDev.path);
/** The VERL venv (.ci/setup_verl_venv.sh): $ACEBENCH_VERL_VENV. */
export const VERL_VENV = INPUTS.verlVenv.path;
/** The llama-server binary: $ACEBENCH_LLAMA_SERVER. */
export const LLAMA_SERVER = INPUTS.llamaServer.path;
