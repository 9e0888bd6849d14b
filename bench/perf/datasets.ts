// `deno task bench datasets`: time loading the three cached datasets (target: all three in under 1 s).
import { parseFlags, parseNumber } from "../../common/args.ts";
import { exists } from "../../common/fs.ts";
import { cacheRoot, readManifest } from "../../datasets/cache.ts";
import { fetchDataset } from "../../datasets/fetch.ts";
import { loadDataset } from "../../datasets/load.ts";
import { FETCHABLE } from "../../datasets/sources.ts";
import { generateTasks } from "../../datasets/synthetic.ts";

/** Usage text for `deno task bench datasets`. */
export const usage = `usage: deno task bench datasets [--cache-dir DIR] [--mirror DIR] [--repeat N]

Times loadDataset() over math500, aime2025 and dapo-math-17k from the cache (target < 1000 ms for all three),
and generateTasks() for 10,000 synthetic records. Datasets missing from the cache are first fetched from
--mirror (default ../shared/datasets) into it; with no --cache-dir a fresh temporary cache is used.`;

/** Entry point: prints a small table of timings; returns 1 if loading all three took 1 s or more. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    "cache-dir": { type: "string" },
    mirror: { type: "string" },
    repeat: { type: "string" },
  }, false);
  const v = values as { help?: boolean; "cache-dir"?: string; mirror?: string; repeat?: string };
  if (v.help) {
    console.log(usage);
    return 0;
  }
  const repeat = parseNumber(v.repeat, "repeat", 5, 1, 1000);
  const temporary = !v["cache-dir"];
  const root = temporary ? Deno.makeTempDirSync({ prefix: "acebench-bench-" }) : cacheRoot(v["cache-dir"]);
  try {
    return await run(root, v.mirror, repeat);
  } finally {
    if (temporary) Deno.removeSync(root, { recursive: true });
  }
}

/** Fill the cache from the mirror if needed, then time the loads and the generator. */
async function run(root: string, mirrorFlag: string | undefined, repeat: number): Promise<number> {
  const mirror = mirrorFlag ?? new URL("../../../shared/datasets", import.meta.url).pathname;
  for (const name of FETCHABLE) {
    if (readManifest(root, name)) continue;
    if (!exists(mirror)) {
      throw new Error(`${name} is not cached in ${root} and the mirror ${mirror} is absent`);
    }
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
    for (const name of FETCHABLE) count += (await loadDataset(name, { cacheDir: root })).length;
    loads.push(performance.now() - t);
  }
  const t = performance.now();
  generateTasks({ seed: 0, split: "train", count: 10_000, difficulty: 3 });
  const synth = performance.now() - t;
  const sorted = [...loads].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(`cache: ${root}${root.includes("acebench-bench-") ? " (temporary)" : ""}`);
  console.log(
    `load all three (${count} records), ${repeat} runs: first ${loads[0].toFixed(0)} ms, ` +
      `median ${median.toFixed(0)} ms, best ${sorted[0].toFixed(0)} ms  (target < 1000 ms)`,
  );
  console.log(`generateTasks 10,000 records (difficulty 3): ${synth.toFixed(0)} ms`);
  return loads[0] < 1000 ? 0 : 1;
}
