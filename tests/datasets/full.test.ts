// Over the full offline copies in ../shared/datasets (skipped with a message when absent).
import { assertEquals, ok } from "../assert.ts";
import { existsSync, readFileSync } from "node:fs";
import { fileSha256 } from "../../datasets/download.ts";
import { fetchDataset } from "../../datasets/fetch.ts";
import { loadDataset } from "../../datasets/load.ts";
import { HAVE_SHARED, SHARED, tempDir } from "./helpers.ts";
import { runCli } from "../run_cli.ts";
import { missing, skipping } from "../external_inputs.ts";

skipping(
  "full-data dataset tests",
  HAVE_SHARED ? null : missing("datasetMirror", `${SHARED}/SHA256SUMS not found`),
);

/** Run `deno task fetch` as a subprocess (the real CLI path, no network permission needed with a mirror). */
const fetchCli = (...args: string[]) =>
  runCli(["fetch", ...args], ["--allow-read", "--allow-write", "--allow-env"]);

Deno.test({
  name: "full data: fetch --mirror ../shared/datasets, then --list, then load the published counts",
  ignore: !HAVE_SHARED,
  async fn() {
    const cacheDir = tempDir();
    const first = await fetchCli(
      "math500",
      "aime2025",
      "dapo-math-17k",
      "--mirror",
      SHARED,
      "--cache-dir",
      cacheDir,
    );
    assertEquals(first.code, 0, first.stderr);
    ok(
      first.stdout.includes("math500: read 500 rows, dropped 0 as duplicates, 0 bad, kept 500 records"),
      first.stdout,
    );
    ok(
      first.stdout.includes("aime2025: read 30 rows, dropped 0 as duplicates, 0 bad, kept 30 records"),
      first.stdout,
    );
    ok(
      first.stdout.includes(
        "dapo-math-17k: read 17917 rows, dropped 0 as duplicates, 0 bad, kept 17917 records (17290 distinct problem texts)",
      ),
      first.stdout,
    );
    // No --mirror, no --allow-net: must not touch the network.
    const again = await fetchCli("math500", "aime2025", "dapo-math-17k", "--cache-dir", cacheDir);
    assertEquals(again.code, 0, again.stderr);
    ok(again.stdout.includes("math500: cached (500 records from hf"), again.stdout);
    const list = await fetchCli("--list", "--cache-dir", cacheDir);
    ok(
      /dapo-math-17k\s+svs \(offline\)\s+Apache-2\.0\s+fetched \S+\s+17917 kept/.test(list.stdout),
      list.stdout,
    );
    ok(/aime2025\s+matharena-src \(offline\)\s+CC BY-NC-SA 4\.0/.test(list.stdout), list.stdout);
    ok(/math500\s+hf \(HuggingFaceH4\/MATH-500\)\s+MIT/.test(list.stdout), list.stdout);

    const math = await loadDataset("math500", { cacheDir });
    assertEquals(math.length, 500);
    ok(math.every((r) => r.id.startsWith("math500/test/") && r.meta.level! >= 1 && r.meta.subject));
    const aime = await loadDataset("aime2025", { cacheDir });
    assertEquals(aime.map((r) => r.id), [
      ...Array.from({ length: 15 }, (_, i) => `aime2025/I-${i + 1}`),
      ...Array.from({ length: 15 }, (_, i) => `aime2025/II-${i + 1}`),
    ]);
    ok(aime.every((r) => /^\d+$/.test(r.answer) && Number(r.answer) <= 999));
    const dapo = await loadDataset("dapo-math-17k", { cacheDir });
    assertEquals(dapo.length, 17917);
    assertEquals(new Set(dapo.map((r) => r.id)).size, 17917);
    assertEquals(dapo.filter((r) => r.meta.cjk).length, 3432); // as stated in the shared README
    ok(dapo.every((r) => /^-?\d+$/.test(r.answer) && r.template === "dapo-answer"));

    // The two AIME forms agree on every answer; problems 16-30 (exam II) have identical text.
    const yenCache = tempDir();
    await fetchDataset("aime2025", { cacheDir: yenCache, mirror: SHARED, sourceId: "yentinglin-jsonl" });
    const yen = await loadDataset("aime2025", { cacheDir: yenCache });
    assertEquals(yen.map((r) => [r.id, r.answer]), aime.map((r) => [r.id, r.answer]));
    assertEquals(
      aime.filter((r, i) => r.problem === yen[i].problem).map((r) => r.id),
      aime.slice(15).map((r) => r.id),
    );
  },
});

Deno.test({
  name: "full data: every file of datasets/checksums.sha256 that the mirror holds has that sha256",
  ignore: !HAVE_SHARED,
  async fn() {
    const lines = readFileSync(new URL("../../datasets/checksums.sha256", import.meta.url), "utf8").trim()
      .split("\n").map((l) => l.split(/\s+/));
    let checked = 0;
    for (const [sum, path] of lines) {
      const file = `${SHARED}/${path}`;
      if (!existsSync(file)) continue; // a mirror made before a dataset was added (make_dataset_mirror.sh adds it)
      assertEquals(await fileSha256(file), sum, path);
      checked++;
    }
    ok(checked >= 34, `only ${checked} files checked`); // MATH-500, the two AIME 2025 forms and DAPO at least
  },
});
