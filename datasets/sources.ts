// The one table of where each dataset comes from: hub repo, pinned revision, files, checksums, offline paths.
//
// Hugging Face sources: no commit hashes could be looked up (the hub is unreachable here), so revisions are
// "main" and the sha256 of each file is the effective pin: known checksums are written below (MATH-500's from the
// issue, the offline copies' from datasets/checksums.sha256); the others are recorded in the manifest on first
// fetch and every later fetch must match them. GitHub sources (the evaluation sets RLVR papers report: AIME 2024,
// AMC 2023, Minerva Math, OlympiadBench, GSM8K) are raw files at a pinned commit with a pinned sha256.
import { readFileSync } from "node:fs";
import type { FormatName } from "./formats.ts";
import { DATASET_NAMES, type DatasetName } from "./record.ts";

/** One file of a source: where it is on the hub and/or in a mirror folder, and its pinned sha256 if known. */
export interface SourceFile {
  /** Path inside the hub or GitHub repo (resolved at `revision`); absent for offline-only sources. */
  hubPath?: string;
  /** Path inside a `--mirror` folder laid out like ../shared/datasets; absent for hub-only sources. */
  mirrorPath?: string;
  /** Pinned lowercase hex sha256; absent when only the first fetch can record it. */
  sha256?: string;
}

/** One way to obtain a dataset. */
export interface Source {
  /** Short id used by `--source DATASET=ID`. */
  id: string;
  dataset: Exclude<DatasetName, "synthetic">;
  format: FormatName;
  /** Hugging Face dataset repo, e.g. "HuggingFaceH4/MATH-500", or a GitHub repo when `host` is "github";
   * absent for offline-only sources. */
  repo?: string;
  /** Where `repo` lives: the Hugging Face hub (default) or GitHub (raw files at the commit `revision`). */
  host?: "github";
  /** Pinned revision (branch, tag or commit); "main" where no commit hash is known. */
  revision: string;
  licence: string;
  /** One line on what this source is. */
  about: string;
  files: SourceFile[];
}

const MIRROR_SUMS: Record<string, string> = Object.fromEntries(
  readFileSync(new URL("./checksums.sha256", import.meta.url), "utf8").trim().split("\n").map((line) => {
    const [sum, path] = line.split(/\s+/);
    return [path, sum];
  }),
);

/** A file present only in the offline mirror, with its checksum from checksums.sha256. */
function mirrorFile(mirrorPath: string): SourceFile {
  const sha256 = MIRROR_SUMS[mirrorPath];
  if (!sha256) throw new Error(`datasets/checksums.sha256: no checksum for ${mirrorPath}`);
  return { mirrorPath, sha256 };
}

const MATHARENA_SRC_FILES = ["I", "II"].flatMap((exam) => {
  const dir = `aime2025/matharena/aime_2025_${exam}`;
  return [`${dir}/answers.csv`, ...Array.from({ length: 15 }, (_, i) => `${dir}/problems/${i + 1}.tex`)];
}).map(mirrorFile);

const AIME_LICENCE = "CC BY-NC-SA 4.0 (MathArena)";

/** The commit of QwenLM/Qwen2.5-Math whose evaluation/data/ files the evaluation sets are pinned to. */
const QWEN_COMMIT = "a45202bd16f1ec06f433442dc1152d0074773465";
/** Qwen2.5-Math's evaluation folder (from ZubinGou/math-evaluation-harness) is MIT; the problems keep their own terms. */
const QWEN_MIT = "MIT (Qwen2.5-Math evaluation/LICENSE)";

/** A source of one evaluation set: QwenLM/Qwen2.5-Math@QWEN_COMMIT:evaluation/data/<dir>/test.jsonl. */
function qwenSource(
  dataset: Source["dataset"],
  format: FormatName,
  dir: string,
  licence: string,
  about: string,
): Source {
  return {
    id: "qwen25-math",
    dataset,
    format,
    repo: "QwenLM/Qwen2.5-Math",
    host: "github",
    revision: QWEN_COMMIT,
    licence,
    about,
    files: [{ hubPath: `evaluation/data/${dir}/test.jsonl`, ...mirrorFile(`${dataset}/test.jsonl`) }],
  };
}

