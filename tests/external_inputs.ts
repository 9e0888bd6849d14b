// Where tests find their optional external inputs, each through one environment variable, falling back to a
// sibling folder `../shared/…` where a development machine has one. Tests that need an absent input skip with a
// message naming the variable (README, "Running the full test suite").
import { fileURLToPath } from "node:url";

const sibling = (rel: string) => fileURLToPath(new URL(`../../shared/${rel}`, import.meta.url));
const folder = (variable: string, fallback: string) => {
  const dir = Deno.env.get(variable) || sibling(fallback);
  return dir.endsWith("/") ? dir : `${dir}/`;
};

/** VERL and Hydra sources (verl-0.7.0/, verl-0.9.0/, hydra-1.3.2/, third_party/): $ACEBENCH_VERL_SRC. Ends in "/". */
export const VERL_SRC = folder("ACEBENCH_VERL_SRC", "verl");
/** A dataset mirror laid out like `deno task fetch --mirror` expects: $ACEBENCH_DATASET_MIRROR. Ends in "/". */
export const DATASET_MIRROR = folder("ACEBENCH_DATASET_MIRROR", "datasets");
/** The grader's labelled development set (processbench_*.jsonl): $ACEBENCH_GRADER_DEV. Ends in "/". */
export const GRADER_DEV = folder("ACEBENCH_GRADER_DEV", "grader-dev");
