// `deno task fetch`: download (or copy from a mirror), verify, cache and normalise the datasets.
import { bool, flagLines, type FlagTable, parseTable, str, UsageError } from "../common/args.ts";
import { cacheRoot, readManifest } from "./cache.ts";
import { auditLine, fetchDataset } from "./fetch.ts";
import { type AuditGolds, auditRecords } from "./gold_fixes.ts";
import { loadDataset } from "./load.ts";
import { FETCHABLE, hubEndpoint, hubUrl, pickSource, type Source, SOURCES, sourcesOf } from "./sources.ts";

/** The flags of `deno task fetch`, declared once for parsing, --help and validation. */
export const FLAGS = {
  list: bool("show each dataset's source, licence, cache state, row counts and gold audit"),
  check: bool(
    "audit the cached datasets' golds again and name every gold no correct answer can match (exit 1 if " +
      "one is not a known-unmatchable gold of datasets/gold_fixes.ts)",
  ),
  mirror: str(
    "DIR",
    "read the source files from a local folder laid out as <dataset>/<file> (--list names them)",
  ),
  "cache-dir": str(
    "DIR",
    "cache folder (default: $ACEBENCH_CACHE, else $XDG_CACHE_HOME/acebench, else ~/.cache/acebench)",
  ),
  source: str(
    "DATASET=ID",
    "use another source of a dataset (ids in --list), e.g. aime2025=yentinglin-jsonl",
    { multiple: true },
  ),
  "on-bad-row": str(
    "MODE",
    "a row that fails to parse or validate stops the fetch (fail) or is dropped (skip)",
    { choices: ["fail", "skip"], default: "fail" },
  ),
  force: bool("re-read and re-verify the source files even if the dataset is cached"),
} as const satisfies FlagTable;

/** Usage text for `deno task fetch`. */
export const usage = `usage: deno task fetch [DATASET...] [flags]

Download, verify, cache and normalise ${FETCHABLE.join(", ")} (default: all of them).
A cached dataset is not fetched again (no network I/O) unless --force is given.

${flagLines(FLAGS)}

environment: HF_ENDPOINT (hub URL, default https://huggingface.co), HF_TOKEN (sent to the hub as a Bearer token),
             ACEBENCH_GITHUB_RAW (GitHub raw-file URL, default https://raw.githubusercontent.com)

examples:
  deno task fetch --mirror /data/acebench-mirror
  deno task fetch math500 --cache-dir /tmp/acebench-cache
  deno task fetch --list`;

/**
 * Entry point for `deno task fetch`; returns 1 if any dataset failed (the others still run). `auditGolds` is the
 * grader's gold audit (commands/fetch.ts passes it in; datasets/ does not import the grader); without it the
 * golds are not audited and --check is refused.
 */