// Their checksums (in checksums.sha256) were computed from the commit's blobs (git show QWEN_COMMIT:PATH | sha256sum).
const QWEN_EVAL_SOURCES: Source[] = [
  qwenSource(
    "aime2024",
    "qwen-aime-jsonl",
    "aime24",
    `${QWEN_MIT}; problems (c) MAA`,
    "AIME 2024 I+II, 30 rows (AoPS wiki text and answers)",
  ),
  qwenSource(
    "amc2023",
    "qwen-amc-jsonl",
    "amc23",
    `${QWEN_MIT}; problems (c) MAA`,
    "AMC 2023 (12A/12B) with numeric answers, 40 rows",
  ),
  qwenSource(
    "minerva",
    "minerva-jsonl",
    "minerva_math",
    `${QWEN_MIT}; problems from MIT OpenCourseWare (CC BY-NC-SA 4.0)`,
    "Minerva Math (OCW courses), 272 rows; the answer is the solution's \\boxed{}",
  ),
  qwenSource(
    "olympiadbench",
    "olympiadbench-jsonl",
    "olympiadbench",
    `${QWEN_MIT}; OlympiadBench Apache-2.0`,
    "OlympiadBench OE_TO_maths_en_COMP (open-ended, text-only, maths, English), 675 rows",
  ),
  qwenSource(
    "gsm8k",
    "gsm8k-jsonl",
    "gsm8k",
    `${QWEN_MIT}; GSM8K MIT (openai/grade-school-math)`,
    "GSM8K test, 1319 rows; the answer follows '####'",
  ),
];

/** Every known source; the first source of a dataset with hub files is its default online source. */
export const SOURCES: readonly Source[] = [
  {
    id: "hf",
    dataset: "math500",
    format: "math500-jsonl",
    repo: "HuggingFaceH4/MATH-500",
    revision: "main",
    licence: "MIT",
    about: "MATH-500 (PRM800K test split), 500 rows",
    files: [{
      hubPath: "test.jsonl",
      mirrorPath: "math500/test.jsonl",
      sha256: "35dc41080a3680858b27fa7e0533d2d547825316fc5dafe5d316f4ccc5a06132",
    }],
  },
  {
    id: "matharena",
    dataset: "aime2025",
    format: "aime-matharena-parquet",
    repo: "MathArena/aime_2025",
    revision: "main",
    licence: AIME_LICENCE,
    about: "AIME 2025 I+II from MathArena, parquet, 30 rows",
    files: [{ hubPath: "data/train-00000-of-00001.parquet" }],
  },
  {
    id: "matharena-src",
    dataset: "aime2025",
    format: "aime-matharena-src",
    revision: "eth-sri/matharena@81f103e38b1df076afa65ee0a3ffbe148d42e6d2",
    licence: AIME_LICENCE,
    about: "AIME 2025 in MathArena's source form (problems/N.tex + answers.csv per exam), offline only",
    files: MATHARENA_SRC_FILES,
  },
  {
    id: "yentinglin-jsonl",
    dataset: "aime2025",
    format: "aime-yentinglin-jsonl",
    revision: "ZhangShimin1/PassKEval@4a1495c890778fc3f477853e13db03cc5ec772c2",
    licence: AIME_LICENCE,
    about: "AIME 2025 in the yentinglin/aime_2025 jsonl schema, offline only",
    files: [mirrorFile("aime2025/yentinglin-format/test.jsonl")],
  },
  {
    id: "bytedtsinghua",
    dataset: "dapo-math-17k",
    format: "dapo-verl-parquet",
    repo: "BytedTsinghua-SIA/DAPO-Math-17k",
    revision: "main",
    licence: "Apache-2.0",
    about: "DAPO-Math-17K upstream: 1,791,700 rows (17,917 records x 100), prompts in the Answer: template",
    files: [{ hubPath: "data/dapo-math-17k.parquet" }],
  },
  {
    id: "open-r1",
    dataset: "dapo-math-17k",
    format: "dapo-openr1-parquet",
    repo: "open-r1/DAPO-Math-17k-Processed",
    revision: "main",
    licence: "Apache-2.0",
    about: "open-r1's processed DAPO-Math-17K (bare prompt + solution columns), config 'all'",
    files: [{ hubPath: "all/train-00000-of-00001.parquet" }],
  },
  {
    id: "svs",
    dataset: "dapo-math-17k",
    format: "dapo-verl-parquet",
    revision: "MasterVito/SvS@9fd8f35375b31b8632b52e715296c264a3ad4176",
    licence: "Apache-2.0",
    about: "DAPO-Math-17K, one row per record, template stripped, integer index, offline only",
    files: [mirrorFile("dapo-math-17k/dapo_math_17k.parquet")],
  },
  ...QWEN_EVAL_SOURCES,
];

