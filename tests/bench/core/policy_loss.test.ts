import { assertClose, assertEquals, ok, throws } from "../../assert.ts";
import { aggregationWeights, klPenalty, policyLoss, type PolicyLossConfig } from "../../../bench/core/mod.ts";
import { Rng } from "../../../common/prng.ts";

const CFG: PolicyLossConfig = {
  clipLow: 0.2,
  clipHigh: 0.28,
  clipC: 3,
  logRatioClamp: 20,
  lossAgg: "token-mean",
  klCoef: 0,
  klType: "low_var_kl",
  entropyCoef: 0,
};

Deno.test("aggregationWeights: the four modes by hand, and all-masked rows", () => {
  const mask = [1, 1, 0, 1, 0, 0];
  const third = 1 / 3;
  assertEquals([...aggregationWeights(mask, 2, 3, "token-mean")], [third, third, 0, third, 0, 0]);
  assertEquals([...aggregationWeights(mask, 2, 3, "seq-mean-token-mean")], [0.25, 0.25, 0, 0.5, 0, 0]);
  assertEquals([...aggregationWeights(mask, 2, 3, "seq-mean-token-sum")], [0.5, 0.5, 0, 0.5, 0, 0]);
  assertEquals([...aggregationWeights(mask, 2, 3, "seq-mean-token-sum-norm")], [
    third,
    third,
    0,
    third,
    0,
    0,
  ]);
  // an empty row does not count in the sequence mean
  assertEquals([...aggregationWeights([1, 0, 0, 0], 2, 2, "seq-mean-token-mean")], [1, 0, 0, 0]);
  assertEquals([...aggregationWeights([0, 0, 0, 0], 2, 2, "token-mean")], [0, 0, 0, 0]);
  throws(() => aggregationWeights([1], 1, 1, "nope" as never), /lossAgg is 'nope'/);
});

Deno.test("policyLoss: clip-higher on a positive advantage, by hand", () => {
  // token 0: ratio 1 → −1, grad −1; token 1: ratio e^0.5 = 1.6487 > 1.28 → clipped to −1.28, grad 0
  const r = policyLoss(
    { logp: [-1, -1], oldLogp: [-1, -1.5], advantages: [1], mask: [1, 1], B: 1, T: 2 },
    CFG,
  );
  assertClose(r.loss, (-1 - 1.28) / 2, 1e-12);
  assertEquals([...r.dLogp], [-0.5, 0]);
  assertEquals(r.metrics.clipfrac, 0.5);
  assertEquals(r.metrics.clipfrac_lower, 0);
  assertClose(r.metrics.ppo_kl, -0.25, 1e-12);
});

Deno.test("policyLoss: negative advantage uses the unclipped ratio up to the dual clip", () => {
  const r = policyLoss(
    { logp: [-1, -1], oldLogp: [-1.5, -3], advantages: [-1], mask: [1, 1], B: 1, T: 2 },
    CFG,
  );
  // token 0: ratio e^0.5, loss e^0.5 (pessimistic side), grad e^0.5; token 1: ratio e^2 = 7.39 > 3 → 3, grad 0
  assertClose(r.loss, (Math.exp(0.5) + 3) / 2, 1e-12);
  assertClose(r.dLogp[0], Math.exp(0.5) / 2, 1e-12);
  assertEquals(r.dLogp[1], 0);
  assertEquals(r.metrics.clipfrac_lower, 0.5);
  const noDual = policyLoss({ logp: [-1], oldLogp: [-3], advantages: [-1], mask: [1], B: 1, T: 1 }, {
    ...CFG,
    clipC: null,
  });
  assertClose(noDual.loss, Math.exp(2), 1e-12);
});

Deno.test("policyLoss: extreme log-ratios and all-masked batches never give NaN or Infinity", () => {
  for (const [logp, old, A] of [[0, -1e6, 1], [0, -1e6, -1], [-1e6, 0, 1], [-1e6, 0, -1]]) {
    for (const clipC of [3, null]) {
      const r = policyLoss(
        { logp: [logp], oldLogp: [old], refLogp: [0], advantages: [A], mask: [1], B: 1, T: 1 },
        { ...CFG, clipC, klCoef: 0.1 },
      );
      ok(
        Number.isFinite(r.loss) && r.dLogp.every(Number.isFinite),
        `logp ${logp} old ${old} A ${A}: ${r.loss}`,
      );
    }
  }
  const empty = policyLoss({ logp: [0, 0], oldLogp: [0, 0], advantages: [1], mask: [0, 0], B: 1, T: 2 }, CFG);
  assertEquals([empty.loss, empty.metrics.clipfrac, ...empty.dLogp], [0, 0, 0, 0]);
  throws(
    () => policyLoss({ logp: [NaN], oldLogp: [0], advantages: [1], mask: [1], B: 1, T: 1 }, CFG),
    /logp\[0\] is NaN/,
  );
  throws(
    () =>
      policyLoss({ logp: [0], oldLogp: [0], advantages: [1], mask: [1], B: 1, T: 1 }, { ...CFG, klCoef: 1 }),
    /refLogp is missing/,
  );
});

