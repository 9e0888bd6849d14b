import { assertEquals, ok, rejects } from "../assert.ts";
import { join } from "node:path";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { sha256 } from "../../common/hash.ts";
import { cacheRoot, readManifest } from "../../datasets/cache.ts";
import { fetchDataset } from "../../datasets/fetch.ts";
import { loadDataset, SYNTHETIC_DEFAULT } from "../../datasets/load.ts";
import { generateTasks } from "../../datasets/synthetic.ts";
import { type Source, SOURCES } from "../../datasets/sources.ts";
import { aimeParquet, FIXTURES, startServer, tempDir } from "./helpers.ts";

const MIRROR = join(FIXTURES, "mirror");
const MATH500 = readFileSync(join(MIRROR, "math500/test.jsonl"));
const real = (id: string) => SOURCES.find((s) => s.id === id)!;

/** The real math500 source with the fixture's checksum pinned instead of the published one. */
const math500Fixture: Source = {
  ...real("hf"),
  files: [{ ...real("hf").files[0], sha256: sha256(MATH500) }],
};

/** Run `fn` with HF_ENDPOINT pointing at a local server holding `files` (hub layout keys "<repo>/<path>"). */
async function withHub(
  files: Record<string, Uint8Array>,
  fn: (s: ReturnType<typeof startServer>) => Promise<void>,
) {
  const server = startServer(files);
  const before = Deno.env.get("HF_ENDPOINT");
  Deno.env.set("HF_ENDPOINT", server.url + "/");
  try {
    await fn(server);
  } finally {
    if (before === undefined) Deno.env.delete("HF_ENDPOINT");
    else Deno.env.set("HF_ENDPOINT", before);
    await server.close();
  }
}

Deno.test("fetch: hub download → verified, normalised, manifest written; the second run does no network I/O", async () => {
  await withHub({ "HuggingFaceH4/MATH-500/test.jsonl": MATH500 }, async (s) => {
    const cacheDir = tempDir();
    const lines: string[] = [];
    const first = await fetchDataset("math500", {
      cacheDir,
      source: math500Fixture,
      onBadRow: "skip",
      log: (l) => lines.push(l),
    });
    assertEquals(first.cached, false);
    const m = first.manifest;
    assertEquals(m.files.length, 1);
    assertEquals(m.files[0].url, `${s.url}/datasets/HuggingFaceH4/MATH-500/resolve/main/test.jsonl`);
    assertEquals([m.files[0].bytes, m.files[0].sha256, m.files[0].checksum], [
      MATH500.length,
      sha256(MATH500),
      "pinned",
    ]);
    assertEquals([m.revision, m.repo, m.licence], ["main", "HuggingFaceH4/MATH-500", "MIT"]);
    assertEquals(m.rows, { read: 7, bad: 3, duplicates: 1, kept: 3 });
    ok(!Number.isNaN(Date.parse(m.fetchedAt)));
    ok(
      lines.some((l) => l.includes("read 7 rows, dropped 1 as duplicates, 3 bad, kept 3 records")),
      lines.join("\n"),
    );
    const requests = s.seen.length;
    const second = await fetchDataset("math500", { cacheDir, source: math500Fixture });
    assertEquals(second.cached, true);
    assertEquals(s.seen.length, requests, "no request on the second run");
    // --force re-reads the raw file from the cache, still without the network.
    await fetchDataset("math500", { cacheDir, source: math500Fixture, onBadRow: "skip", force: true });
    assertEquals(s.seen.length, requests);
    const records = await loadDataset("math500", { cacheDir });
    assertEquals(records.map((r) => r.answer), ["2", "\\frac{3}{4}", "4"]);
  });
});

