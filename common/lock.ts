// One writer per output folder: a lock file `DIR/.lock` holding the owner's pid and host, created atomically
// (O_CREAT|O_EXCL), so a second `eval` or `sweep` on the same folder stops at once instead of redoing work.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import process from "node:process";

/** What the lock file holds. */
export interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
  command?: string;
}

/** Another live process holds the folder; the CLI prints the message and exits 2. */
export class FolderInUseError extends Error {
  constructor(readonly folder: string, readonly owner: LockOwner) {
    super(
      `folder ${folder} is in use by pid ${owner.pid}` +
        (owner.host === hostname() ? "" : ` on ${owner.host}`) +
        ` (since ${owner.startedAt}); wait for it to finish or choose another --out`,
    );
    this.name = "FolderInUseError";
  }
}

/** A held lock; `release` removes the file if it is still ours (idempotent). */
export interface FolderLock {
  path: string;
  release(): void;
}

/** Name of the lock file inside a locked folder. */
export const LOCK_FILE = ".lock";

/** True if a process with this pid exists on this machine (EPERM: it exists but is not ours). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

function readOwner(path: string): LockOwner | null {
  try {
    const o = JSON.parse(readFileSync(path, "utf8"));
    return Number.isInteger(o?.pid) && typeof o?.host === "string" ? o : null;
  } catch {
    return null; // absent, or torn by a crash between create and write
  }
}

/** Create the lock file exclusively; false when it already exists. */
function tryCreate(path: string, owner: LockOwner): boolean {
  try {
    writeFileSync(path, JSON.stringify(owner) + "\n", { flag: "wx", mode: 0o644 });
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === "EEXIST") return false;
    throw e;
  }
}

/**
 * Take the folder (created if absent) for this process. A lock held by a live process throws FolderInUseError.
 * A stale lock (its pid is gone on this host, or the file is unreadable) is taken over after `onStale` is told:
 * it is first renamed to a name of our own, so of two processes racing for one stale lock only one wins.
 */
export function lockFolder(
  dir: string,
  opts: { command?: string; onStale?: (message: string) => void } = {},
): FolderLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const me: LockOwner = {
    pid: Deno.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    ...(opts.command ? { command: opts.command } : {}),
  };
  for (let tries = 0; tries < 5; tries++) {
    if (tryCreate(path, me)) return heldLock(path, me);
    const owner = readOwner(path);
    if (owner && (owner.host !== me.host || pidAlive(owner.pid))) throw new FolderInUseError(dir, owner);
    const aside = `${path}.stale.${me.pid}`;
    try {
      renameSync(path, aside);
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") continue; // someone else moved it first: retry
      throw e;
    }
    const moved = readOwner(aside);
    if (moved && moved.host === me.host && pidAlive(moved.pid)) {
      // We moved a lock another process had just taken: put it back and stop.
      renameSync(aside, path);
      throw new FolderInUseError(dir, moved);
    }
    rmSync(aside, { force: true });
    opts.onStale?.(
      owner
        ? `folder ${dir}: taking over the lock of pid ${owner.pid} (no longer running)`
        : `folder ${dir}: taking over an unreadable lock file`,
    );
  }
  throw new Error(`${path}: could not take the lock after 5 tries; remove it if no other process runs`);
}

function heldLock(path: string, me: LockOwner): FolderLock {
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    globalThis.removeEventListener("unload", release);
    const owner = readOwner(path);
    if (owner?.pid === me.pid && owner.startedAt === me.startedAt) rmSync(path, { force: true });
  };
  // A normal exit (Deno.exit included) releases it; after SIGKILL the lock is stale and taken over next time.
  globalThis.addEventListener("unload", release);
  return { path, release };
}
