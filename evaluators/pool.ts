// gradeMany: a pool of Deno Workers (one per core) grading batches, with a hard per-answer timeout. A stuck
// worker is terminated and replaced; its current answer is marked `timeout`, the rest of its batch re-queued.
import { grade, type GradeResult } from "./grade.ts";
import type { BatchMessage, GradeManyItem } from "./worker_serve.ts";

export type { GradeManyItem } from "./worker_serve.ts";

/** Default per-answer grading timeout in ms (a stuck answer is marked `timeout` after it). */
export const GRADE_TIMEOUT_MS = 2000;

/**
 * Pool options: `workers` (default: cores; 0 grades inline), `timeoutMs` per answer, `batchSize` per message,
 * `retries`: how many times a stuck answer is retried alone on a fresh worker before it is ungraded (default 1).
 */
export interface GradeManyOptions {
  workers?: number;
  timeoutMs?: number;
  batchSize?: number;
  retries?: number;
}

// One worker and its own progress cell. A terminated worker may run on for a while (Deno lets it finish its
// current task before stopping the isolate), so a replacement never shares the cell its predecessor writes.
function spawn(workerUrl: string) {
  return {
    worker: new Worker(workerUrl, { type: "module" }),
    counter: new Int32Array(new SharedArrayBuffer(4)),
    busy: null as { batch: number; indices: number[] } | null,
    lastProgress: 0,
    lastChange: 0,
  };
}

/** A reusable grading pool; call `close()` when done (workers are real threads). */
export class GraderPool {
  readonly size: number;
  #slots: ReturnType<typeof spawn>[] = [];
  #running = false;

  readonly #workerUrl: string;

  /** Start `size` workers (default: navigator.hardwareConcurrency); `workerUrl` swaps the worker (tests). */
  constructor(
    size = navigator.hardwareConcurrency || 1,
    workerUrl = new URL("./grade_worker.ts", import.meta.url).href,
  ) {
    this.size = Math.max(1, Math.floor(size));
    this.#workerUrl = workerUrl;
    for (let s = 0; s < this.size; s++) this.#slots.push(spawn(this.#workerUrl));
  }