/** The datasets `fetch` handles, in `fetch --list` order: every named dataset but the generated one. */
export const FETCHABLE: readonly Source["dataset"][] = DATASET_NAMES.filter((d): d is Source["dataset"] =>
  d !== "synthetic"
);

/** All sources of one dataset, default online source first. */
export function sourcesOf(dataset: string): Source[] {
  return SOURCES.filter((s) => s.dataset === dataset);
}

/** True when every file of a source can be read from a `--mirror` folder. */
export function isOffline(source: Source): boolean {
  return source.files.every((f) => f.mirrorPath);
}

/** The source to use: `sourceId` if given, else the first that can be read from a mirror (when one is given) or the hub. */
export function pickSource(dataset: string, options: { sourceId?: string; mirror?: boolean } = {}): Source {
  const all = sourcesOf(dataset);
  if (all.length === 0) {
    throw new Error(`unknown dataset '${dataset}' (known: ${FETCHABLE.join(", ")})`);
  }
  if (options.sourceId) {
    const s = all.find((x) => x.id === options.sourceId);
    if (!s) {
      throw new Error(
        `unknown source '${options.sourceId}' for ${dataset} (known: ${all.map((x) => x.id).join(", ")})`,
      );
    }
    return s;
  }
  const usable = all.find((s) => s.files.every((f) => options.mirror ? f.mirrorPath : f.hubPath));
  if (!usable) throw new Error(`no ${options.mirror ? "offline" : "online"} source for ${dataset}`);
  return usable;
}

/** The URL in the environment variable `name`, else `fallback`, without a trailing slash. */
const envUrl = (name: string, fallback: string) => (Deno.env.get(name) || fallback).replace(/\/+$/, "");

/** The hub endpoint: $HF_ENDPOINT, default https://huggingface.co. */
export const hubEndpoint = () => envUrl("HF_ENDPOINT", "https://huggingface.co");

/**
 * The download URL of a source file: `<hub>/datasets/<repo>/resolve/<revision>/<path>` on the Hugging Face hub,
 * `<raw>/<repo>/<commit>/<path>` on GitHub (`endpoint` overrides the host's default).
 */
export function hubUrl(source: Source, file: SourceFile, endpoint?: string): string {
  if (!source.repo || !file.hubPath) {
    throw new Error(`${source.dataset}/${source.id}: not available on the hub`);
  }
  const path = file.hubPath.split("/").map(encodeURIComponent).join("/");
  if (source.host === "github") {
    const raw = endpoint ?? envUrl("ACEBENCH_GITHUB_RAW", "https://raw.githubusercontent.com");
    return `${raw}/${source.repo}/${source.revision}/${path}`;
  }
  const revision = encodeURIComponent(source.revision);
  return `${endpoint ?? hubEndpoint()}/datasets/${source.repo}/resolve/${revision}/${path}`;
}
