// What a sweep records so its numbers can be reproduced: software versions and the machine they ran on.
import { arch, cpus, platform, release, totalmem } from "node:os";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { sha256 } from "./hash.ts";

const repoRoot = new URL("../", import.meta.url);

function readText(path: URL | string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/**
 * The commit HEAD points at in the git checkout holding `dir` (walking up; a worktree's `.git` file followed),
 * read from .git without running git; null outside a checkout.
 */
export function gitCommit(dir: string = fromFileUrl(repoRoot)): string | null {
  for (let d = resolve(dir);; d = dirname(d)) {
    const dotGit = readText(join(d, ".git"))?.trim();
    const gitDir = dotGit?.startsWith("gitdir: ") ? resolve(d, dotGit.slice(8)) : join(d, ".git");
    const head = readText(join(gitDir, "HEAD"))?.trim();
    if (head) return head.startsWith("ref: ") ? refCommit(gitDir, head.slice(5)) : head;
    if (d === dirname(d)) return null;
  }
}

/** The commit a ref names: its loose file, in a worktree the common dir's, else packed-refs; null when absent. */
function refCommit(gitDir: string, ref: string): string | null {
  const common = readText(join(gitDir, "commondir"))?.trim();
  for (const dir of common ? [gitDir, resolve(gitDir, common)] : [gitDir]) {
    const loose = readText(join(dir, ref))?.trim();
    if (loose) return loose;
    const packed = readText(join(dir, "packed-refs"))?.split("\n").find((l) => l.endsWith(` ${ref}`));
    if (packed) return packed.split(" ")[0];
  }
  return null;
}

/** Deno/V8/TypeScript versions, the git commit and a hash of deno.lock (pins every npm dependency). */
export function versionInfo(): Record<string, string | null> {
  const lock = readText(new URL("deno.lock", repoRoot));
  return {
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
    git: gitCommit(),
    denoLock: lock === null ? null : sha256(lock).slice(0, 12),
  };
}

/** OS, architecture, CPU model and count, and memory (GiB) of this machine. */
export function machineInfo(): Record<string, string | number> {
  const cpuList = cpus();
  return {
    os: `${platform()} ${release()}`,
    arch: arch(),
    cpu: cpuList[0]?.model ?? "unknown",
    cores: cpuList.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}
