// DAPO overlong reward shaping (arXiv 2503.14476): a linear penalty over the last `buffer` tokens of the length
// budget.
import { assertFinite, type Num } from "./check.ts";

/**
 * Per-response reward penalty (≤ 0) for lengths in tokens: 0 up to maxLen − buffer, then linear, reaching −factor at
 * maxLen (the line continues past it, as VERL). Add it to the correctness score. buffer must be in (0, maxLen].
 */
export function overlongPenalty(lengths: Num, maxLen: number, buffer: number, factor: number): Float64Array {
  assertFinite("lengths", lengths);
  if (!(buffer > 0 && buffer <= maxLen)) {
    throw new RangeError(`overlong.buffer is ${buffer}; expected 0 < buffer ≤ maxLen (${maxLen})`);
  }
  const expected = maxLen - buffer;
  const out = new Float64Array(lengths.length);
  for (let i = 0; i < lengths.length; i++) {
    const exceed = lengths[i] - expected;
    out[i] = exceed > 0 ? -(exceed / buffer) * factor : 0; // not Math.min(…, 0), which yields −0
  }
  return out;
}
