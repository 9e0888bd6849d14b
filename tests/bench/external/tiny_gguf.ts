// A tiny random-weight llama-architecture model in GGUF (v3, F32), written from scratch (no download), for the
// llama-server conformance test. Its vocabulary is llama.cpp's SentencePiece kind: <unk>, <s>, </s>, the 256
// byte-fallback tokens (any prompt tokenizes) and the printable ASCII characters. Its output layer leans to
// digits, spaces and </s>, so replies are short digit strings that sometimes hit a small integer answer, and
// Pass@k depends on how the server truncates the distribution (top_k, min_p).
// As a script: deno run --allow-write tests/bench/external/tiny_gguf.ts OUT.gguf
import { Rng } from "../../../common/prng.ts";

/** Shape of the written model. */
export interface TinyGgufOptions {
  /** Embedding width (a multiple of `heads`). */
  embd?: number;
  layers?: number;
  heads?: number;
  ff?: number;
  /** Trained context length recorded in the file (llama-server's -c may not exceed it usefully). */
  context?: number;
  seed?: number;
}

// GGUF value types (ggml/include/gguf.h).
const T = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
const ALIGN = 32;
const F32 = 0; // ggml_type GGML_TYPE_F32
const TOKEN = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

type KV = [string, "u32" | "f32" | "bool" | "string", number | boolean | string] | [
  string,
  "strings" | "f32s" | "i32s",
  (string | number)[],
];

