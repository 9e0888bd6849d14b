// Loading normalised records from the cache (fast: one JSON parse per dataset, checksum verified).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../common/hash.ts";
import { cacheRoot, readManifest } from "./cache.ts";
import { fetchDataset } from "./fetch.ts";
import { DATASET_NAMES, type DatasetName, type MathRecord } from "./record.ts";
import { generateTasks } from "./synthetic.ts";

/** The fixed synthetic evaluation set `loadDataset("synthetic")` returns (seed 0, test split, difficulty 1). */
export const SYNTHETIC_DEFAULT = { seed: 0, split: "test", count: 500, difficulty: 1 } as const;

/**
 * Records of a fetched dataset, read from the cache and checked against the manifest's sha256. A dataset not
 * in the cache is fetched from the offline folder `mirror` if given (no network); otherwise the error says how
 * to fetch it. "synthetic" returns the fixed SYNTHETIC_DEFAULT set (use generateTasks for others).
 */
export async function loadDataset(
  name: DatasetName | string,
  options: { cacheDir?: string; mirror?: string } = {},
): Promise<MathRecord[]> {
  if (!DATASET_NAMES.includes(name as DatasetName)) {
    throw new Error(`unknown dataset '${name}' (known: ${DATASET_NAMES.join(", ")})`);
  }
  if (name === "synthetic") return generateTasks(SYNTHETIC_DEFAULT);
  const root = cacheRoot(options.cacheDir);
  let manifest = readManifest(root, name);
  if (!manifest) {
    if (!options.mirror) {
      throw new Error(
        `dataset '${name}' is not in the cache ${root}: run \`deno task fetch ${name}\` ` +
          `(add --mirror DIR to use an offline copy of its source files)`,
      );
    }
    manifest = (await fetchDataset(name, { cacheDir: root, mirror: options.mirror })).manifest;
  }
  const path = join(root, name, manifest.records.path);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch {
    throw new Error(`${path}: missing; run \`deno task fetch ${name} --force\` to rebuild it`);
  }
  if (sha256(bytes) !== manifest.records.sha256) {
    throw new Error(`${path}: sha256 does not match its manifest; run \`deno task fetch ${name} --force\``);
  }
  return JSON.parse(new TextDecoder().decode(bytes)) as MathRecord[];
}
