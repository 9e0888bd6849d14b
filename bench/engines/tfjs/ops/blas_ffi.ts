// The BLAS's C interface as Deno FFI symbols, and one sgemm call as plain numbers: shared by the tfjs kernels
// (ops/blas.ts) and the helper threads that run some of their calls (ops/blas_threads.ts), which load no tfjs.

/** cblas enum values (cblas.h). */
const ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112;

/** The symbols acebench uses; the OpenBLAS extras are optional (other BLASes lack them). */
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

/** The loaded library's symbols. */
export type BlasLib = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** Load `path` and pin OpenBLAS to one thread per product (process-wide, idempotent); throws if it does not load. */
export function openBlas(path: string): BlasLib {
  const lib = Deno.dlopen(path, SYMBOLS).symbols;
  lib.openblas_set_num_threads?.(1);
  return lib;
}

/**
 * One product C = alpha · op(A) · op(B) (beta 0), row-major, with native byte addresses a, b, c: what one
 * cblas_sgemm call computes, and the unit of work a helper thread takes.
 */
export interface GemmCall {
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  alpha: number;
  a: number;
  lda: number;
  b: number;
  ldb: number;
  c: number;
  ldc: number;
}

/** Numbers per call in a shared task table (`writeCall`/`runCallAt`). */
export const CALL_SLOTS = 12;

/** Store `g` at slot `i` of a Float64 task table (addresses stay below 2^53, so float64 holds them exactly). */
export function writeCall(table: Float64Array, i: number, g: GemmCall): void {
  table.set(
    [+g.transA, +g.transB, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.c, g.ldc],
    i * CALL_SLOTS,
  );
}

/** Run the call stored at slot `i` of a task table. */
export function runCallAt(lib: BlasLib, table: Float64Array, i: number): void {
  const o = i * CALL_SLOTS, t = table;
  // A plain number for each usize: Deno's FFI takes one (addresses stay below 2^53) although its types say bigint.
  const p = (x: number) => x as unknown as bigint;
  lib.cblas_sgemm(
    ROW_MAJOR,
    t[o] ? TRANS : NO_TRANS,
    t[o + 1] ? TRANS : NO_TRANS,
    t[o + 2],
    t[o + 3],
    t[o + 4],
    t[o + 5],
    p(t[o + 6]),
    t[o + 7],
    p(t[o + 8]),
    t[o + 9],
    0,
    p(t[o + 10]),
    t[o + 11],
  );
}