/** A growable little-endian byte buffer with GGUF's primitive writers. */
class Bytes {
  #buf = new Uint8Array(1 << 16);
  #view = new DataView(this.#buf.buffer);
  length = 0;
  #room(n: number) {
    if (this.length + n <= this.#buf.length) return;
    const next = new Uint8Array(Math.max(this.#buf.length * 2, this.length + n));
    next.set(this.#buf);
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }
  u32(v: number) {
    this.#room(4);
    this.#view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number) {
    this.#room(4);
    this.#view.setInt32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number) {
    this.#room(8);
    this.#view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  f32(v: number) {
    this.#room(4);
    this.#view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  u8(v: number) {
    this.#room(1);
    this.#buf[this.length++] = v;
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.#room(b.length);
    this.#buf.set(b, this.length);
    this.length += b.length;
  }
  pad() {
    while (this.length % ALIGN) this.u8(0);
  }
  bytes(): Uint8Array {
    return this.#buf.slice(0, this.length);
  }
}

function writeKv(out: Bytes, [key, kind, value]: KV): void {
  out.str(key);
  if (kind === "strings" || kind === "f32s" || kind === "i32s") {
    out.u32(T.array);
    out.u32(kind === "strings" ? T.string : kind === "f32s" ? T.f32 : T.i32);
    const list = value as (string | number)[];
    out.u64(list.length);
    for (const v of list) {
      if (kind === "strings") out.str(v as string);
      else if (kind === "f32s") out.f32(v as number);
      else out.i32(v as number);
    }
    return;
  }
  out.u32(T[kind]);
  if (kind === "string") out.str(value as string);
  else if (kind === "bool") out.u8(value ? 1 : 0);
  else if (kind === "f32") out.f32(value as number);
  else out.u32(value as number);
}

/** The vocabulary: specials, byte fallback, "▁" (SentencePiece's space) and printable ASCII. */
function tinyVocab(): { tokens: string[]; types: number[] } {
  const tokens = ["<unk>", "<s>", "</s>"];
  const types: number[] = [TOKEN.unknown, TOKEN.control, TOKEN.control];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TOKEN.byte);
  }
  tokens.push("\u2581");
  types.push(TOKEN.normal);
  for (let c = 0x21; c < 0x7f; c++) {
    tokens.push(String.fromCharCode(c));
    types.push(TOKEN.normal);
  }
  return { tokens, types };
}

/**
 * Output bias per token, carried by embedding dimension 0 (constant 1 in every embedding): digits most likely,
 * then space and </s>, other characters rarely, byte and control tokens never.
 */
function outputBias(token: string, index: number): number {
  if (index === 2) return 5; // </s>
  if (index < 259) return -30;
  if (/^[0-9]$/.test(token)) return 3;
  if (token === "\u2581") return 1;
  return -1;
}

/** The GGUF file's bytes: a random llama model with the vocabulary above. Deterministic in `opts.seed`. */
export function tinyGguf(opts: TinyGgufOptions = {}): Uint8Array {
  const embd = opts.embd ?? 32, layers = opts.layers ?? 2, heads = opts.heads ?? 4, ff = opts.ff ?? 64;
  const context = opts.context ?? 512;
  const rng = Rng.seeded(`tiny-gguf|${opts.seed ?? 0}`);
  const { tokens, types } = tinyVocab();
  const V = tokens.length;
  const normal = (n: number, std: number) => Array.from({ length: n }, () => rng.normal() * std);
  const tensors: [string, number[], number[]][] = [];
  // token_embd [embd, V] (ne0 = embd): dimension 0 is the constant that carries the output bias.
  const emb = Array.from({ length: V }, () => [1, ...normal(embd - 1, 1)]).flat();
  tensors.push(["token_embd.weight", [embd, V], emb]);
  for (let l = 0; l < layers; l++) {
    const p = `blk.${l}.`;
    tensors.push([`${p}attn_norm.weight`, [embd], Array(embd).fill(1)]);
    for (const m of ["attn_q", "attn_k", "attn_v", "attn_output"]) {
      tensors.push([`${p}${m}.weight`, [embd, embd], normal(embd * embd, 0.05)]);
    }
    tensors.push([`${p}ffn_norm.weight`, [embd], Array(embd).fill(1)]);
    tensors.push([`${p}ffn_gate.weight`, [embd, ff], normal(embd * ff, 0.05)]);
    tensors.push([`${p}ffn_up.weight`, [embd, ff], normal(embd * ff, 0.05)]);
    tensors.push([`${p}ffn_down.weight`, [ff, embd], normal(ff * embd, 0.05)]);
  }
  tensors.push(["output_norm.weight", [embd], Array(embd).fill(1)]);
  const out = tokens.map((t, v) => [outputBias(t, v), ...normal(embd - 1, 0.3)]).flat();
  tensors.push(["output.weight", [embd, V], out]);

  const kvs: KV[] = [
    ["general.architecture", "string", "llama"],
    ["general.name", "string", "acebench-tiny"],
    ["llama.context_length", "u32", context],
    ["llama.embedding_length", "u32", embd],
    ["llama.block_count", "u32", layers],
    ["llama.feed_forward_length", "u32", ff],
    ["llama.attention.head_count", "u32", heads],
    ["llama.attention.head_count_kv", "u32", heads],
    ["llama.rope.dimension_count", "u32", embd / heads],
    ["llama.attention.layer_norm_rms_epsilon", "f32", 1e-5],
    ["tokenizer.ggml.model", "string", "llama"],
    ["tokenizer.ggml.tokens", "strings", tokens],
    ["tokenizer.ggml.scores", "f32s", tokens.map(() => 0)],
    ["tokenizer.ggml.token_type", "i32s", types],
    ["tokenizer.ggml.bos_token_id", "u32", 1],
    ["tokenizer.ggml.eos_token_id", "u32", 2],
    ["tokenizer.ggml.unknown_token_id", "u32", 0],
    ["tokenizer.ggml.add_bos_token", "bool", true],
    // The user's messages as they are: the chat route then sees the same text as the completions route.
    [
      "tokenizer.chat_template",
      "string",
      "{% for message in messages %}{{ message['content'] }}{% endfor %}",
    ],
  ];
  const head = new Bytes();
  head.u32(0x46554747); // "GGUF" little-endian
  head.u32(3);
  head.u64(tensors.length);
  head.u64(kvs.length);
  for (const kv of kvs) writeKv(head, kv);
  let offset = 0;
  for (const [name, shape, data] of tensors) {
    head.str(name);
    head.u32(shape.length);
    for (const d of shape) head.u64(d);
    head.u32(F32);
    head.u64(offset);
    offset += Math.ceil((data.length * 4) / ALIGN) * ALIGN;
  }
  head.pad();
  for (const [, , data] of tensors) {
    for (const x of data) head.f32(x);
    head.pad();
  }
  return head.bytes();
}

if (import.meta.main) {
  const path = Deno.args[0];
  if (!path) {
    console.error("usage: deno run --allow-write tests/bench/external/tiny_gguf.ts OUT.gguf");
    Deno.exit(2);
  }
  Deno.writeFileSync(path, tinyGguf());
  console.log(`wrote ${path}`);
}
