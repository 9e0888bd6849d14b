// Test assertions through node:assert/strict (the one place to swap in @std/assert later).
export { default as assert } from "node:assert/strict";
export { deepStrictEqual as assertEquals, ok, rejects, strictEqual, throws } from "node:assert/strict";

/** Assert |actual − expected| ≤ tol, with a message naming both. */
export function assertClose(actual: number, expected: number, tol = 1e-9, what = "value"): void {
  if (!(Math.abs(actual - expected) <= tol)) {
    throw new Error(`${what}: expected ${expected} ± ${tol}, got ${actual}`);
  }
}
