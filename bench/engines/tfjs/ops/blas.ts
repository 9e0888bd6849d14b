// Dense products on the system BLAS (cblas_sgemm through Deno's FFI), on tensors where tfjs-wasm keeps them.
//
// tfjs-wasm multiplies with XNNPACK's 128-bit SIMD kernels, without fused multiply-add, on one thread
// (~16–24 GFLOP/s measured); a BLAS such as OpenBLAS uses AVX2/AVX-512 FMA (100–180 GFLOP/s per core on the same
// machine), and is what PyTorch's CPU path links. The `blas` backend is tfjs-wasm with its BatchMatMul kernel,
// and the attention products, replaced by cblas_sgemm calls on the wasm heap: no copies, every other kernel
// unchanged. A product's bits depend on the BLAS's kernels and on its thread count (measured: 1 and 2 threads
// differ in the last bits). The kernels are the ones OpenBLAS picks for the CPU (recorded with each run;
// OPENBLAS_CORETYPE, set before the process starts, picks others); the thread count is pinned to one per
// product, in the calling thread, so cores are used as on wasm, by data-parallel workers and parallel sweep
// runs, and a config and seed give the same numbers on a machine for any number of workers or sweep lanes.
import * as tf from "@tensorflow/tfjs-core";
import { existsSync } from "node:fs";
import { addr, heapAddress, type KernelArgs, type WasmBackend } from "./wasm.ts";
import { type BlasLib, type GemmCall, openBlas } from "./blas_ffi.ts";
import { setNativeThreads } from "./native.ts";
import { runCalls, setBlasThreads, stopBlasThreads, threadCount } from "./blas_threads.ts";

/** Library names tried in order when ACEBENCH_BLAS does not name one. */
const BLAS_CANDIDATES = [
  "libopenblas.so.0",
  "libopenblas.so",
  "libopenblas.dylib",
  "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
  "/usr/local/opt/openblas/lib/libopenblas.dylib",
  "libopenblas.dll",
];

let lib: BlasLib | null = null;
/** The loaded library: its path, OpenBLAS core name (or "unknown") and threads per product (1). */
let info: { library: string; core: string; threads: number } | null = null;
let loadError = "";
let active = false;

