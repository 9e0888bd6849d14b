// Cache layout: <cache>/raw/<repo>/<revision>/<path> for downloaded source files, and per dataset
// <cache>/<dataset>/records.json (normalised records) with <cache>/<dataset>/manifest.json beside it.
import { join } from "node:path";
import { exists, readJson } from "../common/fs.ts";
import type { GoldAuditResult } from "./gold_fixes.ts";

/** One source file as fetched: where it came from and what it hashed to. */
export interface ManifestFile {
  /** Download URL, or file:// URL of the mirror copy. */
  url: string;
  /** Where the bytes were read from on this machine. */
  path: string;
  bytes: number;
  sha256: string;
  /** "pinned": matched a checksum in sources.ts; "recorded": first fetch recorded it (later fetches must match). */
  checksum: "pinned" | "recorded";
}

/** Counts of a normalisation pass. */
export interface RowCounts {
  /** Rows read from the source files (including bad ones and duplicates). */
  read: number;
  /** Rows that failed to parse or validate and were skipped (`--on-bad-row skip`). */
  bad: number;
  /** Rows dropped as exact duplicates of an earlier row. */
  duplicates: number;
  /** Records written. */
  kept: number;
}

/** What `fetch` recorded about one cached dataset. */
export interface Manifest {
  dataset: string;
  source: string;
  format: string;
  repo: string | null;
  revision: string;
  licence: string;
  files: ManifestFile[];
  rows: RowCounts;
  /** The normalised records file (relative to the dataset folder) and its checksum, verified on load. */
  records: { path: string; bytes: number; sha256: string };
  fetchedAt: string;
  /** The gold audit at fetch time (absent when fetched without the grader, e.g. by a test). */
  audit?: GoldAuditResult;
}

/** The cache root: `explicit`, else $ACEBENCH_CACHE, else $XDG_CACHE_HOME/acebench, else ~/.cache/acebench. */
export function cacheRoot(explicit?: string): string {
  if (explicit) return explicit;
  const env = (k: string) => Deno.env.get(k) || undefined;
  const direct = env("ACEBENCH_CACHE");
  if (direct) return direct;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "acebench");
  const home = env("HOME") ?? env("USERPROFILE");
  if (!home) throw new Error("no cache folder: set --cache-dir, ACEBENCH_CACHE, XDG_CACHE_HOME or HOME");
  return join(home, ".cache", "acebench");
}

/** Path of a dataset's manifest. */
export function manifestPath(root: string, dataset: string): string {
  return join(root, dataset, "manifest.json");
}

/** Where a downloaded hub file is kept: <cache>/raw/<repo>/<revision>/<path>. */
export function rawPath(root: string, repo: string, revision: string, hubPath: string): string {
  return join(root, "raw", ...repo.split("/"), revision, ...hubPath.split("/"));
}

/** The manifest of a cached dataset, or null if it was never fetched into this cache. */
export function readManifest(root: string, dataset: string): Manifest | null {
  const path = manifestPath(root, dataset);
  return exists(path) ? readJson<Manifest>(path) : null;
}
