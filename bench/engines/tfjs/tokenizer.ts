// The tfjs policy's tokenizer: one id per printable ASCII character, after the three special tokens.

const PAD = 0, BOS = 1, EOS = 2, FIRST_CHAR = 3;
/** Printable ASCII (space to tilde): enough for compact arithmetic prompts, traces and `\boxed{}`. */
const ASCII = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");

/**
 * The engine's tokenizer (settings name one kind, "char"): text <-> token ids, one id per character of a fixed
 * alphabet after PAD=0 (left of prompts, right of finished responses; never trained on), BOS=1 (before every
 * prompt) and EOS=2 (a response ends when it is sampled).
 */
export class Tokenizer {
  readonly pad = PAD;
  readonly bos = BOS;
  readonly eos = EOS;
  /** Number of distinct ids (special tokens included); ids are 0..vocabSize-1. */
  readonly vocabSize: number;
  readonly #ids = new Map<string, number>();

  constructor(readonly kind: string, readonly alphabet: string) {
    for (const ch of alphabet) {
      if (this.#ids.has(ch)) throw new Error(`tokenizer ${kind}: duplicate character '${ch}' in alphabet`);
      this.#ids.set(ch, FIRST_CHAR + this.#ids.size);
    }
    this.vocabSize = FIRST_CHAR + this.#ids.size;
  }

  /** Ids of the characters of `text` (no special tokens); the error names a character outside the vocabulary. */
  encode(text: string): number[] {
    return [...text].map((ch, i) => {
      const id = this.#ids.get(ch);
      if (id === undefined) {
        throw new Error(
          `tokenizer ${this.kind}: character ${JSON.stringify(ch)} at ${i} is not in the vocabulary`,
        );
      }
      return id;
    });
  }

  /** Characters of the ids, skipping PAD/BOS/EOS and anything out of range. */
  decode(ids: ArrayLike<number>): string {
    const chars = [...this.alphabet];
    let out = "";
    for (let i = 0; i < ids.length; i++) {
      const c = chars[ids[i] - FIRST_CHAR];
      if (c !== undefined) out += c;
    }
    return out;
  }
}

/** The tokenizer named in settings; "char" is printable ASCII (vocab 98). */
export function makeTokenizer(kind: string): Tokenizer {
  if (kind === "char") return new Tokenizer("char", ASCII);
  throw new Error(`tokenizer: unknown kind '${kind}' (known: char)`);
}

/**
 * Prompts as a row-major Int32Array [B, length]: BOS + prompt ids, left-padded with PAD so every prompt ends at
 * the same position (the model then needs no padding mask). Throws if a prompt does not fit.
 */
export function encodePrompts(tok: Tokenizer, prompts: readonly string[], length: number): Int32Array {
  const out = new Int32Array(prompts.length * length).fill(tok.pad);
  prompts.forEach((text, b) => {
    const ids = [tok.bos, ...tok.encode(text)];
    if (ids.length > length) {
      throw new Error(`prompt ${JSON.stringify(text)} needs ${ids.length} tokens, promptLength is ${length}`);
    }
    out.set(ids, b * length + length - ids.length);
  });
  return out;
}

/** Ids of a response up to (excluding) the first EOS, and whether EOS was reached. */
export function cutAtEos(tok: Tokenizer, ids: ArrayLike<number>): { ids: number[]; stopped: boolean } {
  const all = Array.from(ids), end = all.indexOf(tok.eos);
  return end < 0 ? { ids: all, stopped: false } : { ids: all.slice(0, end), stopped: true };
}
