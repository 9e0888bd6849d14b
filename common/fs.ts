// Atomic writes and JSON-lines helpers: every output acebench produces goes through here.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

let tmpCounter = 0;
// Workers share Deno.pid but each has its own counter, so temp names also carry a per-isolate tag (a file name,
// not a result: it does not go through Rng).
const isolateTag = crypto.randomUUID().slice(0, 8);

/**
 * Write a file atomically: write a sibling temp file, fsync, then rename over the target. An I/O error (full
 * disk, read-only folder) removes the temp file and names the target, e.g. `out/passk.csv: cannot write (ENOSPC: …)`.
 */
export function atomicWrite(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${Deno.pid}.${isolateTag}.${tmpCounter++}.tmp`);
  try {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, typeof data === "string" ? new TextEncoder().encode(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch { /* the folder itself is unusable: there is no temp file */ }
    throw new Error(`${path}: cannot write (${ioReason(e as NodeJS.ErrnoException)})`, { cause: e });
  }
}

/** An I/O error's code and text without the path it names (the temp file's, meaningless to a user). */
function ioReason(e: NodeJS.ErrnoException): string {
  const text = e.message.replace(/,? (open|rename|write|mkdir|fsync|close)\b.*$/, "").trim();
  return e.code && !text.startsWith(e.code) ? `${e.code}: ${text}` : text;
}

/** Atomically write a value as pretty JSON with a trailing newline. */
export function writeJson(path: string, value: unknown): void {
  atomicWrite(path, JSON.stringify(value, null, 2) + "\n");
}

/** Read and parse a JSON file; the error names the file. */
export function readJson<T = unknown>(path: string): T {
  const text = readFileSync(path, "utf8");
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`${path}: invalid JSON: ${(e as Error).message}`);
  }
}

/**
 * Append records as JSON lines (one write per call, so a crash loses at most a partial last line). The file is
 * created with the umask (0644 under the usual 022): node's appendFileSync would reset it to 0666 on every call.
 */
export function appendJsonl(path: string, records: readonly unknown[]): void {
  if (records.length === 0) return;
  mkdirSync(dirname(path), { recursive: true });
  const bytes = new TextEncoder().encode(records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const file = Deno.openSync(path, { append: true, create: true });
  try {
    for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
  } finally {
    file.close();
  }
}

/** The file's bytes, or null when it does not exist (any other read error is thrown). */
export function readIfExists(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** Read a JSON-lines file ([] when absent); a torn final line (a crash) is ignored, a bad line throws with its number. */
export function readJsonl<T = unknown>(path: string): T[] {
  const text = readIfExists(path)?.toString("utf8");
  if (text === undefined) return [];
  const lines = text.split("\n");
  const out: T[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    try {
      out.push(JSON.parse(line));
    } catch (e) {
      const isLast = lines.slice(i + 1).every((l) => l.trim() === "");
      if (isLast && !text.endsWith("\n")) break; // torn write at the end
      throw new Error(`${path}:${i + 1}: invalid JSON line: ${(e as Error).message}`);
    }
  }
  return out;
}

/** True if the path exists (file or directory). */
export function exists(path: string): boolean {
  return existsSync(path);
}
