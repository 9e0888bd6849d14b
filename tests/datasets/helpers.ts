// Test helpers for datasets/: tiny parquet files in each source format, and a local HTTP file server.
import { parquetWriteBuffer } from "hyparquet-writer";
import { DAPO_HEAD, DAPO_TAIL } from "../../datasets/templates.ts";
import { tempDir as makeTempDir } from "../temp.ts";
import { DATASET_MIRROR } from "../external_inputs.ts";

/** Folder of committed text fixtures (a mirror laid out like ../shared/datasets, plus odd files). */
export const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;

/** The repo's ../shared/datasets, and whether it is present (full-data tests skip otherwise). */
export const SHARED = DATASET_MIRROR.slice(0, -1);
/** True when the offline copies exist on this machine. */
export const HAVE_SHARED = (() => {
  try {
    return Deno.statSync(`${SHARED}/SHA256SUMS`).isFile;
  } catch {
    return false;
  }
})();

const str = (name: string) => ({
  name,
  type: "BYTE_ARRAY",
  converted_type: "UTF8",
  repetition_type: "OPTIONAL",
});

/** A DAPO row in verl's layout; `index` is a UUID upstream, an integer in the offline copy. */
export interface DapoRow {
  problem: string | null;
  answer: string | null;
  index: string | number;
  wrapped?: boolean;
}