Deno.test("fetch: the published checksum rejects a different file and leaves the cache empty", async () => {
  await withHub({ "HuggingFaceH4/MATH-500/test.jsonl": MATH500 }, async () => {
    const cacheDir = tempDir();
    await rejects(
      fetchDataset("math500", { cacheDir }),
      /checksum mismatch for .*expected sha256 35dc41080a36.*Needed: HuggingFaceH4\/MATH-500@main:test\.jsonl/,
    );
    assertEquals(readManifest(cacheDir, "math500"), null);
    const raw = join(cacheDir, "raw/HuggingFaceH4/MATH-500/main");
    assertEquals(readdirSync(raw), [], "no partial or unverified file left");
  });
});

Deno.test("fetch: an unpinned file's sha256 is recorded on first fetch and enforced afterwards", async () => {
  const v1 = aimeParquet([{ idx: 1, problem: "One.", answer: 1 }, { idx: 2, problem: "Two.", answer: 2 }]);
  const v2 = aimeParquet([{ idx: 1, problem: "One!", answer: 1 }]);
  const key = "MathArena/aime_2025/data/train-00000-of-00001.parquet";
  await withHub({ [key]: v1 }, async (s) => {
    const cacheDir = tempDir();
    const { manifest } = await fetchDataset("aime2025", { cacheDir });
    assertEquals(manifest.source, "matharena");
    assertEquals([manifest.files[0].sha256, manifest.files[0].checksum], [sha256(v1), "recorded"]);
    assertEquals((await loadDataset("aime2025", { cacheDir })).map((r) => r.id), [
      "aime2025/I-1",
      "aime2025/I-2",
    ]);
    // The upstream file changes and the raw copy is lost: the refetch must refuse the new bytes.
    s.files.set(key, v2);
    Deno.removeSync(join(cacheDir, "raw"), { recursive: true });
    await rejects(
      fetchDataset("aime2025", { cacheDir, force: true }),
      /checksum mismatch .*changed since its first fetch/,
    );
    assertEquals(readManifest(cacheDir, "aime2025")!.files[0].sha256, sha256(v1), "manifest untouched");
  });
});

Deno.test("fetch: a corrupted raw file in the cache is downloaded again", async () => {
  await withHub({ "HuggingFaceH4/MATH-500/test.jsonl": MATH500 }, async (s) => {
    const cacheDir = tempDir();
    await fetchDataset("math500", { cacheDir, source: math500Fixture, onBadRow: "skip" });
    const raw = join(cacheDir, "raw/HuggingFaceH4/MATH-500/main/test.jsonl");
    writeFileSync(raw, "garbage\n");
    const before = s.seen.length;
    await fetchDataset("math500", { cacheDir, source: math500Fixture, onBadRow: "skip", force: true });
    assertEquals(s.seen.length, before + 1);
    assertEquals(sha256(readFileSync(raw)), sha256(MATH500));
  });
});

