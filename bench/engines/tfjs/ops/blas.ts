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
import { addr, type KernelArgs, type WasmBackend } from "./wasm.ts";

/** Library names tried in order when ACEBENCH_BLAS does not name one. */
const BLAS_CANDIDATES = [
  "libopenblas.so.0",
  "libopenblas.so",
  "libopenblas.dylib",
  "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
  "/usr/local/opt/openblas/lib/libopenblas.dylib",
  "libopenblas.dll",
];

const ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112;
const SYMBOLS = {
  cblas_sgemm: {
    parameters: [
      "i32",
      "i32",
      "i32",
      "i32",
      "i32",
      "i32",
      "f32",
      "usize",
      "i32",
      "usize",
      "i32",
      "f32",
      "usize",
      "i32",
    ],
    result: "void",
  },
  openblas_set_num_threads: { parameters: ["i32"], result: "void", optional: true },
  openblas_get_num_threads: { parameters: [], result: "i32", optional: true },
  openblas_get_corename: { parameters: [], result: "pointer", optional: true },
} as const;

type Lib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** The loaded library: its path, OpenBLAS core name (or "unknown") and threads per product (1). */
export interface BlasInfo {
  library: string;
  core: string;
  threads: number;
}

let lib: Lib | null = null;
let info: BlasInfo | null = null;
let loadError = "";
let active = false;
let heapBuffer: ArrayBufferLike | null = null;
let heapBase = 0;

/** dlopen the first library that loads; null with `loadError` set when none does or FFI is not permitted. */
function open(): Lib | null {
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
      lib = Deno.dlopen(path, SYMBOLS).symbols;
      const core = lib.openblas_get_corename?.();
      // Process-wide and idempotent, so every thread that loads the library may set it.
      lib.openblas_set_num_threads?.(1);
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
export function blasInfo(): BlasInfo | null {
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

/**
 * Native address of byte `offset` of the wasm heap (re-read when the heap grows and its buffer is replaced).
 * A plain number (addresses stay below 2^53): Deno's FFI takes one for a `usize` although its types say bigint.
 */
function native(be: WasmBackend, offset: number): bigint {
  const heap = be.wasm.HEAPF32;
  if (heap.buffer !== heapBuffer) {
    heapBuffer = heap.buffer;
    heapBase = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(heap)));
  }
  return (heapBase + offset) as unknown as bigint;
}

/** One product shape: C[m, n] = alpha · op(A)[m, k] · op(B)[k, n], row-major, with leading dimensions. */
interface Gemm {
  alpha?: number;
  m: number;
  n: number;
  k: number;
  transA: boolean;
  transB: boolean;
  lda: number;
  ldb: number;
}

/**
 * `batch` products C_i = op(A_i) op(B_i) at byte addresses a + i·strideA etc. (strides in floats; 0 broadcasts).
 * k = 0 writes zeros, as a product over an empty sum.
 */
export function gemmBatch(
  be: WasmBackend,
  g: Gemm,
  batch: number,
  a: number,
  b: number,
  c: number,
  strides: [number, number, number],
): void {
  if (g.m === 0 || g.n === 0) return;
  if (g.k === 0) {
    be.wasm.HEAPF32.fill(0, c / 4, c / 4 + batch * strides[2]);
    return;
  }
  const ta = g.transA ? TRANS : NO_TRANS, tb = g.transB ? TRANS : NO_TRANS;
  for (let i = 0; i < batch; i++) {
    lib!.cblas_sgemm(
      ROW_MAJOR,
      ta,
      tb,
      g.m,
      g.n,
      g.k,
      g.alpha ?? 1,
      native(be, a + 4 * i * strides[0]),
      g.lda,
      native(be, b + 4 * i * strides[1]),
      g.ldb,
      0,
      native(be, c + 4 * i * strides[2]),
      g.n,
    );
  }
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
  gemmBatch(be, g, batch, addr(be, a), addr(be, b), addr(be, out), [ar * ac, rb === 2 ? 0 : br * bc, m * n]);
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
