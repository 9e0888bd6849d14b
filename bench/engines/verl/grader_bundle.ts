// The reward grader, self-contained in the sweep folder: reward_serve.ts and the grading worker bundled into two
// JavaScript files (`deno bundle`, npm packages inlined) beside a copy of the Deno executable that bundled them,
// with their sha256 in SHA256SUMS. A scoring node then needs neither Deno on PATH nor the acebench checkout: only
// the sweep folder (grader.sh finds the bundle relative to itself and checks the sums before it starts).
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { atomicWrite, exists } from "../../../common/fs.ts";
import { sha256 as sha256Of } from "../../../common/hash.ts";
import { readStatus } from "../../../common/run_folder.ts";

/** The bundled grader's folder, relative to the sweep folder. */
export const GRADER_BUNDLE_DIR = "verl/grader";
/** The files of a bundled grader, in SHA256SUMS order. */
export const GRADER_BUNDLE_FILES = ["deno", "reward_serve.js", "grade_worker.js"] as const;

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

async function bundle(entry: string, out: string): Promise<void> {
  const config = join(ROOT, "deno.json");
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", "--config", config, "-o", out, join(ROOT, entry)],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!result.success) {
    const err = new TextDecoder().decode(result.stderr).trim().split("\n").slice(-3).join(" | ");
    throw new Error(
      `verl: could not bundle the grader (deno bundle ${entry}): ${err}; ` +
        "or set settings.acebenchRoot to an acebench checkout every scoring node can read",
    );
  }
}

/** The bundle's identity: sha256 of its SHA256SUMS (which lists every file's), or null when there is none. */
export function bundleDigest(bundleDir: string): string | null {
  const sums = join(bundleDir, "SHA256SUMS");
  return exists(sums) ? sha256Of(readFileSync(sums)) : null;
}

/**
 * Throw (one line) when replacing the sweep's bundle by one with digest `next` would change the grader of a run
 * planned or running with the current one (status.json graderBundleSha256): its rewards so far came from it.
 */
function checkBundleReplace(sweepDir: string, next: string): void {
  const current = bundleDigest(join(sweepDir, GRADER_BUNDLE_DIR));
  if (current === null || current === next) return;
  const runs = join(sweepDir, "runs");
  const users = (exists(runs) ? readdirSync(runs) : []).filter((run) => {
    const status = readStatus(join(runs, run));
    return (status?.state === "planned" || status?.state === "running") &&
      status.graderBundleSha256 === current;
  }).sort();
  if (users.length === 0) return;
  const change = `sha256 ${current.slice(0, 12)} → ${next.slice(0, 12)}`;
  throw new Error(
    `${join(sweepDir, GRADER_BUNDLE_DIR)}: planning would replace the grader bundle (${change}) that ` +
      `planned or running runs score with (${users.join(", ")}); finish them, or plan into another --out`,
  );
}

/**
 * Build the grader into `<sweepDir>/verl/grader/` (beside it, then renamed into place: a crash leaves the previous
 * one whole), unless `checkBundleReplace` refuses (needs --allow-run). Returns the folder, file sha256s, digest.
 */
export async function bundleGrader(sweepDir: string) {
  const dir = join(sweepDir, GRADER_BUNDLE_DIR);
  const tmp = `${dir}.${Deno.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    await bundle("bench/engines/verl/reward_serve.ts", join(tmp, "reward_serve.js"));
    await bundle("evaluators/grade_worker.ts", join(tmp, "grade_worker.js"));
    copyFileSync(Deno.execPath(), join(tmp, "deno"));
    chmodSync(join(tmp, "deno"), 0o755);
    const sha256 = Object.fromEntries(
      GRADER_BUNDLE_FILES.map((f) => [f, sha256Of(readFileSync(join(tmp, f)))]),
    );
    // sha256sum --check's format: "<hex>  <name>"
    atomicWrite(join(tmp, "SHA256SUMS"), GRADER_BUNDLE_FILES.map((f) => `${sha256[f]}  ${f}\n`).join(""));
    const digest = bundleDigest(tmp)!;
    checkBundleReplace(sweepDir, digest);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return { dir, sha256, digest };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
