// Seeded, splittable PRNG: every random choice in acebench goes through this module.
import { xoroshiro128plusFromState } from "pure-rand/generator/xoroshiro128plus";
import type { JumpableRandomGenerator } from "pure-rand/types/JumpableRandomGenerator";

/** A mutable seeded random stream backed by pure-rand's xoroshiro128+; state is serialisable for checkpoints. */
export class Rng {
  #gen: JumpableRandomGenerator;
  #spare: number | null = null;

  private constructor(gen: JumpableRandomGenerator) {
    this.#gen = gen;
  }

  /** A stream seeded by a 32-bit integer (non-integers and strings are hashed down first). */
  static seeded(seed: number | string): Rng {
    // pure-rand's own xoroshiro128plus(seed) puts small seeds almost verbatim into the state, so the first
    // draws of nearby seeds are correlated (and ~1.0); SplitMix32 spreads every seed over all 128 bits.
    let x = typeof seed === "number" && Number.isInteger(seed) ? seed | 0 : hash32(String(seed));
    const state: number[] = [];
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      state.push((z ^ (z >>> 16)) | 0);
    }
    return new Rng(xoroshiro128plusFromState(state));
  }

  /** Restore a stream from `state()`; the restored stream continues bit-for-bit. */
  static fromState(state: readonly number[]): Rng {
    const rng = new Rng(xoroshiro128plusFromState(state.slice(0, 4)));
    rng.#spare = state.length > 4 ? state[4] : null;
    return rng;
  }

  /** Serialisable state (four 32-bit words, plus a cached normal deviate if one is pending). */
  state(): number[] {
    const s = [...this.#gen.getState()];
    return this.#spare === null ? s : [...s, this.#spare];
  }

  /** An independent child stream (2^64 steps away); this stream moves on too, so repeated splits differ. */
  split(): Rng {
    const child = this.#gen.clone() as JumpableRandomGenerator;
    child.jump();
    this.#gen.next();
    this.#gen.jump();
    this.#gen.jump();
    return new Rng(child);
  }

  /** A child stream derived from a label, without advancing this stream (same label, same child). */
  derive(label: string | number): Rng {
    const s = this.#gen.getState();
    return Rng.seeded(hash32(`${s.join(",")}|${label}`));
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  float(): number {
    const hi = (this.#gen.next() >>> 5) * 67108864; // 27 bits
    const lo = this.#gen.next() >>> 6; // 26 bits
    return (hi + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n); n must be a positive integer below 2^32. */
  int(n: number): number {
    if (!(n >= 1) || !Number.isInteger(n)) {
      throw new RangeError(`Rng.int: n must be a positive integer, got ${n}`);
    }
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** Standard normal deviate (Box–Muller, caching the second value). */
  normal(): number {
    if (this.#spare !== null) {
      const v = this.#spare;
      this.#spare = null;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.float();
    const v = this.float();
    const r = Math.sqrt(-2 * Math.log(u));
    this.#spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** One element chosen uniformly; throws on an empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("Rng.pick: empty array");
    return items[this.int(items.length)];
  }

  /** Index drawn from unnormalised non-negative weights (a categorical sample). */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i];
    let u = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i];
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** In-place Fisher–Yates shuffle; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

/** 32-bit FNV-1a hash of a string (stable across runs and platforms). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
