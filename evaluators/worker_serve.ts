// Worker side of the grading pool, independent of the grader: grades batches with a given function and
// publishes the position of the answer in progress through shared memory, so the pool can tell which is stuck.
import type { GradeOptions, GradeResult } from "./grade.ts";

/** One answer to grade, with the per-item options of `grade`. */
export interface GradeManyItem extends GradeOptions {
  prediction: string;
  gold: string;
}

/** A batch message from the pool; `progress[0]` receives 1 + the position being graded (0 when idle). */
export interface BatchMessage {
  batch: number;
  items: GradeManyItem[];
  progress: SharedArrayBuffer;
}

/** Answer batches on this worker with `gradeOne` (tests substitute a grader that can hang). */
export function serveBatches(
  gradeOne: (prediction: string, gold: string, options: GradeOptions) => GradeResult,
): void {
  const scope = self as unknown as {
    onmessage: (e: MessageEvent<BatchMessage>) => void;
    postMessage(m: unknown): void;
  };
  scope.onmessage = (e) => {
    const { batch, items, progress } = e.data;
    const counter = new Int32Array(progress);
    const results = items.map((it, k) => {
      Atomics.store(counter, 0, k + 1);
      return gradeOne(it.prediction, it.gold, it);
    });
    Atomics.store(counter, 0, 0);
    scope.postMessage({ batch, results });
  };
}
