// Worker side of the grading pool: grades batches and publishes the position of the answer in progress
// through shared memory, so the pool can tell exactly which answer is stuck.
import { grade, type GradeOptions, type GradeResult } from "./grade.ts";
import type { GradeManyItem } from "./pool.ts";

/** A batch message from the pool; `progress[slot]` receives 1 + the position being graded. */
export interface BatchMessage {
  batch: number;
  items: GradeManyItem[];
  progress: SharedArrayBuffer;
  slot: number;
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
    const { batch, items, progress, slot } = e.data;
    const counter = new Int32Array(progress);
    const results = items.map((it, k) => {
      Atomics.store(counter, slot, k + 1);
      return gradeOne(it.prediction, it.gold, { strict: it.strict });
    });
    Atomics.store(counter, slot, 0);
    scope.postMessage({ batch, results });
  };
}

if (import.meta.main) serveBatches(grade);
