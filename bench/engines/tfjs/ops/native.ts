// The native kernels (ops/kernels.c): compiled at first use with the system C compiler into a shared library
// cached outside the repository, keyed by the source's and flags' hash, and called through Deno's FFI on the
// native addresses of tfjs-wasm's heap (as ops/blas.ts calls the BLAS). tfjs-wasm runs every kernel on the
// calling thread and its heap is not shared with other wasm instances; C threads can work on it in place while
// the caller waits. A machine without a compiler keeps tfjs-wasm's kernels (one line on stderr says so).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "../../../../datasets/cache.ts";

const SOURCE = fileURLToPath(new URL("./kernels.c", import.meta.url));
/**
 * Portable code for any x86-64/arm64 CPU of the kind (no -march=native: a shared cache folder may serve several
 * machines); no contraction of a*b+c into one rounding and no -ffast-math, so every sum keeps the source's order.
 */
const FLAGS = [
  ...["-O3", "-std=c11", "-fPIC", "-shared", "-pthread", "-ffp-contract=off", "-fno-fast-math"],
  // sqrtf without errno: the same values, and a loop the compiler can vectorise.
  "-fno-math-errno",
  // Never unloaded (a Deno Worker's end closes its handle): the helper threads sleep in the library's code.
  ...(Deno.build.os === "linux" ? ["-Wl,-z,nodelete"] : []),
];
/** What kernels.c's ace_version returns; a library answering otherwise is stale. */
const VERSION = 11;
const LIB_NAME = Deno.build.os === "darwin" ? "libacekernels.dylib" : "libacekernels.so";

/** `n` native addresses in a row of parameters. */
const addrs = (n: number) => Array<"usize">(n).fill("usize");

const SYMBOLS = {
  ace_version: { parameters: [], result: "i32" },
  ace_scratch_buffers: { parameters: [], result: "i32" },
  ace_decode_attention: {
    parameters: [...addrs(4), "i32", "i32", "i32", "i32", "i32", "f32", "i32"],
    result: "void",
  },
  ace_causal_softmax: { parameters: [...addrs(2), "i32", "i32", "i32"], result: "void" },
  ace_causal_softmax_grad: { parameters: [...addrs(3), "i32", "i32", "i32"], result: "void" },
  ace_layer_norm: { parameters: [...addrs(6), "i32", "i32", "i32"], result: "void" },
  ace_token_scores: { parameters: [...addrs(4), "i32", "i32", "i32"], result: "void" },
  ace_token_scores_grad: { parameters: [...addrs(5), "i32", "i32", "i32"], result: "void" },
  ace_draw: { parameters: [...Array<"buffer">(4).fill("buffer"), "i32", "i32", "i32"], result: "void" },
  ace_use_blas: { parameters: ["buffer"], result: "i32" },
  ace_decode_step: { parameters: ["buffer", ...Array<"i32">(8).fill("i32")], result: "void" },
  ace_generate: {
    parameters: ["buffer", "buffer", ...addrs(3), ...Array<"i32">(10).fill("i32")],
    result: "void",
  },
  ace_adam: {
    parameters: [...addrs(7), "i32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "i32"],
    result: "void",
  },
} as const;

/** The library's functions. */
export type NativeLib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

let lib: NativeLib | null = null;
/** The loaded library: its path, and the compiler that built it ("cached" when found built). */
let info: { library: string; built: string } | null = null;
let loadError = "";
let active = false;
/** Whether the library calls the BLAS for whole decode steps (`loadNative`). */
let blasReached = false;
let threads = 1;

/** The cached library's path for this source and these flags: <cache>/kernels/<sha256>/libacekernels.so. */
function libraryPath(compiler: string): string {
  const hash = createHash("sha256").update(readFileSync(SOURCE)).update(FLAGS.join(" ")).update(compiler)
    .digest("hex");
  return join(cacheRoot(), "kernels", hash, LIB_NAME);
}

/** Compile kernels.c to `path` through a temporary file renamed into place (concurrent builders race harmlessly). */
async function build(compiler: string, path: string): Promise<void> {
  const dir = join(path, "..");
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `${LIB_NAME}.${Deno.pid}-${crypto.randomUUID()}.tmp`);
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(compiler, { args: [...FLAGS, "-o", tmp, SOURCE, "-lm"], stderr: "piped" })
      .output();
  } catch (e) {
    throw new Error(`${compiler} did not start (${(e as Error).message.split("\n")[0]})`);
  }
  if (!out.success) {
    rmSync(tmp, { force: true });
    const first = new TextDecoder().decode(out.stderr).split("\n").find((l) => l.trim()) ?? "";
    throw new Error(`${compiler} failed on ${SOURCE} (exit ${out.code}: ${first.trim()})`);
  }
  renameSync(tmp, path);
}

