// Input guards shared by the RL core: a NaN or a wrong length must fail loudly, naming the field.

/** Numeric array types the core accepts (typed arrays or plain arrays). */
export type Num = ArrayLike<number>;

/** Throw unless `values` has `length` entries (when given), all finite (no NaN, ±Infinity), naming the field. */
export function assertFinite(field: string, values: Num, length?: number): void {
  if (length !== undefined) assertLength(field, values, length);
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) {
      throw new RangeError(`${field}[${i}] is ${values[i]}; expected a finite number`);
    }
  }
}

/** Throw unless `values` has exactly `length` entries, naming the field. */
export function assertLength(field: string, values: { length: number }, length: number): void {
  if (values.length !== length) {
    throw new RangeError(`${field} has length ${values.length}; expected ${length}`);
  }
}

/** Throw unless B and T are positive integers (T may be any length ≥ 1). */
export function assertShape(B: number, T: number): void {
  if (!Number.isInteger(B) || B < 0 || !Number.isInteger(T) || T < 1) {
    throw new RangeError(`bad shape [B=${B}, T=${T}]; expected integers B ≥ 0, T ≥ 1`);
  }
}
