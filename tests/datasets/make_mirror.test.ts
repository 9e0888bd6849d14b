// .ci/make_dataset_mirror.sh: builds a mirror from the pinned GitHub origins, checked against
// datasets/checksums.sha256. Run against a file:// copy of GitHub's raw layout (ACEBENCH_GITHUB_RAW), made from the
// mirror this machine has (when it has all the files) or from files with wrong content.
import { assertEquals, ok } from "../assert.ts";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SHARED, tempDir } from "./helpers.ts";
import { missing, skipping } from "../external_inputs.ts";

const SCRIPT = new URL("../../.ci/make_dataset_mirror.sh", import.meta.url).pathname;
const HAVE_CURL =
  new Deno.Command("bash", { args: ["-c", "command -v curl"], stdout: "null", stderr: "null" })
    .outputSync().success;
skipping(
  "make_dataset_mirror.sh tests",
  HAVE_CURL ? null : "curl is not installed (apt-get install -y curl)",
);

/** Run the script with ACEBENCH_GITHUB_RAW=file://`raw`. */
function script(raw: string, ...args: string[]) {
  const out = new Deno.Command("bash", {
    args: [SCRIPT, ...args],
    env: { ACEBENCH_GITHUB_RAW: `file://${raw}` },
  }).outputSync();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** [mirror path, path under the raw root] for every file, as the script names them. */
function origins(raw: string): [string, string][] {
  return script(raw, "--urls").stdout.trim().split("\n").map((l) => {
    const [path, url] = l.split(" ");
    return [path, url.slice(`file://${raw}/`.length)];
  });
}

Deno.test({
  name: "make_dataset_mirror.sh: a wrong or missing file is named, not kept, and the exit status is 1",
  ignore: !HAVE_CURL,
  fn() {
    const raw = tempDir();
    const [path, origin] = origins(raw).find(([p]) => p === "aime2024/test.jsonl")!;
    mkdirSync(dirname(join(raw, origin)), { recursive: true });
    writeFileSync(join(raw, origin), "{}\n");
    const dir = tempDir();
    const run = script(raw, dir);
    assertEquals(run.code, 1);
    ok(/aime2024\/test\.jsonl: sha256 [0-9a-f]{64}, expected af2b8bd2aa91/.test(run.stderr), run.stderr);
    ok(
      /math500\/test\.jsonl: cannot download file:\/\/.*Zhuofeng-Li\/math-evaluation-harness\/1b9885d8/.test(
        run.stderr,
      ),
    );
    ok(!existsSync(join(dir, path)) && !existsSync(join(dir, `${path}.part`)), "nothing unverified kept");
    assertEquals(readFileSync(join(dir, "SHA256SUMS"), "utf8"), "");
  },
});

const HAVE_ALL = HAVE_CURL && (() => {
  const raw = "/nonexistent";
  return origins(raw).every(([p]) => existsSync(join(SHARED, p)));
})();
skipping(
  "the full make_dataset_mirror.sh test",
  !HAVE_CURL || HAVE_ALL
    ? null
    : missing("datasetMirror", `${SHARED} lacks some files of datasets/checksums.sha256`),
);

Deno.test({
  name: "make_dataset_mirror.sh: rebuilds the whole mirror from the raw layout, then keeps it on a re-run",
  ignore: !HAVE_ALL,
  fn() {
    const raw = tempDir();
    const files = origins(raw);
    for (const [path, origin] of files) {
      mkdirSync(dirname(join(raw, origin)), { recursive: true });
      copyFileSync(join(SHARED, path), join(raw, origin));
    }
    const dir = join(tempDir(), "mirror");
    const first = script(raw, dir);
    assertEquals(first.code, 0, first.stderr);
    ok(first.stdout.includes(`${files.length} fetched, 0 already there, 0 failed`), first.stdout);
    for (const [path] of files) {
      ok(readFileSync(join(dir, path)).equals(readFileSync(join(SHARED, path))), path);
    }
    assertEquals(readFileSync(join(dir, "SHA256SUMS"), "utf8").trim().split("\n").length, files.length);
    const again = script(raw, dir);
    ok(again.stdout.includes(`0 fetched, ${files.length} already there, 0 failed`), again.stdout);
  },
});
