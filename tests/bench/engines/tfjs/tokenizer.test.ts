import { assertEquals, ok, throws } from "../../../assert.ts";
import {
  cutAtEos,
  encodePrompts,
  makeTokenizer,
  Tokenizer,
} from "../../../../bench/engines/tfjs/tokenizer.ts";

Deno.test("char tokenizer: round-trips printable ASCII and reserves PAD/BOS/EOS", () => {
  const tok = makeTokenizer("char");
  assertEquals([tok.pad, tok.bos, tok.eos], [0, 1, 2]);
  assertEquals(tok.vocabSize, 98);
  const text = "gcd(12,18)=18%12=6;\\boxed{6} ~";
  const ids = tok.encode(text);
  assertEquals(ids.length, text.length);
  ok(ids.every((i) => i >= 3 && i < tok.vocabSize));
  assertEquals(tok.decode(ids), text);
  assertEquals(tok.decode([tok.bos, ...ids, tok.eos, tok.pad]), text);
});

Deno.test("char tokenizer: unknown characters and duplicate alphabets are one-line errors", () => {
  const tok = makeTokenizer("char");
  throws(() => tok.encode("3×4"), /character "×" at 1 is not in the vocabulary/);
  throws(() => new Tokenizer("bad", "abca"), /duplicate character 'a'/);
  throws(() => makeTokenizer("bpe"), /unknown kind 'bpe'/);
});

Deno.test("encodePrompts: BOS + text, left-padded to a common length; too long throws", () => {
  const tok = makeTokenizer("char");
  const rows = encodePrompts(tok, ["1+2=", "10%3="], 8);
  assertEquals(rows.length, 16);
  assertEquals([...rows.subarray(0, 8)], [0, 0, 0, tok.bos, ...tok.encode("1+2=")]);
  assertEquals([...rows.subarray(8, 16)], [0, 0, tok.bos, ...tok.encode("10%3=")]);
  throws(() => encodePrompts(tok, ["123456789"], 8), /needs 10 tokens, promptLength is 8/);
});

Deno.test("cutAtEos: stops at the first EOS and says whether it was reached", () => {
  const tok = makeTokenizer("char");
  const ids = tok.encode("ab");
  assertEquals(cutAtEos(tok, [...ids, tok.eos, ...ids]), { ids, stopped: true });
  assertEquals(cutAtEos(tok, ids), { ids, stopped: false });
});
