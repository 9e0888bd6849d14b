// HTTP downloads into the cache: stream to `<dest>.part`, resume it with a Range request, follow redirects,
// verify the sha256, and only then rename onto `dest`, so the cache never holds a half-written file.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { progressBar } from "../common/progress.ts";

/** A failed download (fetch adds how to get the file another way; other errors pass through). */
export class DownloadError extends Error {
  override name = "DownloadError";
}

/** What to download and how to check it. */
export interface DownloadOptions {
  url: string;
  dest: string;
  /** Expected lowercase hex sha256; when absent the caller records the returned one. */
  sha256?: string;
  /** Bearer token, sent only to the origin of `url` (not to the hosts it redirects to). */
  token?: string;
  /** Progress bar label. */
  label?: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;

/**
 * Download `url` to `dest` (resuming `dest.part`), verify it, then rename atomically; throws DownloadError.
 * Returns the verified file's size, sha256 and the bytes reused from an earlier partial download (`resumedFrom`).
 */
export async function download(options: DownloadOptions) {
  const { url, dest } = options;
  const part = `${dest}.part`;
  mkdirSync(dirname(dest), { recursive: true });
  let offset = existsSync(part) ? statSync(part).size : 0;
  let res = await request(url, offset, options.token);
  if (res.status === 416 && offset > 0) {
    // Range past the end: the part may already be complete (a run stopped before its rename), or stale.
    await res.body?.cancel();
    const sum = await fileSha256(part);
    if (options.sha256 === sum) {
      Deno.renameSync(part, dest);
      return { bytes: offset, sha256: sum, resumedFrom: offset };
    }
    rmSync(part, { force: true });
    offset = 0;
    res = await request(url, 0, options.token);
  }
  if (res.status === 206 && !rangeStartsAt(res, offset)) {
    await res.body?.cancel();
    rmSync(part, { force: true });
    offset = 0;
    res = await request(url, 0, options.token);
  }
  if (res.status === 200) offset = 0;
  else if (res.status !== 206) {
    await res.body?.cancel();
    throw httpError(res.status, res.statusText, url);
  }
  const bytes = await streamToFile(res, part, offset, url, options.label ?? url);
  const sum = await fileSha256(part);
  if (options.sha256 && sum !== options.sha256) {
    rmSync(part, { force: true });
    throw new DownloadError(
      `checksum mismatch for ${url}: expected sha256 ${options.sha256}, got ${sum}; the download was discarded (rerun to retry)`,
    );
  }
  Deno.renameSync(part, dest);
  return { bytes, sha256: sum, resumedFrom: offset };
}

/** GET `url` (with a Range header when resuming), following up to MAX_REDIRECTS redirects by hand. */
async function request(url: string, offset: number, token?: string): Promise<Response> {
  const origin = new URL(url).origin;
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const headers = new Headers();
    if (offset > 0) headers.set("Range", `bytes=${offset}-`);
    // The token is for the hub; CDNs it redirects to get signed URLs and must not see it.
    if (token && new URL(current).origin === origin) headers.set("Authorization", `Bearer ${token}`);
    const res = await fetch(current, { headers, redirect: "manual" }).catch(
      (err: Error & { cause?: Error }) => {
        const why = [err.message, err.cause?.message].filter(Boolean).join(": ").split("\n")[0];
        throw new DownloadError(`cannot reach ${current}: ${why}`);
      },
    );
    if (!REDIRECTS.has(res.status)) return res;
    await res.body?.cancel();
    const location = res.headers.get("location");
    if (!location) {
      throw new DownloadError(`${current}: HTTP ${res.status} redirect without a Location header`);
    }
    current = new URL(location, current).href;
  }
  throw new DownloadError(`${url}: more than ${MAX_REDIRECTS} redirects`);
}

/** True when a 206 response's Content-Range starts at `offset` (i.e. it continues our partial file). */
function rangeStartsAt(res: Response, offset: number): boolean {
  return res.headers.get("content-range")?.match(/^bytes (\d+)-/)?.[1] === String(offset);
}

/** Append the body to `part` (truncating it first unless resuming at `offset`); returns the final size. */
async function streamToFile(
  res: Response,
  part: string,
  offset: number,
  url: string,
  label: string,
): Promise<number> {
  const total = offset + Number(res.headers.get("content-length") ?? NaN); // NaN when the length is unknown
  const bar = progressBar(label, Number.isFinite(total) ? total : 0, "bytes");
  bar.update(offset);
  const file = await Deno.open(part, {
    write: true,
    create: true,
    append: offset > 0,
    truncate: offset === 0,
  });
  let size = offset;
  try {
    for await (const chunk of res.body ?? new ReadableStream<Uint8Array>()) {
      for (let done = 0; done < chunk.length;) done += await file.write(chunk.subarray(done));
      size += chunk.length;
      bar.update(size);
    }
    await file.sync();
  } catch (e) {
    throw interrupted(url, size, part, (e as Error).message);
  } finally {
    file.close();
    bar.stop();
  }
  if (Number.isFinite(total) && size !== total) throw interrupted(url, size, part, `expected ${total} bytes`);
  return size;
}

/** The error for a download cut short: the partial file stays for the next run to resume. */
function interrupted(url: string, size: number, part: string, why: string): DownloadError {
  return new DownloadError(
    `download of ${url} interrupted after ${size} bytes (${
      why.split("\n")[0]
    }); rerun to resume from ${part}`,
  );
}

/** A one-line message for an HTTP error status, with the likely fix. */
function httpError(status: number, statusText: string, url: string): DownloadError {
  const hint = status === 401 || status === 403
    ? "the repo may be gated or private: set HF_TOKEN to a token with access"
    : status === 404
    ? "check the repo, revision and path (or HF_ENDPOINT)"
    : status === 429 || status >= 500
    ? "the server is busy or failing: rerun later"
    : "unexpected response";
  return new DownloadError(`HTTP ${status}${statusText ? " " + statusText : ""} for ${url}: ${hint}`);
}

/** Hex sha256 of a file, streamed so large files need no memory. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  const file = await Deno.open(path, { read: true });
  for await (const chunk of file.readable) hash.update(chunk); // the stream closes the file when done
  return hash.digest("hex");
}