  /**
   * Grade items in order; an answer stuck for `timeoutMs` (default 2000) is retried once, alone, on a fresh
   * worker, and only then marked `timeout` (ungraded: `verdictOf`), so a loaded machine does not decide it.
   * Every input gets exactly one verdict: a result is recorded only once, whichever worker reports it.
   * `options.workers` is ignored: a pool keeps the size it was started with.
   */
  grade(items: readonly GradeManyItem[], options: GradeManyOptions = {}): Promise<GradeResult[]> {
    if (this.#running) return Promise.reject(new Error("GraderPool.grade: one call at a time per pool"));
    if (this.#slots.length === 0) return Promise.reject(new Error("GraderPool.grade: the pool is closed"));
    const timeoutMs = options.timeoutMs ?? GRADE_TIMEOUT_MS;
    const batchSize = Math.max(
      1,
      options.batchSize ?? Math.min(256, Math.ceil(items.length / (this.size * 4))),
    );
    const results: (GradeResult | undefined)[] = new Array(items.length);
    const queue: number[][] = [];
    for (let i = 0; i < items.length; i += batchSize) {
      queue.push(Array.from({ length: Math.min(batchSize, items.length - i) }, (_, k) => i + k));
    }
    let remaining = items.length;
    let batchId = 0;
    const retries = options.retries ?? 1;
    const retried = new Map<number, number>();
    return new Promise((resolve, reject) => {
      if (remaining === 0) return resolve([]);
      this.#running = true;
      let done = false;
      const stop = () => {
        done = true;
        clearInterval(timer);
        this.#running = false;
      };
      const finish = () => {
        stop();
        resolve(results as GradeResult[]);
      };
      const settle = (i: number, r: GradeResult) => {
        if (results[i] !== undefined) return;
        results[i] = r;
        remaining--;
      };
      // Queued indices that already have a verdict are dropped, so no answer is graded into two results.
      const dispatch = (s: number) => {
        const slot = this.#slots[s];
        let indices: number[] | undefined;
        while ((indices = queue.shift()) !== undefined) {
          indices = indices.filter((i) => results[i] === undefined);
          if (indices.length > 0) break;
        }
        if (!indices) return;
        const batch = batchId++;
        slot.busy = { batch, indices };
        slot.lastProgress = 0;
        slot.lastChange = performance.now();
        Atomics.store(slot.counter, 0, 0);
        const msg: BatchMessage = {
          batch,
          items: indices.map((i) => items[i]),
          progress: slot.counter.buffer,
        };
        slot.worker.postMessage(msg);
      };
      const next = (s: number) => (remaining === 0 ? finish() : dispatch(s));
      const attach = (s: number) => {
        const slot = this.#slots[s];
        slot.worker.onmessage = (e: MessageEvent<{ batch: number; results: GradeResult[] }>) => {
          // Only the live worker's current batch counts (a replaced worker's late message is ignored).
          if (done || this.#slots[s] !== slot || slot.busy?.batch !== e.data.batch) return;
          slot.busy.indices.forEach((i, k) => settle(i, e.data.results[k]));
          slot.busy = null;
          next(s);
        };
        slot.worker.onerror = (e) => {
          e.preventDefault();
          if (done) return;
          stop();
          reject(new Error(`grade worker failed: ${e.message}`));
        };
      };
      // Watchdog: a worker whose progress counter has not moved for timeoutMs is stuck on that answer.
      const watch = (s: number, now: number) => {
        const slot = this.#slots[s];
        if (!slot.busy) return;
        const p = Atomics.load(slot.counter, 0);
        if (p !== slot.lastProgress) {
          slot.lastProgress = p;
          slot.lastChange = now;
          return;
        }
        if (p === 0 || now - slot.lastChange < timeoutMs) return;
        const { indices } = slot.busy;
        const stuck = indices[Math.min(p, indices.length) - 1];
        // Answers before the stuck one were graded but not reported; regrade them with the rest.
        const rest = indices.filter((i) => i !== stuck);
        if (rest.length > 0) queue.unshift(rest);
        const tries = retried.get(stuck) ?? 0;
        if (tries >= retries) {
          const rule = `timeout_${timeoutMs}ms` +
            (tries ? ` (retried ${tries}× alone on a fresh worker)` : "");
          settle(stuck, { correct: false, status: "timeout", extracted: null, rule });
        } else {
          // A verdict must not depend on the machine's load: retry, alone, on the fresh worker first.
          retried.set(stuck, tries + 1);
          queue.unshift([stuck]);
        }
        slot.busy = null;
        slot.worker.terminate();
        this.#slots[s] = spawn(this.#workerUrl);
        attach(s);
        next(s);
      };
      const timer = setInterval(() => {
        const now = performance.now();
        for (let s = 0; s < this.#slots.length && !done; s++) watch(s, now);
      }, Math.max(5, Math.min(100, timeoutMs / 4)));
      for (let s = 0; s < this.#slots.length; s++) {
        attach(s);
        dispatch(s);
      }
    });
  }

  /** Terminate every worker. */
  close(): void {
    for (const slot of this.#slots) slot.worker.terminate();
    this.#slots = [];
  }
}

/**
 * Grade many answers, results in input order, on a fresh pool of workers (default one per core) with the hard
 * per-answer timeout, closed before returning. `workers: 0` grades inline (no timeout: only the input caps bound
 * the time), which is faster for small trusted batches. For repeated calls keep a `GraderPool`.
 */
export async function gradeMany(
  items: readonly GradeManyItem[],
  options: GradeManyOptions = {},
): Promise<GradeResult[]> {
  const workers = options.workers ?? (navigator.hardwareConcurrency || 1);
  if (workers === 0) {
    return items.map((it) => grade(it.prediction, it.gold, it));
  }
  const pool = new GraderPool(Math.min(workers, Math.max(1, Math.ceil(items.length / 16))));
  try {
    return await pool.grade(items, options);
  } finally {
    pool.close();
  }
}
