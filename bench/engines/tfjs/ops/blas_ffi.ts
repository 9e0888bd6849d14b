// The BLAS's C interface as Deno FFI symbols, and one sgemm call as plain numbers: shared by the tfjs kernels
// (ops/blas.ts) and the helper threads that run some of their calls (ops/blas_threads.ts), which load no tfjs.

/** cblas enum values (cblas.h). */
const ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112;

/** The symbols acebench uses; the OpenBLAS extras are optional (other BLASes lack them). */
const SYMBOLS = {
  // (order, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
  cblas_sgemm: {
    parameters: [
      ...["i32", "i32", "i32", "i32", "i32", "i32", "f32"] as const,
      ...["usize", "i32", "usize", "i32", "f32", "usize", "i32"] as const,
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

/** A call's fields in the order a shared task table holds them (`writeCall`/`readCall`). */
const CALL_FIELDS = ["transA", "transB", "m", "n", "k", "alpha", "a", "lda", "b", "ldb", "c", "ldc"] as const;
/** Numbers per call in a shared task table. */
export const CALL_SLOTS = CALL_FIELDS.length;

/**
 * One product C = alpha · op(A) · op(B) (beta 0), row-major, with native byte addresses a, b, c: what one
 * cblas_sgemm call computes, and the unit of work a helper thread takes.
 */
export type GemmCall =
  & Record<"transA" | "transB", boolean>
  & Record<Exclude<typeof CALL_FIELDS[number], "transA" | "transB">, number>;

/** Run one call on the calling thread. */
export function runCall(lib: BlasLib, g: GemmCall): void {
  // A plain number for each usize: Deno's FFI takes one (addresses stay below 2^53) although its types say bigint.
  const p = (x: number) => x as unknown as bigint;
  const [ta, tb] = [g.transA ? TRANS : NO_TRANS, g.transB ? TRANS : NO_TRANS];
  lib.cblas_sgemm(ROW_MAJOR, ta, tb, g.m, g.n, g.k, g.alpha, p(g.a), g.lda, p(g.b), g.ldb, 0, p(g.c), g.ldc);
}

/** Store `g` at slot `i` of a Float64 task table (addresses stay below 2^53, so float64 holds them exactly). */
export function writeCall(t: Float64Array, i: number, g: GemmCall): void {
  for (let f = 0; f < CALL_SLOTS; f++) t[i * CALL_SLOTS + f] = +g[CALL_FIELDS[f]];
}

/** The call stored at slot `i` of a task table. */
export function readCall(t: Float64Array, i: number): GemmCall {
  const g = {} as Record<string, number | boolean>;
  CALL_FIELDS.forEach((name, f) => g[name] = t[i * CALL_SLOTS + f]);
  return { ...g, transA: g.transA === 1, transB: g.transB === 1 } as GemmCall;
}