/**
 * Build (first use) and load the library, letting it call the BLAS at `blas` (the library ops/blas.ts loaded)
 * for whole decode steps (`ace_decode_step`; not where that lacks cblas_sgemm); where the library cannot be
 * loaded, one stderr line says why (then tfjs-wasm's path).
 */
export async function loadNative(blas: string): Promise<void> {
  if (lib || loadError) return;
  const compiler = Deno.env.get("ACEBENCH_CC") || "cc";
  try {
    if (typeof Deno === "undefined" || Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
      throw new Error("FFI not permitted (run deno with --allow-ffi)");
    }
    const path = libraryPath(compiler);
    const cached = existsSync(path);
    if (!cached) await build(compiler, path);
    const symbols = Deno.dlopen(path, SYMBOLS).symbols;
    if (symbols.ace_version() !== VERSION) {
      throw new Error(`${path} is stale (version ${symbols.ace_version()})`);
    }
    lib = symbols;
    info = { library: path, built: cached ? "cached" : compiler };
    blasReached = lib.ace_use_blas(new TextEncoder().encode(`${blas}\0`)) === 0;
  } catch (e) {
    loadError = (e as Error).message.split("\n")[0];
    sayOnce(
      `native kernels: off (${loadError}); decoding, attention, LayerNorm and Adam stay on tfjs-wasm's thread`,
    );
  }
}

/** Print `line` on stderr once per process: a sweep's Workers each load the library, and share the environment. */
function sayOnce(line: string): void {
  const mark = "ACEBENCH_NATIVE_OFF_SAID";
  try {
    if (Deno.env.get(mark)) return;
    Deno.env.set(mark, "1");
  } catch {
    // Without env permission every Worker says it; still one line each.
  }
  console.error(line);
}

/** Whether whole decode steps run natively (native kernels in use, and the BLAS reachable from them). */
export function nativeSteps(): boolean {
  return active && blasReached;
}

/** Why the library did not load ("" when it did, or was not tried). */
export function nativeError(): string {
  return loadError;
}

/** Route the kernels that have a native version to it (true, once loaded) or back to tfjs-wasm's (false). */
export function useNative(on: boolean): void {
  active = on && lib !== null;
}

/** The library's functions while the native kernels are in use, else null. */
export function nativeKernels(): NativeLib | null {
  return active ? lib : null;
}

/**
 * Tokens drawn at temperature 1 without truncation from rows of `logits` [u.length, vocab], row i with the
 * uniform u[i] (NaN: none), and their log-probs: drawScored's float64 arithmetic in its order (libm's exp and
 * log, so a last bit may differ from Math's); null while the native kernels are off.
 */
export function nativeDraws(logits: Float32Array, u: Float64Array, vocab: number) {
  if (!active || !lib) return null;
  const tokens = new Int32Array(u.length), logp = new Float64Array(u.length);
  lib.ace_draw(logits, u, tokens, logp, u.length, vocab, threads);
  return { tokens, logp };
}

/** The loaded library while in use (for run records), else null. */
export function nativeInfo(): typeof info {
  return active && info ? { ...info } : null;
}

/** Run native kernels on `n` threads (1 = the caller only; `setThreads` checks n); the same bits for any n. */
export function setNativeThreads(n: number): void {
  threads = n;
}

/** Threads the native kernels run on. */
export function nativeThreads(): number {
  return threads;
}
