// `deno task bench datasets`: time loading the cached datasets (target: all of them in under 1 s).
import { join } from "node:path";
import { flagLines, type FlagTable, num, parseTable, str } from "../../common/args.ts";
import { exists } from "../../common/fs.ts";
import { cacheRoot, readManifest } from "../../datasets/cache.ts";
import { fetchDataset } from "../../datasets/fetch.ts";
import { loadDataset } from "../../datasets/load.ts";
import { FETCHABLE, pickSource } from "../../datasets/sources.ts";
import { generateTasks } from "../../datasets/synthetic.ts";
import { median } from "../../evaluators/stats.ts";

/** The flags of `deno task bench datasets`, declared once for parsing, --help and validation. */
export const FLAGS = {
  "cache-dir": str("DIR", "the cache to load from (default: a fresh temporary one)"),
  mirror: str(
    "DIR",
    "fill missing datasets from this folder (default: $ACEBENCH_DATASET_MIRROR, a folder made by bash " +
      ".ci/make_dataset_mirror.sh DIR)",
  ),
  repeat: num("timed loads of all the datasets", { min: 1, max: 1000, default: 5 }),
} as const satisfies FlagTable;

/** Usage text for `deno task bench datasets`. */
export const usage = `usage: deno task bench datasets [flags]

Times loadDataset() over every registered dataset in the cache (${FETCHABLE.join(", ")}; target < 1000 ms for
all of them), and generateTasks() for 10,000 synthetic records. Datasets missing from the cache are first fetched
from --mirror into it, and skipped with a line where the mirror lacks them.

${flagLines(FLAGS)}`;

/** Entry point: prints a small table of timings; returns 1 if loading them all took 1 s or more. */
export async function main(args: string[]): Promise<number> {
  const { values: v } = parseTable(args, FLAGS);
  const temporary = !v["cache-dir"];
  const root = temporary ? Deno.makeTempDirSync({ prefix: "acebench-bench-" }) : cacheRoot(v["cache-dir"]);
  try {
    return await run(root, v.mirror ?? Deno.env.get("ACEBENCH_DATASET_MIRROR"), v.repeat);
  } finally {
    if (temporary) Deno.removeSync(root, { recursive: true });
  }
}

/** Fill the cache from the mirror if needed, then time the loads and the generator. */
async function run(root: string, mirror: string | undefined, repeat: number): Promise<number> {
  if (!mirror && FETCHABLE.every((name) => !readManifest(root, name))) {
    throw new Error(
      `nothing cached in ${root}: pass --cache-dir (after deno task fetch) or --mirror DIR ` +
        "(bash .ci/make_dataset_mirror.sh DIR builds one)",
    );
  }
  const names: string[] = [];
  for (const name of FETCHABLE) {
    if (readManifest(root, name)) {
      names.push(name);
      continue;
    }
    if (!mirror || !exists(mirror)) {
      console.log(`skip ${name}: not cached in ${root} and no mirror (${mirror ?? "--mirror not given"})`);
      continue;
    }
    const missing = pickSource(name, { mirror: true }).files.find((f) =>
      !exists(join(mirror, f.mirrorPath!))
    );
    if (missing) {
      console.log(
        `skip ${name}: not cached and ${mirror} lacks ${missing.mirrorPath} (.ci/make_dataset_mirror.sh)`,
      );
      continue;
    }
    names.push(name);
    const t = performance.now();
    const { manifest } = await fetchDataset(name, { cacheDir: root, mirror });
    console.log(
      `fetch ${name} from mirror: ${(performance.now() - t).toFixed(0)} ms (${manifest.rows.kept} records)`,
    );
  }
  const loads: number[] = [];
  let count = 0;
  for (let i = 0; i < repeat; i++) {
    const t = performance.now();
    count = 0;
    for (const name of names) count += (await loadDataset(name, { cacheDir: root })).length;
    loads.push(performance.now() - t);
  }
  const t = performance.now();
  generateTasks({ seed: 0, split: "train", count: 10_000, difficulty: 3 });
  const synth = performance.now() - t;
  console.log(`cache: ${root}${root.includes("acebench-bench-") ? " (temporary)" : ""}`);
  console.log(
    `load ${names.length} datasets (${count} records), ${repeat} runs: first ${loads[0].toFixed(0)} ms, ` +
      `median ${median(loads).toFixed(0)} ms, best ${Math.min(...loads).toFixed(0)} ms  (target < 1000 ms)`,
  );
  console.log(`generateTasks 10,000 records (difficulty 3): ${synth.toFixed(0)} ms`);
  return loads[0] < 1000 ? 0 : 1;
}
