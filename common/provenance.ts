// What a sweep records so its numbers can be reproduced: software versions and the machine they ran on.
import { arch, cpus, platform, release, totalmem } from "node:os";
import { readFileSync } from "node:fs";
import { sha256 } from "./hash.ts";

const repoRoot = new URL("../", import.meta.url);

function readText(path: URL): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The checked-out git commit, read from .git without running git (null outside a checkout). */
function gitCommit(): string | null {
  const head = readText(new URL(".git/HEAD", repoRoot))?.trim();
  if (!head) return null;
  if (!head.startsWith("ref: ")) return head;
  const ref = head.slice(5);
  const loose = readText(new URL(`.git/${ref}`, repoRoot))?.trim();
  if (loose) return loose;
  const packed = readText(new URL(".git/packed-refs", repoRoot)) ?? "";
  return packed.split("\n").find((l) => l.endsWith(` ${ref}`))?.split(" ")[0] ?? null;
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
