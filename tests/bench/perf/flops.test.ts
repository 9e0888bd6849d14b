// `bench model`'s FLOP counts (bench/perf/flops.ts) against a count by hand, and the profile's five-way split.
import { assertEquals } from "../../assert.ts";
import {
  forwardFlops,
  gemmFlops,
  matmulParams,
  sampleFlopsPerToken,
  trainFlopsPerToken,
} from "../../../bench/perf/flops.ts";
import { OVERHEAD, splitStep } from "../../../bench/perf/profile.ts";
import { createModel, disposeModel, initBackend, parameterCount } from "../../../bench/engines/tfjs/model.ts";
import { Rng } from "../../../common/prng.ts";

// vocab 4, width 2, one head, one layer, context 3: small enough to list every product.
const TINY = { vocab: 4, dModel: 2, heads: 1, layers: 1, context: 3 };

Deno.test("flops: per trained and sampled token on a tiny config, counted by hand", () => {
  // Per token, 2 FLOPs per weight of each product: qkv 2x6 -> 24, proj 2x2 -> 8, up 2x8 -> 32, down 8x2 -> 32,
  // tied head 2x4 -> 16: 112.
  const body = 24 + 8 + 32 + 32, head = 16;
  assertEquals(2 * matmulParams(TINY), body + head);
  // Attention at k keys: QK^T 2*k*d and A.V 2*k*d, d = 2: 8k.
  assertEquals(forwardFlops(TINY, 3), body + head + 8 * 3);
  // Training on 3-token sequences: positions attend 1, 2, 3 keys, so attention is 8*(1+2+3)/3 = 16 per token;
  // forward 128, forward+backward 3x.
  assertEquals(trainFlopsPerToken(TINY), 3 * (body + head + 16));
  // Sampling 2 new tokens after a 2-token prompt: the prompt's two tokens (1 and 2 keys) with the head on the
  // last only, then one decode step at 3 keys (the second new token is never fed back): per new token / 2.
  const prefill = (body + 8) + (body + 16) + head, decode = body + head + 24;
  assertEquals(sampleFlopsPerToken(TINY, 2, 2), (prefill + decode) / 2);
  assertEquals(sampleFlopsPerToken(TINY, 2, 2), 184);
  assertEquals(gemmFlops(1024), 2 * 1024 ** 3);
});

Deno.test("flops: matmul weights are the model's parameters less embeddings, LayerNorms (tfjs model)", async () => {
  await initBackend("cpu");
  for (const cfg of [TINY, { vocab: 64, dModel: 128, heads: 4, layers: 4, context: 64 }]) {
    const model = createModel(cfg, Rng.seeded(0));
    try {
      const { vocab, dModel: d, layers, context } = cfg;
      // wte is counted once, as the tied head; wpe and the 2L+1 LayerNorms (gain and bias) do no products.
      assertEquals(matmulParams(cfg), parameterCount(model) - context * d - (2 * layers + 1) * 2 * d);
      assertEquals(matmulParams(cfg), 12 * layers * d * d + d * vocab);
    } finally {
      disposeModel(model);
    }
  }
});

Deno.test("bench model --profile: a train step splits into five parts that add up to the wall", () => {
  const split = splitStep({
    title: "t",
    wallMs: 100,
    classes: {
      matmul: 40,
      attention: 10,
      "layer norm": 5,
      "data movement": 5,
      Adam: 15,
      "tensor bookkeeping (alloc/dispose, tape, JS)": 25,
    },
  });
  assertEquals(split.classes, {
    matmul: 40,
    attention: 10,
    "element-wise": 10,
    optimizer: 15,
    [OVERHEAD]: 25,
  });
  // PyTorch's tables have no remainder line: overhead is computed, and never negative.
  assertEquals(splitStep({ title: "t", wallMs: 10, classes: { matmul: 12 } }).classes[OVERHEAD], 0);
});
