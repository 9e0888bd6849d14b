// Kept results: a sweep's machine-readable report files copied into a folder the repository keeps (e.g.
// docs/results/<name>/), with provenance.json (the command, commit, backend, machine, load, dates), so a number a
// doc quotes can be re-read and re-rendered without re-running the sweep. This module owns that folder's layout.
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { exists, readJson, writeJson } from "../common/fs.ts";
import { gitCommit } from "../common/provenance.ts";
import { readStatus } from "../common/run_folder.ts";
import { folderName, type SweepData } from "./load.ts";

/** The report files a kept folder holds (those a sweep's report wrote), beside plots/ and provenance.json. */
const KEPT_FILES = [
  "summary.json",
  "summary.md",
  "cells.csv",
  "differences.csv",
  "boundary.csv",
  "passk.csv",
  "calibration.csv",
  "dose.csv",
  "controls.csv",
  "training.csv",
] as const;

/**
 * Copy the report files of sweep folder `dir` (already reported) and its plots into `out` and write
 * provenance.json; returns the written paths. Throws naming the file when the report is missing.
 */
export function keepResults(
  data: SweepData,
  out: string,
  options: Parameters<typeof provenanceOf>[1],
): string[] {
  const dir = data.dir;
  if (!exists(join(dir, "summary.json"))) {
    throw new Error(`${dir}/summary.json: no report to keep (run report first)`);
  }
  mkdirSync(join(out, "plots"), { recursive: true });
  const written: string[] = [];
  for (const name of KEPT_FILES) {
    if (!exists(join(dir, name))) continue;
    copyFileSync(join(dir, name), join(out, name));
    written.push(join(out, name));
  }
  for (const plot of exists(join(dir, "plots")) ? readdirSync(join(dir, "plots")) : []) {
    copyFileSync(join(dir, "plots", plot), join(out, "plots", plot));
    written.push(join(out, "plots", plot));
  }
  writeJson(join(out, "provenance.json"), provenanceOf(data, options));
  written.push(join(out, "provenance.json"));
  return written;
}

/** provenance.json of a kept folder. */
export type Provenance = ReturnType<typeof provenanceOf>;

/**
 * The provenance of `data`: the command that reproduces the sweep (as the user typed it, `--command`, else the
 * preset form), the git commit (null outside a checkout), the first run's start and the last run's end (ISO) and
 * the wall time between them in seconds, and `note`: what was measured alongside, e.g. the load average.
 */
function provenanceOf(
  data: SweepData,
  options: { command?: string; note?: string; backend?: string | null },
) {
  const times = data.runs.map((r) => readStatus(join(data.dir, "runs", r.runId))).filter((s) => s !== null);
  const starts = times.map((s) => s!.startedAt).filter((t): t is string => typeof t === "string").sort();
  const ends = times.map((s) => s!.finishedAt).filter((t): t is string => typeof t === "string").sort();
  const name = folderName(data);
  return {
    sweep: name,
    configHash: data.folder?.configHash ?? null,
    command: options.command ?? `deno task sweep --preset ${name}`,
    commit: gitCommit(data.dir),
    backend: options.backend ?? null,
    machine: data.folder?.machine ?? null,
    versions: data.folder?.versions ?? null,
    startedAt: starts[0] ?? null,
    finishedAt: ends.at(-1) ?? null,
    wallSeconds: starts.length && ends.length
      ? (Date.parse(ends.at(-1)!) - Date.parse(starts[0])) / 1000
      : null,
    note: options.note ?? "",
    keptAt: new Date().toISOString(),
  };
}

/** A kept folder's provenance.json (throws naming the file when absent). */
export function readProvenance(out: string): Provenance {
  return readJson<Provenance>(join(out, "provenance.json"));
}