export async function main(args: string[], auditGolds?: AuditGolds): Promise<number> {
  const { values, positionals } = parseTable(args, FLAGS, true);
  for (const d of positionals) {
    if (!FETCHABLE.includes(d as Source["dataset"])) {
      throw new UsageError(`unknown dataset '${d}' (known: ${FETCHABLE.join(", ")})`);
    }
  }
  const sourceIds = parseSourceFlags(values.source);
  const root = cacheRoot(values["cache-dir"]);
  if (values.list) {
    console.log(listing(root));
    return 0;
  }
  if (values.check) {
    if (!auditGolds) {
      throw new UsageError("--check: the gold audit needs the grader (run it as deno task fetch)");
    }
    return await check(root, positionals.length ? positionals : FETCHABLE, auditGolds);
  }
  let failed = 0;
  for (const dataset of positionals.length ? positionals : FETCHABLE) {
    try {
      const { manifest, cached } = await fetchDataset(dataset, {
        cacheDir: root,
        mirror: values.mirror,
        sourceId: sourceIds.get(dataset),
        onBadRow: values["on-bad-row"],
        force: values.force,
        log: (line) => console.log(line),
        auditGolds,
      });
      if (cached) {
        console.log(
          `${dataset}: cached (${manifest.rows.kept} records from ${manifest.source}, fetched ${manifest.fetchedAt}); ` +
            "--force re-reads the source",
        );
      } else console.log(`${dataset}: ok → ${root}/${dataset}`);
    } catch (e) {
      failed++;
      console.error(`acebench fetch: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  return failed ? 1 : 0;
}

// `--check`: audit each cached dataset's golds now and name every failure; 1 if one is not known-unmatchable.
async function check(root: string, datasets: readonly string[], auditGolds: AuditGolds): Promise<number> {
  let failing = 0;
  for (const dataset of datasets) {
    if (!readManifest(root, dataset)) {
      console.log(`${dataset}: not fetched (deno task fetch ${dataset})`);
      continue;
    }
    const audit = auditRecords(dataset, await loadDataset(dataset, { cacheDir: root }), auditGolds);
    console.log(auditLine(dataset, audit));
    for (const f of audit.known) console.log(`  known  ${f.id}: ${f.why}`);
    for (const f of audit.failed) console.log(`  FAILS  ${f.id}: ${JSON.stringify(f.answer)} (${f.why})`);
    failing += audit.failed.length;
  }
  return failing ? 1 : 0;
}

/** Parse repeated `--source DATASET=ID` flags into a map, checking both names. */
function parseSourceFlags(flags: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const flag of flags) {
    const [dataset, id] = flag.split("=", 2);
    if (!id || !sourcesOf(dataset).some((s) => s.id === id)) {
      const known = SOURCES.map((s) => `${s.dataset}=${s.id}`).join(", ");
      throw new UsageError(`--source: expected DATASET=ID (one of ${known}), got '${flag}'`);
    }
    out.set(dataset, id);
  }
  return out;
}

/** Where a source's files come from, in one line. */
function origin(s: Source): string {
  const hub = !s.repo
    ? ""
    : s.host === "github"
    ? s.files.map((f) => hubUrl(s, f, "https://raw.githubusercontent.com")).join(", ")
    : `${s.repo}@${s.revision}:${s.files.map((f) => f.hubPath).join(",")}`;
  const mirror = s.files.every((f) => f.mirrorPath)
    ? (s.files.length === 1 ? s.files[0].mirrorPath! : `${s.files.length} files`) + " in a --mirror"
    : "";
  return [hub, mirror].filter(Boolean).join("; also ");
}

/** The `--list` text: a table of datasets, then every source. */
function listing(root: string): string {
  const rows = FETCHABLE.map((d) => {
    const m = readManifest(root, d);
    const source = (m && sourcesOf(d).find((s) => s.id === m.source)) || pickSource(d);
    return [
      d,
      `${source.id} (${source.repo ?? "offline"})`,
      source.licence,
      m ? `fetched ${m.fetchedAt.slice(0, 19)}Z` : "not fetched",
      m
        ? `${m.rows.kept} kept (${m.rows.read} read, ${m.rows.duplicates} duplicates, ${m.rows.bad} bad)`
        : "-",
      !m
        ? "-"
        : !m.audit
        ? "not audited"
        : `${m.audit.failed.length} failing, ${m.audit.known.length} known, ${m.audit.fixed} repaired`,
    ];
  });
  rows.push(["synthetic", "built in (generateTasks)", "-", "always available", "generated on demand", "-"]);
  const head = ["dataset", "source", "licence", "cache", "rows", "gold audit (--check names them)"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  const sources = SOURCES.map((s) =>
    `  ${`${s.dataset}=${s.id}`.padEnd(30)} ${s.about}\n  ${"".padEnd(30)} ${origin(s)}`
  );
  return [
    `cache: ${root}   hub: ${hubEndpoint()}`,
    "",
    line(head),
    ...rows.map(line),
    "",
    "sources (--source DATASET=ID; the first of each dataset is the default online one):",
    ...sources,
  ].join("\n");
}
