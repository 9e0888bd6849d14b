import { assertEquals, ok, rejects } from "../assert.ts";
import { join } from "node:path";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { sha256 } from "../../common/hash.ts";
import { download, DownloadError } from "../../datasets/download.ts";
import { startServer, tempDir } from "./helpers.ts";

const BYTES = new TextEncoder().encode("0123456789abcdefghij".repeat(5000)); // 100 kB
const SUM = sha256(BYTES);

/** Run `fn` with a fresh server holding data.bin and a temp destination. */
async function withServer(fn: (s: ReturnType<typeof startServer>, dest: string) => Promise<void>) {
  const server = startServer({ "data.bin": BYTES });
  try {
    await fn(server, join(tempDir(), "sub", "data.bin"));
  } finally {
    await server.close();
  }
}

Deno.test("download: streams to the destination, verifies the checksum, leaves no part file", async () => {
  await withServer(async (s, dest) => {
    const r = await download({ url: `${s.url}/files/data.bin`, dest, sha256: SUM });
    assertEquals(r, { bytes: BYTES.length, sha256: SUM, resumedFrom: 0 });
    assertEquals(sha256(readFileSync(dest)), SUM);
    ok(!existsSync(`${dest}.part`));
  });
});

Deno.test("download: a checksum mismatch discards the download and leaves the cache as it was", async () => {
  await withServer(async (s, dest) => {
    await rejects(
      download({ url: `${s.url}/files/data.bin`, dest, sha256: "0".repeat(64) }),
      /checksum mismatch .*expected sha256 0{64}, got [0-9a-f]{64}; the download was discarded/,
    );
    ok(!existsSync(dest) && !existsSync(`${dest}.part`));
  });
});

Deno.test("download: resumes a partial file with a Range request", async () => {
  await withServer(async (s, dest) => {
    await download({ url: `${s.url}/files/data.bin`, dest: dest + ".warm" }); // creates the folder
    writeFileSync(`${dest}.part`, BYTES.subarray(0, 30000));
    const r = await download({ url: `${s.url}/files/data.bin`, dest, sha256: SUM });
    assertEquals(r.resumedFrom, 30000);
    assertEquals(s.seen.at(-1)!.range, "bytes=30000-");
    assertEquals(sha256(readFileSync(dest)), SUM);
  });
});

Deno.test("download: an interrupted transfer keeps the part file and the next run resumes it", async () => {
  await withServer(async (s, dest) => {
    await rejects(
      download({ url: `${s.url}/cut/data.bin`, dest, sha256: SUM }),
      /interrupted after \d+ bytes/,
    );
    ok(!existsSync(dest), "nothing renamed into place");
    const partial = readFileSync(`${dest}.part`).length;
    ok(partial > 0 && partial < BYTES.length, `part holds ${partial} bytes`);
    const r = await download({ url: `${s.url}/cut/data.bin`, dest, sha256: SUM });
    assertEquals(r.resumedFrom, partial);
    assertEquals(sha256(readFileSync(dest)), SUM);
  });
});

Deno.test("download: a complete part file (416 on resume) is verified and renamed", async () => {
  await withServer(async (s, dest) => {
    await download({ url: `${s.url}/files/data.bin`, dest: dest + ".warm" });
    writeFileSync(`${dest}.part`, BYTES);
    const r = await download({ url: `${s.url}/files/data.bin`, dest, sha256: SUM });
    assertEquals(r.resumedFrom, BYTES.length);
    assertEquals(sha256(readFileSync(dest)), SUM);
  });
});

Deno.test("download: a stale part file that does not match restarts from zero", async () => {
  await withServer(async (s, dest) => {
    await download({ url: `${s.url}/files/data.bin`, dest: dest + ".warm" });
    writeFileSync(`${dest}.part`, new Uint8Array(BYTES.length + 10)); // longer than the file: 416
    const r = await download({ url: `${s.url}/files/data.bin`, dest, sha256: SUM });
    assertEquals(r.resumedFrom, 0);
    assertEquals(sha256(readFileSync(dest)), SUM);
  });
});

Deno.test("download: follows relative redirects; the token goes to the first origin only", async () => {
  const away = startServer({ "data.bin": BYTES });
  try {
    await withServer(async (s, dest) => {
      await download({ url: `${s.url}/hop/3/data.bin`, dest, sha256: SUM, token: "secret" });
      assertEquals(s.seen.map((x) => x.path), [
        "/hop/3/data.bin",
        "/hop/2/data.bin",
        "/hop/1/data.bin",
        "/files/data.bin",
      ]);
      ok(s.seen.every((x) => x.auth === "Bearer secret"));
      s.awayBase = away.url;
      await download({ url: `${s.url}/away/data.bin`, dest: dest + "2", sha256: SUM, token: "secret" });
      assertEquals(away.seen.map((x) => [x.path, x.auth]), [["/files/data.bin", null]]);
      await rejects(download({ url: `${s.url}/loop`, dest: dest + "3" }), /more than 10 redirects/);
    });
  } finally {
    await away.close();
  }
});

Deno.test("download: HTTP errors name the status, the URL and the fix; nothing is written", async () => {
  await withServer(async (s, dest) => {
    const cases: [number, RegExp][] = [
      [404, /HTTP 404 .*status\/404: check the repo, revision and path/],
      [401, /HTTP 401 .*set HF_TOKEN/],
      [403, /HTTP 403 .*set HF_TOKEN/],
      [503, /HTTP 503 .*rerun later/],
    ];
    for (const [code, message] of cases) {
      await rejects(download({ url: `${s.url}/status/${code}`, dest }), message);
    }
    ok(!existsSync(dest) && !existsSync(`${dest}.part`));
  });
});

Deno.test("download: an unreachable server is a DownloadError", async () => {
  const s = startServer();
  const url = `${s.url}/files/x`;
  await s.close();
  const err = await download({ url, dest: join(tempDir(), "x") }).catch((e) => e);
  ok(err instanceof DownloadError, String(err));
  ok(err.message.startsWith(`cannot reach ${url}`), err.message);
});
