// Helper threads for the BLAS products of one process: a product list is cut into single-threaded sgemm calls
// whose shapes depend only on the product (ops/blas.ts `planGemm`), and the calls are shared out to whichever
// thread is free. Every call is computed whole by one thread with OpenBLAS pinned to one thread, so the results
// are the same bits for any number of helpers (1, 2, …) and any schedule; only the wall time changes.
//
// Helpers are worker threads (OS threads of this process; node:worker_threads, whose unref lets the process
// exit while they sleep) that call the BLAS on native addresses of the caller's
// tfjs-wasm heap, which stays put while the caller waits for them. Hand-off is through a SharedArrayBuffer:
// the caller writes the calls to a table, publishes a generation, and every thread claims calls one at a time
// with a compare-and-swap on (generation, next index) until none are left.
import { Worker } from "node:worker_threads";
import { type BlasLib, CALL_SLOTS, type GemmCall, readCall, runCall, writeCall } from "./blas_ffi.ts";

/** Slots of the control block (Int32Array): generation, quit and failure flags, claims, count, done. */
export const GEN = 0, DONE = 3, QUIT = 4, FAILED = 5;
const CLAIM = 1, COUNT = 2;
/** Calls per hand-off (a claim word holds the index in 16 bits); longer lists go in chunks. */
export const MAX_CALLS = 4096;
/**
 * Loads of a shared word before a thread sleeps on it (~2 ms at ~10 ns a load): long enough to stay awake across
 * a decode step's attention (~1 ms of wasm between two products), since waking a sleeping thread costs more
 * than the half product it would take (measured: a sampling run's products
 * about 15% faster than with ~0.2 ms, in its kernel profile).
 */
const SPIN = 200_000;

/** The next unclaimed call of generation `gen`, or -1 when there is none (or the generation moved on). */
function claim(ctrl: Int32Array, gen: number): number {
  for (;;) {
    const v = Atomics.load(ctrl, CLAIM);
    if (v >>> 16 !== gen) return -1;
    const i = v & 0xffff;
    if (i >= Atomics.load(ctrl, COUNT)) return -1;
    if (Atomics.compareExchange(ctrl, CLAIM, v, v + 1) === v) return i;
  }
}

/** Claim and run calls of generation `gen` until none are left, counting each one done. */
export function work(lib: BlasLib, ctrl: Int32Array, table: Float64Array, gen: number): void {
  for (let i = claim(ctrl, gen); i >= 0; i = claim(ctrl, gen)) {
    runCall(lib, readCall(table, i));
    if (Atomics.add(ctrl, DONE, 1) + 1 === Atomics.load(ctrl, COUNT)) Atomics.notify(ctrl, DONE);
  }
}

/**
 * Wait (spinning first, then sleeping, at most `timeoutMs`) until ctrl[slot] differs from `value`; returns its
 * value then (still `value` after a timeout or a bare wake-up).
 */
export function waitChange(ctrl: Int32Array, slot: number, value: number, timeoutMs = Infinity): number {
  for (let s = 0; s < SPIN; s++) {
    const v = Atomics.load(ctrl, slot);
    if (v !== value) return v;
  }
  Atomics.wait(ctrl, slot, value, timeoutMs);
  return Atomics.load(ctrl, slot);
}

interface Pool {
  ctrl: Int32Array;
  table: Float64Array;
  workers: Worker[];
  gen: number;
}

let pool: Pool | null = null;

/** Threads the BLAS products run on: the caller plus its helpers (1 when none are started). */
export function threadCount(): number {
  return 1 + (pool?.workers.length ?? 0);
}

/**
 * Run products on `threads` threads from now on (a positive integer: the caller and threads − 1 helpers loading
 * `library`); 1 stops the helpers. Resolves once the helpers are ready; a helper that fails to start is a one-line error.
 */
export async function setBlasThreads(threads: number, library: string): Promise<void> {
  if (threads === threadCount()) return;
  stopBlasThreads();
  if (threads === 1) return;
  const ctrl = new Int32Array(new SharedArrayBuffer(8 * 4));
  const table = new Float64Array(new SharedArrayBuffer(MAX_CALLS * CALL_SLOTS * 8));
  const url = new URL("./blas_thread_worker.ts", import.meta.url);
  const workers = Array.from({ length: threads - 1 }, () => new Worker(url));
  try {
    await Promise.all(workers.map((w) =>
      new Promise<void>((resolve, reject) => {
        w.once("message", (m: string) => m === "ready" ? resolve() : reject(new Error(`blas thread: ${m}`)));
        w.once("error", (e: Error) => reject(new Error(`blas thread: ${e.message}`)));
        w.postMessage({ library, ctrl: ctrl.buffer, table: table.buffer });
      })
    ));
  } catch (e) {
    for (const w of workers) w.terminate();
    throw e;
  }
  for (const w of workers) w.unref();
  pool = { ctrl, table, workers, gen: 0 };
}

/** Stop the helper threads (products run in the caller's thread again). */
export function stopBlasThreads(): void {
  if (!pool) return;
  Atomics.store(pool.ctrl, QUIT, 1);
  Atomics.add(pool.ctrl, GEN, 1);
  Atomics.notify(pool.ctrl, GEN);
  for (const w of pool.workers) w.terminate();
  pool = null;
}

/** Run `calls` (independent products) on the caller and the helpers; returns when all are written. */
export function runCalls(lib: BlasLib, calls: GemmCall[]): void {
  if (!pool || calls.length < 2) {
    for (const g of calls) runCall(lib, g);
    return;
  }
  for (let s = 0; s < calls.length; s += MAX_CALLS) handOff(lib, pool, calls.slice(s, s + MAX_CALLS));
}

/** One generation: publish the calls, work on them too, and wait until every one is done. */
function handOff(lib: BlasLib, p: Pool, calls: GemmCall[]): void {
  const { ctrl, table } = p;
  calls.forEach((g, i) => writeCall(table, i, g));
  p.gen = (p.gen % 0x7fff) + 1;
  Atomics.store(ctrl, COUNT, calls.length);
  Atomics.store(ctrl, DONE, 0);
  Atomics.store(ctrl, CLAIM, p.gen << 16); // opens the claims: the table and count are in place
  Atomics.store(ctrl, GEN, p.gen);
  Atomics.notify(ctrl, GEN);
  work(lib, ctrl, table, p.gen);
  for (let d = Atomics.load(ctrl, DONE); d < calls.length;) {
    // A helper that threw flags it (its error is on stderr) rather than leaving this wait without an end.
    if (Atomics.load(ctrl, FAILED)) {
      stopBlasThreads();
      throw new Error(
        "blas: a helper thread failed during a product (its error is above); blasThreads 1 avoids them",
      );
    }
    d = waitChange(ctrl, DONE, d, 50);
  }
}