Deno.test("klPenalty: k1, abs, k2, k3 and straight-through values and gradients by hand", () => {
  const at = (type: Parameters<typeof klPenalty>[2]) => {
    const r = klPenalty([-1], [-2], type);
    return [r.value[0], r.grad[0]];
  };
  assertEquals(at("k1"), [1, 1]);
  assertEquals(at("abs"), [1, 1]);
  assertEquals(at("k2"), [0.5, 1]);
  const [v3, g3] = at("low_var_kl");
  assertClose(v3, Math.exp(-1), 1e-12); // e^d − d − 1 at d = −1
  assertClose(g3, 1 - Math.exp(-1), 1e-12);
  const [v3p, g3p] = at("k3+");
  assertEquals([v3p, g3p], [v3, 1]);
  assertEquals([...klPenalty([-100], [0], "k3").value], [10]); // value clamp, gradient 0
  assertEquals([...klPenalty([-100], [0], "k3").grad], [0]);
  throws(() => klPenalty([0], [0], "k9" as never), /kl type 'k9'/);
});

Deno.test("policyLoss: dLogp matches central finite differences of the loss for every mode", () => {
  const rng = Rng.seeded(7);
  const B = 4, T = 5;
  const mask = Array.from({ length: B * T }, (_, i) => (i % T < 2 + (i / T | 0) % 3 ? 1 : 0));
  const old = Array.from({ length: B * T }, () => -1 - rng.float());
  const logp = old.map((v) => v + 0.6 * (rng.float() - 0.5));
  const ref = old.map((v) => v + 0.5 * (rng.float() - 0.5));
  const advantages = [1.2, -0.7, 0.4, -1.5];
  for (const lossAgg of ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"] as const) {
    for (const klType of ["k1", "k2", "k3"] as const) {
      const cfg = { ...CFG, lossAgg, klType, klCoef: 0.3 };
      const f = (lp: number[]) =>
        policyLoss({ logp: lp, oldLogp: old, refLogp: ref, advantages, mask, B, T }, cfg);
      const { dLogp } = f(logp);
      const h = 1e-6;
      for (let t = 0; t < B * T; t++) {
        const up = [...logp], dn = [...logp];
        up[t] += h;
        dn[t] -= h;
        assertClose(dLogp[t], (f(up).loss - f(dn).loss) / (2 * h), 1e-5, `${lossAgg}/${klType} token ${t}`);
      }
    }
    // straight-through: the k3 value with the k2 gradient
    const input = { logp, oldLogp: old, refLogp: ref, advantages, mask, B, T };
    const st = policyLoss(input, { ...CFG, lossAgg, klType: "k3+", klCoef: 0.3 });
    assertEquals(st.loss, policyLoss(input, { ...CFG, lossAgg, klType: "k3", klCoef: 0.3 }).loss);
    assertEquals([...st.dLogp], [...policyLoss(input, { ...CFG, lossAgg, klType: "k2", klCoef: 0.3 }).dLogp]);
  }
});

Deno.test("policyLoss: the entropy bonus enters the loss through the aggregation weights, not dLogp", () => {
  const input = {
    logp: [-1, -1, -1, -1],
    oldLogp: [-1, -1, -1, -1],
    advantages: [0, 0],
    mask: [1, 1, 1, 0],
    entropy: [1, 2, 3, 9],
    B: 2,
    T: 2,
  };
  const r = policyLoss(input, { ...CFG, entropyCoef: 0.1, lossAgg: "seq-mean-token-mean" });
  // per-sequence means 1.5 and 3, then their mean 2.25; the masked 9 is ignored
  assertClose(r.loss, -0.1 * 2.25, 1e-12);
  assertEquals(r.metrics.entropy, 2);
  ok(r.dLogp.every((g) => g === 0), "A = 0 and no KL: no logp gradient");
  throws(() => policyLoss({ ...input, entropy: [1] }, CFG), /entropy has length 1; expected 4/);
});
