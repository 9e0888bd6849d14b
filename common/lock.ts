// One writer per output folder: an OS-level advisory lock (flock) on `DIR/.lock`, held on an open file for the
// writer's lifetime. The kernel releases it when the process ends in any way (SIGKILL included), so there is no
// stale lock to detect and no pid-liveness check (which would need --allow-run, absent from the shipped tasks).
// The file also holds the owner's pid, host, start time and command, only to name the holder in the message.
import { hostname } from "node:os";
import { join } from "node:path";
import { UsageError } from "./args.ts";
import { exists } from "./fs.ts";

/** What the lock file holds (for the message; the kernel lock is what counts). */
export type LockOwner = { pid: number; host: string; startedAt: string; command?: string };

/** Another process holds the folder; the CLI prints the message and exits 2. */
export class FolderInUseError extends Error {
  constructor(readonly folder: string, readonly owner: LockOwner | null) {
    super(
      `folder ${folder} is in use by ` +
        (owner
          ? `pid ${owner.pid}` + (owner.host === hostname() ? "" : ` on ${owner.host}`) +
            (owner.command ? ` (${owner.command})` : "") + ` since ${owner.startedAt}`
          : "another process") +
        `; wait for it to finish or choose another --out`,
    );
    this.name = "FolderInUseError";
  }
}

/** Name of the lock file inside a locked folder. */
export const LOCK_FILE = ".lock";

/** The holder's record; it writes it right after locking, so an empty file is re-read briefly (null: none). */
function holder(path: string): LockOwner | null {
  for (let i = 0; i < 20; i++) {
    try {
      const o = JSON.parse(Deno.readTextFileSync(path));
      if (Number.isInteger(o?.pid) && typeof o?.host === "string") return o;
    } catch { /* absent, or the holder is between taking the lock and writing its name */ }
    const until = performance.now() + 10;
    while (performance.now() < until) { /* spin: the writer is microseconds away */ }
  }
  return null;
}

/** Same file on disk (the path was not unlinked and re-created by a releasing holder since we opened it). */
function samePath(file: Deno.FsFile, path: string): boolean {
  try {
    return file.statSync().ino === Deno.statSync(path).ino;
  } catch {
    return false;
  }
}

/**
 * Take the folder (created if absent) for this process, or throw FolderInUseError naming the holder. The lock
 * lives as long as the returned handle (or the process): release it, exit, or be killed.
 */
export function lockFolder(dir: string, opts: { command?: string; flag?: string } = {}) {
  if (exists(dir) && !Deno.statSync(dir).isDirectory) {
    const flag = opts.flag ? `--${opts.flag} ` : "";
    throw new UsageError(`${flag}${dir}: a file, not a folder; pass a folder (created when absent)`);
  }
  Deno.mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const me: LockOwner = {
    pid: Deno.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    ...(opts.command ? { command: opts.command } : {}),
  };
  for (let tries = 0; tries < 5; tries++) {
    const file = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o644 });
    if (!file.tryLockSync(true)) {
      file.close();
      throw new FolderInUseError(dir, holder(path));
    }
    // A releasing holder unlinks the file while locked; a lock won on that unlinked inode guards nothing.
    if (!samePath(file, path)) {
      file.close();
      continue;
    }
    file.truncateSync(0);
    const bytes = new TextEncoder().encode(JSON.stringify(me) + "\n");
    for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
    let held = true;
    // Unlocks and removes the file (idempotent).
    const release = () => {
      if (!held) return;
      held = false;
      globalThis.removeEventListener("unload", release);
      // Unlink while still locked, then close (which unlocks): a waiter that opened the old inode sees it unlinked.
      try {
        Deno.removeSync(path);
      } catch { /* already gone */ }
      file.close();
    };
    // A normal exit tidies the file; after a crash or SIGKILL the kernel drops the lock and the file stays, harmless.
    globalThis.addEventListener("unload", release);
    return { path, release };
  }
  throw new Error(`${path}: could not take the lock after 5 tries (the folder is being locked and released)`);
}