Deno.test("fetch: no network and no mirror → the error names the file and how to provide it", async () => {
  const s = startServer();
  await s.close();
  Deno.env.set("HF_ENDPOINT", s.url);
  try {
    await rejects(
      fetchDataset("math500", { cacheDir: tempDir() }),
      /cannot reach .*Needed: HuggingFaceH4\/MATH-500@main:test\.jsonl; provide it with --mirror DIR \(expects DIR\/math500\/test\.jsonl\)/,
    );
    await rejects(
      fetchDataset("aime2025", { cacheDir: tempDir() }),
      /--mirror DIR \(uses the offline source matharena-src, expecting DIR\/aime2025\/matharena/,
    );
  } finally {
    Deno.env.delete("HF_ENDPOINT");
  }
});

Deno.test("fetch --mirror: reads the offline layout; checksum and missing-file errors name the path", async () => {
  const cacheDir = tempDir();
  // The fixture mirror is not the published file: the pinned checksum must reject it.
  await rejects(
    fetchDataset("math500", { cacheDir, mirror: MIRROR }),
    /math500\/test\.jsonl: sha256 [0-9a-f]{64} does not match the pinned 35dc4108/,
  );
  await rejects(
    fetchDataset("dapo-math-17k", { cacheDir, mirror: MIRROR }),
    /missing .*dapo_math_17k\.parquet/,
  );
  const { manifest } = await fetchDataset("math500", {
    cacheDir,
    mirror: MIRROR,
    source: math500Fixture,
    onBadRow: "skip",
  });
  ok(
    manifest.files[0].url.startsWith("file://") &&
      manifest.files[0].url.endsWith("/mirror/math500/test.jsonl"),
  );
  assertEquals(manifest.rows.kept, 3);
});

Deno.test("loadDataset: clear errors for unknown, unfetched and corrupted datasets; synthetic is built in", async () => {
  const cacheDir = tempDir();
  await rejects(
    loadDataset("gsm9k", { cacheDir }),
    /unknown dataset 'gsm9k' \(known: math500, aime2024, aime2025/,
  );
  await rejects(loadDataset("math500", { cacheDir }), /not in the cache .*run `deno task fetch math500`/);
  await fetchDataset("math500", { cacheDir, mirror: MIRROR, source: math500Fixture, onBadRow: "skip" });
  const m = readManifest(cacheDir, "math500")!;
  const path = join(cacheDir, "math500", m.records.path);
  writeFileSync(path, readFileSync(path, "utf8").replace("\\\\frac{3}{4}", "\\\\frac{1}{4}"));
  await rejects(loadDataset("math500", { cacheDir }), /sha256 does not match its manifest/);
  assertEquals(await loadDataset("synthetic"), generateTasks(SYNTHETIC_DEFAULT));
});

Deno.test("fetch: a re-fetch replaces the records file atomically and removes the old one", async () => {
  const cacheDir = tempDir();
  const opts = { cacheDir, mirror: MIRROR, source: math500Fixture, onBadRow: "skip" as const };
  await fetchDataset("math500", opts);
  const first = readManifest(cacheDir, "math500")!.records.path;
  // A new upstream version (here: the truncated fixture) gives different records under a new name.
  const mirror2 = tempDir();
  Deno.mkdirSync(join(mirror2, "math500"));
  const v2 = readFileSync(join(FIXTURES, "math500-truncated.jsonl"));
  writeFileSync(join(mirror2, "math500/test.jsonl"), v2);
  const variant = { ...math500Fixture, files: [{ ...math500Fixture.files[0], sha256: sha256(v2) }] };
  await fetchDataset("math500", { ...opts, mirror: mirror2, source: variant, force: true });
  const second = readManifest(cacheDir, "math500")!.records.path;
  ok(second !== first);
  assertEquals(readdirSync(join(cacheDir, "math500")).sort(), ["manifest.json", second].sort());
  assertEquals((await loadDataset("math500", { cacheDir })).length, 2);
});

Deno.test("cacheRoot: --cache-dir, then ACEBENCH_CACHE, then XDG_CACHE_HOME/acebench, then ~/.cache/acebench", () => {
  const saved = ["ACEBENCH_CACHE", "XDG_CACHE_HOME", "HOME"].map((k) => [k, Deno.env.get(k)] as const);
  try {
    Deno.env.set("ACEBENCH_CACHE", "/a");
    Deno.env.set("XDG_CACHE_HOME", "/x");
    Deno.env.set("HOME", "/h");
    assertEquals(cacheRoot("/flag"), "/flag");
    assertEquals(cacheRoot(), "/a");
    Deno.env.delete("ACEBENCH_CACHE");
    assertEquals(cacheRoot(), "/x/acebench");
    Deno.env.delete("XDG_CACHE_HOME");
    assertEquals(cacheRoot(), "/h/.cache/acebench");
  } finally {
    for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  }
});

Deno.test("fetch: an offline-only source without --mirror says to pass one", async () => {
  await rejects(
    fetchDataset("aime2025", { cacheDir: tempDir(), sourceId: "matharena-src" }),
    /aime2025\/matharena-src is offline only: pass --mirror DIR/,
  );
});