/** dlopen the first library that loads; null with `loadError` set when none does or FFI is not permitted. */
function open(): BlasLib | null {
  if (lib || loadError) return lib;
  if (typeof Deno === "undefined" || Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
    loadError = "FFI not permitted (run deno with --allow-ffi)";
    return null;
  }
  const named = Deno.env.get("ACEBENCH_BLAS");
  const tried: string[] = [];
  for (const path of named ? [named] : BLAS_CANDIDATES) {
    if (path.startsWith("/") && !existsSync(path)) {
      tried.push(`${path}: no such file`);
      continue;
    }
    try {
      lib = openBlas(path);
      const core = lib.openblas_get_corename?.();
      info = {
        library: path,
        core: core ? Deno.UnsafePointerView.getCString(core) : "unknown",
        threads: lib.openblas_get_num_threads?.() ?? 1,
      };
      return lib;
    } catch (e) {
      tried.push(`${path}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  loadError = named
    ? `ACEBENCH_BLAS did not load (${tried.join("; ")})`
    : `no BLAS library found (tried ${
      BLAS_CANDIDATES.join(", ")
    }); install OpenBLAS (Debian: apt-get install libopenblas0) or set ACEBENCH_BLAS to its path`;
  return null;
}

/** The loaded BLAS, or null; `blasError()` says why not. Loads it on first call. */
export function blasInfo(): typeof info {
  open();
  return info && { ...info };
}

/** Why the BLAS could not be loaded ("" when it was, or was not tried yet). */
export function blasError(): string {
  return loadError;
}

/** Route tfjs-wasm's dense products to the BLAS (true) or back to tfjs-wasm's own kernels (false). */
export function useBlas(on: boolean): void {
  if (on && !open()) throw new Error(`blas backend: ${loadError}`);
  active = on;
}

/** Whether dense products on the wasm backend currently go to the BLAS. */
export function blasActive(): boolean {
  return active && lib !== null && tf.getBackend() === "wasm";
}

/** One product shape: C[m, n] = alpha (default 1) · op(A)[m, k] · op(B)[k, n], row-major, ldc = n. */
type Gemm = Omit<GemmCall, "a" | "b" | "c" | "ldc" | "alpha"> & { alpha?: number };

/** With splitting on, a single product at least this large (2·m·n·k FLOPs) is cut in two row blocks. */
export const SPLIT_FLOPS = 1 << 21;
/** Row blocks start at multiples of this (the BLAS kernels' row tiles). */
const ROW_TILE = 16;

let splitting = false;

/**
 * The sgemm calls that compute `batch` products C_i = alpha · op(A_i) op(B_i) (addresses `abc` + i·strides,
 * strides in floats, 0 broadcasts): one call per product, and with `split` a single product of at least
 * SPLIT_FLOPS in two row blocks, so that two threads can share it. A row's result depends on the rows in its
 * call (measured on OpenBLAS), so splitting changes the last bits; the cut depends on the shapes only, so for a
 * given `split` the bits are the same on any number of threads.
 */
export function planGemm(g: Gemm, batch: number, abc: number[], strides: number[], split: boolean) {
  const [a, b, c] = abc;
  const call = (i: number): GemmCall => ({
    ...g,
    alpha: g.alpha ?? 1,
    a: a + 4 * i * strides[0],
    b: b + 4 * i * strides[1],
    c: c + 4 * i * strides[2],
    ldc: g.n,
  });
  if (!split || batch > 1 || 2 * g.m * g.n * g.k < SPLIT_FLOPS || g.m < 2 * ROW_TILE) {
    return Array.from({ length: batch }, (_, i) => call(i));
  }
  const whole = call(0), top = Math.ceil(g.m / 2 / ROW_TILE) * ROW_TILE;
  // Rows of op(A) are columns of a transposed A: the lower block starts `top` floats in, else `top` rows in.
  const aRows = g.transA ? 4 * top : 4 * top * g.lda;
  return [
    { ...whole, m: top },
    { ...whole, m: g.m - top, a: whole.a + aRows, c: whole.c + 4 * top * g.n },
  ];
}

/**
 * `n` products C_i = op(A_i) op(B_i) of the tfjs-wasm tensors a, b into c, at i·strideA etc. (strides in
 * floats; 0 broadcasts), on the BLAS threads (`setThreads`). k = 0 writes zeros, as a product over an empty sum.
 */
export function gemmBatch(be: WasmBackend, g: Gemm, n: number, abc: tf.TensorInfo[], strides: number[]) {
  if (g.m === 0 || g.n === 0) return;
  const [a, b, c] = abc.map((t) => addr(be, t));
  if (g.k === 0) {
    be.wasm.HEAPF32.fill(0, c / 4, c / 4 + n * strides[2]);
    return;
  }
  const base = heapAddress(be);
  runCalls(lib!, planGemm(g, n, [base + a, base + b, base + c], strides, splitting));
}

/**
 * Run this process's BLAS products as `threads` asks: 1 = one call per product, in the calling thread (the
 * default); more = large products cut in two (`planGemm`) and shared with up to threads − 1 helper threads,
 * never more threads than `cores`. The bits depend only on whether `threads` is 1, never on the threads started.
 */
export async function setThreads(threads: number, cores = navigator.hardwareConcurrency ?? 1): Promise<void> {
  if (!open()) throw new Error(`blas backend: ${loadError}`);
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`blas threads must be a positive integer, got ${threads}`);
  }
  const started = Math.max(1, Math.min(threads, cores));
  await setBlasThreads(started, info!.library);
  setNativeThreads(started);
  splitting = threads > 1;
}

/** Threads the BLAS products run on now, and whether large products are cut in two (`setThreads`). */
export function threadsInUse(): { threads: number; split: boolean } {
  return { threads: threadCount(), split: splitting };
}

/** Back to one call per product in the calling thread: the helpers stop. */
export function stopThreads(): void {
  splitting = false;
  stopBlasThreads();
  setNativeThreads(1);
}

/** Cut large products as a process with `setThreads(n > 1)` does, on this thread alone (data-parallel workers). */
export function setSplit(on: boolean): void {
  splitting = on;
}

/** tfjs-wasm's own BatchMatMul kernel, kept for what the BLAS path does not take (other dtypes, broadcasting). */
let tfjsBatchMatMul: tf.KernelFunc | null = null;

/** BatchMatMul for float32 a [..., m, k], b [..., k, n] with equal batch shapes or a 2-D b (transpose flags). */
function batchMatMulKernel(args: KernelArgs): tf.TensorInfo {
  const { inputs: { a, b }, backend, attrs } = args;
  const be = backend as WasmBackend, ra = a.shape.length, rb = b.shape.length;
  const batchShape = a.shape.slice(0, -2), batch = batchShape.reduce((x, y) => x * y, 1);
  const sameBatch = rb === 2 || (ra === rb && b.shape.slice(0, -2).every((d, i) => d === batchShape[i]));
  if (!blasActive() || a.dtype !== "float32" || b.dtype !== "float32" || ra < 2 || !sameBatch) {
    return tfjsBatchMatMul!(args as unknown as Parameters<tf.KernelFunc>[0]) as tf.TensorInfo;
  }
  const { transposeA, transposeB } = attrs as { transposeA: boolean; transposeB: boolean };
  const [ar, ac] = a.shape.slice(-2), [br, bc] = b.shape.slice(-2);
  const [m, k] = transposeA ? [ac, ar] : [ar, ac], [kb, n] = transposeB ? [bc, br] : [br, bc];
  if (k !== kb) {
    throw new Error(`BatchMatMul: inner sizes ${k} and ${kb} of [${a.shape}] and [${b.shape}] differ`);
  }
  const out = be.makeOutput([...batchShape, m, n], "float32");
  const g = { m, n, k, transA: transposeA, transB: transposeB, lda: ac, ldb: bc };
  gemmBatch(be, g, batch, [a, b, out], [ar * ac, rb === 2 ? 0 : br * bc, m * n]);
  return out;
}

/** Put the BLAS kernel in front of tfjs-wasm's BatchMatMul (idempotent); it defers to tfjs's when inactive. */
export function registerBlasKernels(): void {
  if (tfjsBatchMatMul) return;
  const own = tf.getKernel("BatchMatMul", "wasm");
  if (!own) throw new Error("blas backend: tfjs-wasm has no BatchMatMul kernel to replace");
  tfjsBatchMatMul = own.kernelFunc;
  tf.unregisterKernel("BatchMatMul", "wasm");
  tf.registerKernel({ ...own, kernelFunc: batchMatMulKernel as unknown as tf.KernelFunc });
}
