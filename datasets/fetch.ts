// `fetch` for one dataset: obtain its source files (hub download or mirror), verify checksums, validate and
// normalise every row, drop duplicates, then write records and manifest atomically. A cached dataset is
// returned without touching the network.
import { readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { atomicWrite, exists, writeJson } from "../common/fs.ts";
import { describeErrors, loadSchema } from "../common/config.ts";
import { canonicalJson, sha256 } from "../common/hash.ts";
import {
  cacheRoot,
  type Manifest,
  type ManifestFile,
  manifestPath,
  rawPath,
  readManifest,
  type RowCounts,
} from "./cache.ts";
import { download, DownloadError, fileSha256 } from "./download.ts";
import { FORMATS, schemaUrl } from "./formats.ts";
import { type AuditGolds, auditRecords, fixGold, type GoldAuditResult } from "./gold_fixes.ts";
import type { MathRecord } from "./record.ts";
import { hubUrl, isOffline, pickSource, type Source, type SourceFile, sourcesOf } from "./sources.ts";

/** What to do with a row that fails to parse or validate. */
export type OnBadRow = "fail" | "skip";

/** Options for `fetchDataset`. */
export interface FetchOptions {
  cacheDir?: string;
  /** A folder laid out like ../shared/datasets; when set, nothing is downloaded. */
  mirror?: string;
  /** Source id (see sources.ts); default: the first usable one. */
  sourceId?: string;
  /** A source object to use instead of the table (tests serve fixtures with their own checksums). */
  source?: Source;
  onBadRow?: OnBadRow;
  /** Re-read the source files even when the dataset is cached (downloads only what is missing). */
  force?: boolean;
  /** Progress and summary lines (default: none). */
  log?: (line: string) => void;
  /** The gold audit (the grader's, passed in by the command layer); its result goes into the manifest. */
  auditGolds?: AuditGolds;
}

/** The manifest now in the cache, and whether it was already there (no work done). */
export type FetchResult = Awaited<ReturnType<typeof fetchDataset>>;

/** Fetch, verify and normalise one dataset into the cache (see the file comment); throws one-line errors. */
export async function fetchDataset(dataset: string, options: FetchOptions = {}) {
  const root = cacheRoot(options.cacheDir);
  const log = options.log ?? (() => {});
  const previous = readManifest(root, dataset);
  const wanted = options.source?.id ?? options.sourceId;
  if (
    previous && !options.force && (!wanted || wanted === previous.source) && recordsPresent(root, previous)
  ) {
    return { manifest: previous, cached: true };
  }
  const source = options.source ??
    pickSource(dataset, { sourceId: options.sourceId, mirror: !!options.mirror });
  const files: ManifestFile[] = [];
  for (const file of source.files) files.push(await obtain(source, file, root, options, previous, log));
  const { records, counts, problems } = await normalise(
    source,
    files.map((f) => f.path),
    options.onBadRow,
    log,
  );
  log(
    `${dataset}: read ${counts.read} rows, dropped ${counts.duplicates} as duplicates, ${counts.bad} bad, ` +
      `kept ${counts.kept} records (${problems} distinct problem texts)`,
  );
  const audit = options.auditGolds && auditRecords(dataset, records, options.auditGolds);
  if (audit) log(auditLine(dataset, audit));
  return { manifest: writeRecords(root, source, files, counts, records, audit), cached: false };
}

/** One line on a dataset's gold audit: golds checked and repaired, known unmatchable, failing. */
export function auditLine(dataset: string, a: GoldAuditResult): string {
  const names = a.failed.slice(0, 5).map((f) => f.id).join(", ");
  return `${dataset}: gold audit: ${a.checked} checked, ${a.fixed} repaired by a normaliser, ` +
    `${a.known.length} known unmatchable, ${a.failed.length} failing` +
    (a.failed.length ? ` (${names}${a.failed.length > 5 ? ", …" : ""}; --check names them all)` : "");
}

/** True if the manifest's records file exists with the recorded size (its sha256 is checked on load). */
function recordsPresent(root: string, manifest: Manifest): boolean {
  const path = join(root, manifest.dataset, manifest.records.path);
  return exists(path) && statSync(path).size === manifest.records.bytes;
}

/** Get one source file onto this machine, verified: from the mirror, the raw cache, or the hub. */
async function obtain(
  source: Source,
  file: SourceFile,
  root: string,
  options: FetchOptions,
  previous: Manifest | null,
  log: (line: string) => void,
): Promise<ManifestFile> {
  const name = `${source.dataset}/${source.id}`;
  if (options.mirror) {
    if (!file.mirrorPath) {
      const offline = sourcesOf(source.dataset).filter(isOffline).map((s) => s.id).join("|");
      throw new Error(
        `${name}: ${file.hubPath} has no offline copy; with --mirror use --source ${source.dataset}=${offline}`,
      );
    }
    const path = resolve(options.mirror, file.mirrorPath);
    if (!exists(path)) {
      throw new Error(
        `${name}: missing ${path} (a mirror must hold ${file.mirrorPath}; deno task fetch --list names each file)`,
      );
    }
    const sum = await fileSha256(path);
    if (file.sha256 && sum !== file.sha256) {
      throw new Error(
        `${path}: sha256 ${sum} does not match the pinned ${file.sha256} (corrupt or another version)`,
      );
    }
    return describe(pathToFileURL(path).href, path, sum, file);
  }
  if (!source.repo || !file.hubPath) {
    throw new Error(
      `${name} is offline only: pass --mirror DIR (a folder holding its source files, as deno task fetch --list names them)`,
    );
  }
  const url = hubUrl(source, file);
  const recorded = previous?.files.find((f) => f.url === url && f.checksum === "recorded")?.sha256;
  const expected = file.sha256 ?? recorded;
  const dest = rawPath(root, source.repo, source.revision, file.hubPath);
  if (exists(dest)) {
    const sum = await fileSha256(dest);
    if (!expected || sum === expected) return describe(url, dest, sum, file);
    log(`${name}: cached ${dest} fails its checksum; downloading it again`);
    rmSync(dest);
  }
  try {
    const got = await download({
      url,
      dest,
      sha256: expected,
      // The hub token is for the hub only; GitHub raw files are public.
      token: source.host === "github" ? undefined : Deno.env.get("HF_TOKEN"),
      label: file.hubPath,
    });
    if (got.resumedFrom > 0) log(`${name}: resumed ${file.hubPath} from byte ${got.resumedFrom}`);
    log(`${name}: downloaded ${url} (${got.bytes} bytes, sha256 ${got.sha256.slice(0, 12)}…)`);
    return describe(url, dest, got.sha256, file);
  } catch (e) {
    if (!(e instanceof DownloadError)) throw e;
    const manifest = manifestPath(root, source.dataset);
    const changed = recorded && !file.sha256 && e.message.startsWith("checksum mismatch")
      ? ` The file changed since its first fetch (recorded in ${manifest}); delete that folder to accept the new version.`
      : "";
    const offline = sourcesOf(source.dataset).find(isOffline);
    const how = file.mirrorPath
      ? `--mirror DIR (expects DIR/${file.mirrorPath})`
      : `--mirror DIR (uses the offline source ${offline?.id}, expecting DIR/${
        offline?.files[0].mirrorPath
      }…)`;
    const endpoint = source.host === "github"
      ? "ACEBENCH_GITHUB_RAW at a reachable copy of raw.githubusercontent.com"
      : "HF_ENDPOINT at a reachable mirror (set HF_TOKEN for gated repos)";
    throw new Error(
      `${e.message}.${changed} Needed: ${source.repo}@${source.revision}:${file.hubPath}; provide it with ${how}` +
        `, or point ${endpoint}.`,
    );
  }
}

/** The manifest entry of a verified file. */
function describe(url: string, path: string, sha256: string, file: SourceFile): ManifestFile {
  return { url, path, bytes: statSync(path).size, sha256, checksum: file.sha256 ? "pinned" : "recorded" };
}

/** Validate every row against the format's schema, normalise it and drop exact duplicate rows. */
export async function normalise(
  source: Source,
  paths: string[],
  onBadRow: OnBadRow = "fail",
  log: (line: string) => void = () => {},
): Promise<{ records: MathRecord[]; counts: RowCounts; problems: number }> {
  const format = FORMATS[source.format];
  const validator = loadSchema(schemaUrl(source.format));
  const counts: RowCounts = { read: 0, bad: 0, duplicates: 0, kept: 0 };
  const seenRows = new Set<string>();
  const seenIds = new Map<string, string>();
  const records: MathRecord[] = [];
  const bad = (where: string, why: string) => {
    if (onBadRow === "fail") throw new Error(`${where}: ${why} (pass --on-bad-row skip to drop bad rows)`);
    counts.bad++;
    if (counts.bad <= 10) log(`skipped bad row ${where}: ${why}`);
  };
  for await (const { where, row, error } of format.rows(paths)) {
    counts.read++;
    if (error !== undefined || !validator(row)) {
      bad(where, error ?? describeErrors(validator.errors));
      continue;
    }
    const key = canonicalJson(row);
    if (seenRows.has(key)) {
      counts.duplicates++;
      continue;
    }
    seenRows.add(key);
    let record: MathRecord;
    try {
      record = format.toRecord(row as never);
    } catch (e) {
      bad(where, (e as Error).message);
      continue;
    }
    const gold = fixGold(source.dataset, record.answer);
    if (gold.fixes.length > 0) {
      record = {
        ...record,
        answer: gold.answer,
        meta: { ...record.meta, publishedAnswer: record.answer, goldFixes: gold.fixes },
      };
    }
    const first = seenIds.get(record.id);
    if (first !== undefined) {
      bad(where, `id ${record.id} already used by a different row (${first})`);
      continue;
    }
    seenIds.set(record.id, where);
    records.push(record);
  }
  if (counts.bad > 10) log(`… ${counts.bad - 10} more bad rows skipped`);
  counts.kept = records.length;
  if (records.length === 0) {
    throw new Error(`${source.dataset}/${source.id}: no valid rows in ${paths.join(", ")}`);
  }
  return { records, counts, problems: new Set(records.map((r) => r.problem)).size };
}

/** Write records-<sha>.json then manifest.json (both atomic), then remove superseded records files. */
function writeRecords(
  root: string,
  source: Source,
  files: ManifestFile[],
  rows: RowCounts,
  records: MathRecord[],
  audit: GoldAuditResult | undefined,
): Manifest {
  const dir = join(root, source.dataset);
  const bytes = new TextEncoder().encode(JSON.stringify(records));
  const sum = sha256(bytes);
  // Content-addressed name: a crash between the two writes leaves the old manifest pointing at its own file.
  const recordsFile = `records-${sum.slice(0, 16)}.json`;
  atomicWrite(join(dir, recordsFile), bytes);
  const manifest: Manifest = {
    dataset: source.dataset,
    source: source.id,
    format: source.format,
    repo: source.repo ?? null,
    revision: source.revision,
    licence: source.licence,
    files,
    rows,
    records: { path: recordsFile, bytes: bytes.length, sha256: sum },
    fetchedAt: new Date().toISOString(),
    ...(audit ? { audit } : {}),
  };
  writeJson(manifestPath(root, source.dataset), manifest);
  for (const name of readdirSync(dir)) {
    if (/^records-[0-9a-f]+\.json$/.test(name) && name !== recordsFile) rmSync(join(dir, name));
  }
  return manifest;
}