/** Parquet bytes in DAPO-Math-17k's verl layout (prompt list<struct>, reward_model and extra_info structs). */
export function dapoVerlParquet(rows: DapoRow[], rowGroupSize = 4): Uint8Array {
  const intIndex = typeof rows[0].index === "number";
  const columnData = [
    { name: "data_source", data: rows.map(() => "math_dapo") },
    {
      name: "prompt",
      data: rows.map((r) =>
        r.problem === null ? [] : [{
          content: r.wrapped ? DAPO_HEAD + r.problem + DAPO_TAIL : r.problem,
          role: "user",
        }]
      ),
    },
    { name: "ability", data: rows.map(() => "MATH") },
    {
      name: "reward_model",
      data: rows.map((r) => ({ ground_truth: r.answer, style: "rule-lighteval/MATH_v2" })),
    },
    { name: "extra_info", data: rows.map((r) => ({ index: intIndex ? BigInt(r.index) : r.index })) },
  ];
  const schema = [
    { name: "root", num_children: 5 },
    str("data_source"),
    { name: "prompt", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    { name: "element", repetition_type: "OPTIONAL", num_children: 2 },
    str("content"),
    str("role"),
    str("ability"),
    { name: "reward_model", repetition_type: "OPTIONAL", num_children: 2 },
    str("ground_truth"),
    str("style"),
    { name: "extra_info", repetition_type: "OPTIONAL", num_children: 1 },
    intIndex ? { name: "index", type: "INT64", repetition_type: "OPTIONAL" } : str("index"),
  ];
  // Small row groups by default so the reader's group-by-group path is exercised.
  // deno-lint-ignore no-explicit-any
  return new Uint8Array(parquetWriteBuffer({ columnData, schema, rowGroupSize } as any));
}

/** Parquet bytes in MathArena/aime_2025's layout (problem_idx int64, problem, answer int64, problem_type list). */
export function aimeParquet(rows: { idx: number; problem: string | null; answer: number }[]): Uint8Array {
  const columnData = [
    { name: "problem_idx", data: rows.map((r) => BigInt(r.idx)), type: "INT64" },
    { name: "problem", data: rows.map((r) => r.problem), type: "STRING" },
    { name: "answer", data: rows.map((r) => BigInt(r.answer)), type: "INT64" },
  ];
  // deno-lint-ignore no-explicit-any
  return new Uint8Array(parquetWriteBuffer({ columnData } as any));
}

/** Parquet bytes in open-r1/DAPO-Math-17k-Processed's layout (prompt and solution strings). */
export function openR1Parquet(rows: { prompt: string; solution: string }[]): Uint8Array {
  const columnData = [
    { name: "prompt", data: rows.map((r) => r.prompt), type: "STRING" },
    { name: "solution", data: rows.map((r) => r.solution), type: "STRING" },
    { name: "data_source", data: rows.map(() => "math_dapo"), type: "STRING" },
  ];
  // deno-lint-ignore no-explicit-any
  return new Uint8Array(parquetWriteBuffer({ columnData } as any));
}

/** A fresh temporary folder, removed when the test module ends. */
export function tempDir(): string {
  return makeTempDir("acebench-datasets-");
}

/** One request the server saw. */
export interface Seen {
  path: string;
  range: string | null;
  auth: string | null;
}

/** A local file server on 127.0.0.1 (port 0) with the behaviours the download path must survive. */
export interface FileServer {
  url: string;
  files: Map<string, Uint8Array>;
  seen: Seen[];
  /** Absolute URL that /away/<name> redirects to (another origin). */
  awayBase?: string;
  close(): Promise<void>;
}

/**
 * Routes: /files/<name> (with Range), /hop/<n>/<name> (n relative 302 hops), /away/<name> (307 to awayBase),
 * /cut/<name> (the first request dies after half the body), /status/<code>, /loop (redirects to itself),
 * /datasets/<repo>/resolve/<rev>/<path> (hub layout: looks up "<repo>/<path>" in files), /gh/<repo>/<commit>/<path>
 * (GitHub's raw layout under ACEBENCH_GITHUB_RAW=<url>/gh, the same lookup).
 */
export function startServer(files: Record<string, Uint8Array> = {}): FileServer {
  const state: FileServer = {
    url: "",
    files: new Map(Object.entries(files)),
    seen: [],
    close: async () => {},
  };
  const cutDone = new Set<string>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    state.seen.push({ path, range: req.headers.get("range"), auth: req.headers.get("authorization") });
    let m;
    if ((m = path.match(/^\/files\/(.+)$/))) return serveBytes(req, state.files.get(m[1]));
    if ((m = path.match(/^\/datasets\/([^/]+\/[^/]+)\/resolve\/[^/]+\/(.+)$/))) {
      return serveBytes(req, state.files.get(`${m[1]}/${m[2]}`));
    }
    if ((m = path.match(/^\/gh\/([^/]+\/[^/]+)\/[0-9a-f]{40}\/(.+)$/))) {
      return serveBytes(req, state.files.get(`${m[1]}/${m[2]}`));
    }
    if ((m = path.match(/^\/hop\/(\d+)\/(.+)$/))) {
      const n = Number(m[1]);
      const next = n > 1 ? `../${n - 1}/${m[2]}` : `/files/${m[2]}`;
      return new Response(null, { status: 302, headers: { location: next } });
    }
    if ((m = path.match(/^\/away\/(.+)$/))) {
      return new Response(null, { status: 307, headers: { location: `${state.awayBase}/files/${m[1]}` } });
    }
    if (path === "/loop") return new Response(null, { status: 302, headers: { location: "/loop" } });
    if ((m = path.match(/^\/status\/(\d+)$/))) return new Response("nope", { status: Number(m[1]) });
    if ((m = path.match(/^\/cut\/(.+)$/))) {
      const bytes = state.files.get(m[1]);
      if (!bytes) return new Response("missing", { status: 404 });
      if (cutDone.has(m[1])) return serveBytes(req, bytes);
      cutDone.add(m[1]);
      const half = bytes.subarray(0, bytes.length >> 1);
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(half);
        },
        pull(c) {
          c.close(); // shorter than content-length: the connection ends mid-body
        },
      });
      return new Response(body, { headers: { "content-length": String(bytes.length) } });
    }
    return new Response("not found", { status: 404 });
  });
  state.url = `http://127.0.0.1:${server.addr.port}`;
  state.close = () => server.shutdown();
  return state;
}

/** 200 with the bytes, or 206 for a `Range: bytes=N-` request, or 416 past the end. */
function serveBytes(req: Request, bytes: Uint8Array | undefined): Response {
  if (!bytes) return new Response("missing", { status: 404 });
  const m = req.headers.get("range")?.match(/^bytes=(\d+)-$/);
  if (!m) return new Response(bytes.slice(), { headers: { "content-length": String(bytes.length) } });
  const start = Number(m[1]);
  if (start >= bytes.length) {
    return new Response(null, { status: 416, headers: { "content-range": `bytes */${bytes.length}` } });
  }
  return new Response(bytes.slice(start), {
    status: 206,
    headers: {
      "content-range": `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
      "content-length": String(bytes.length - start),
    },
  });
}
