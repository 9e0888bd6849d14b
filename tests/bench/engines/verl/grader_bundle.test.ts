// The grader travels with the sweep folder: bundled (reward_serve.js, grade_worker.js and a Deno), checked against
// its SHA256SUMS, it grades from a copy of the sweep folder on a PATH without Deno, as grade --strict does; a
// tampered or partial copy refuses to start; planning again never swaps the bundle of a planned or running run.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gradeMany } from "../../../../evaluators/mod.ts";
import { bundleGrader, GRADER_BUNDLE_FILES, graderScript } from "../../../../bench/engines/verl/mod.ts";
import { bundleDigest } from "../../../../bench/engines/verl/grader_bundle.ts";
import { writeStatus } from "../../../../common/run_folder.ts";
import { assertEquals, ok, rejects } from "../../../assert.ts";
import { tempDir } from "../../../temp.ts";

/** Run a sweep copy's grader.sh with `request` on stdin and only /usr/bin:/bin on PATH. */
async function grade(graderSh: string, request: string) {
  const child = new Deno.Command("/bin/bash", {
    args: [graderSh],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: tempDir("acebench-grader-home-") },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(request + "\n"));
  await writer.close();
  const out = await child.output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("verl grader bundle: grades from a copy of the sweep folder without Deno on PATH; a tampered copy refuses", async () => {
  const sweep = tempDir("acebench-grader-sweep-");
  const { dir, sha256 } = await bundleGrader(sweep);
  assertEquals(Object.keys(sha256), [...GRADER_BUNDLE_FILES]);
  mkdirSync(join(sweep, "runs/r0/verl"), { recursive: true });
  writeFileSync(join(sweep, "runs/r0/verl/grader.sh"), graderScript({ deno: "deno", acebenchRoot: null }));
  ok(dir.endsWith("verl/grader"), dir);

  const copy = join(tempDir("acebench-grader-copy-"), "moved");
  cpSync(sweep, copy, { recursive: true });
  const items = [
    { prediction: "so \\boxed{\\dfrac{1}{2}}", gold: "0.5" },
    { prediction: "Answer: 41", gold: "42" },
    { prediction: "the result is 3", gold: "3" },
  ];
  const r = await grade(join(copy, "runs/r0/verl/grader.sh"), JSON.stringify(items));
  assertEquals(r.code, 0, r.stderr);
  const want = await gradeMany(items.map((it) => ({ ...it, strict: true })), { workers: 0 });
  assertEquals(
    JSON.parse(r.stdout),
    want.map(({ correct, status, extracted }) => ({ correct, status, extracted })),
  );

  // planning again with the same code leaves a planned run's bundle as it was; a different bundle is refused
  const digest = bundleDigest(dir)!;
  writeStatus(join(sweep, "runs/r0"), { state: "planned", startedAt: "t", graderBundleSha256: digest });
  assertEquals((await bundleGrader(sweep)).digest, digest, "deno bundle is deterministic");
  const older = "0".repeat(64) + "  deno\n";
  writeFileSync(join(dir, "SHA256SUMS"), older);
  writeStatus(join(sweep, "runs/r0"), {
    state: "running",
    startedAt: "t",
    graderBundleSha256: bundleDigest(dir)!,
  });
  await rejects(
    () => bundleGrader(sweep),
    new RegExp(
      `${dir}: planning would replace the grader bundle \\(sha256 [0-9a-f]{12} → ${
        digest.slice(0, 12)
      }\\) that planned or running runs score with \\(r0\\); finish them, or plan into another --out$`,
    ),
  );
  assertEquals(readFileSync(join(dir, "SHA256SUMS"), "utf8"), older, "the current bundle is kept");

  writeFileSync(join(copy, "verl/grader/reward_serve.js"), "// tampered\n", { flag: "a" });
  const bad = await grade(join(copy, "runs/r0/verl/grader.sh"), JSON.stringify(items));
  assertEquals(bad.code, 1);
  ok(/does not match its SHA256SUMS/.test(bad.stderr), bad.stderr);
});
