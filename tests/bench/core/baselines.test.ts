// The baselines added beside ACE, each against its paper's formula by hand: PSR/NSR (Zhu et al. 2025), Clip-Cov
// and KL-Cov (Cui et al. 2025, as VERL 0.7.0 computes them), and the ace-allwrong ablation.
import { assertClose, assertEquals, ok, throws } from "../../assert.ts";
import {
  aceAllWrong,
  ADV_ESTIMATORS,
  batchAdvantages,
  clipCovLoss,
  clipCovTokens,
  covCount,
  covRng,
  klCovLoss,
  klCovTokens,
  type PolicyLossConfig,
  PRESETS,
  resolveAlgo,
  softplus,
  tokenCovariance,
} from "../../../bench/core/mod.ts";
import { Rng } from "../../../common/prng.ts";

const CFG: PolicyLossConfig = {
  clipLow: 0.2,
  clipHigh: 0.2,
  clipC: 3,
  logRatioClamp: 20,
  lossAgg: "token-mean",
  klCoef: 0,
  klType: "low_var_kl",
  entropyCoef: 0,
  cov: { clipRatio: 0.0002, clipLb: 1, clipUb: 5, klRatio: 0.0002, klCoef: 0.1 },
};

Deno.test("psr and nsr: +1/0 and 0/−1 by correctness (the ends of W-REINFORCE's λ·PSR + NSR)", () => {
  const input = { rewards: [1, 0, 0, 1], groupIds: [0, 0, 1, 1], correct: [1, 0, 0, 1] };
  const opts = { normByStd: true, stdEps: 1e-6, wReinforceLambda: 0.1, passK: 4, ace: { alpha: 1 } };
  assertEquals([...ADV_ESTIMATORS.get("psr")(input, opts)], [1, 0, 0, 1]);
  const nsr = resolveAlgo("nsr");
  assertEquals([nsr.advEstimator, nsr.wReinforceLambda, nsr.klCoef], ["w_reinforce", 0, 0]);
  assertEquals([...ADV_ESTIMATORS.get(nsr.advEstimator)(input, nsr)].map((a) => a + 0), [0, -1, -1, 0]);
  throws(() => ADV_ESTIMATORS.get("psr")({ ...input, correct: [1] }, opts), /correct/);
});

Deno.test("tokenCovariance: (A − Ā)(logp − mean logp) over masked-in tokens, by hand", () => {
  // B = 2, T = 2; token 3 masked. Ā = (1 + 1 − 1)/3 = 1/3, mean logp = (−1 − 2 − 3)/3 = −2.
  const cov = tokenCovariance([-1, -2, -3, -9], [1, -1], [1, 1, 1, 0], 2, 2);
  assertClose(cov[0], (2 / 3) * 1, 1e-12);
  assertClose(cov[1], 0, 1e-12);
  assertClose(cov[2], (-4 / 3) * -1, 1e-12);
  ok(Number.isNaN(cov[3]));
  // ⌊ratio·N + u⌋: the expected count is ratio·N (0.02 tokens here: zero unless u ≥ 0.98).
  assertEquals([
    covCount(0.0002, 100, 0.5),
    covCount(0.0002, 100, 0.99),
    covCount(0.5, 7, 0),
    covCount(0.5, 7, 0.6),
  ], [
    0,
    1,
    3,
    4,
  ]);
});

Deno.test("clipCovTokens: only unclipped tokens inside (lb, ub), min(count, candidates) of them, seeded", () => {
  const cov = Float64Array.from([0.5, 1.5, 2, 4.9, 5, 3, 1, NaN]);
  const mask = [1, 1, 1, 1, 1, 1, 1, 0];
  const clipped = [false, false, false, false, false, true, false, false];
  const all = clipCovTokens(cov, mask, clipped, { clipRatio: 1, clipLb: 1, clipUb: 5 }, Rng.seeded(1));
  assertEquals(all, [1, 2, 3]); // 0.5, 5 and 1 are outside the open band; token 5 is PPO-clipped; 7 masked
  const some = clipCovTokens(cov, mask, clipped, { clipRatio: 2 / 7, clipLb: 1, clipUb: 5 }, Rng.seeded(1));
  assertEquals(some.length, 2);
  ok(some.every((t) => all.includes(t)));
  assertEquals(
    clipCovTokens(cov, mask, clipped, { clipRatio: 2 / 7, clipLb: 1, clipUb: 5 }, Rng.seeded(1)),
    some,
  );
  const draws = new Set(
    [1, 2, 3, 4, 5, 6, 7, 8].map((s) =>
      clipCovTokens(cov, mask, clipped, { clipRatio: 1 / 7, clipLb: 1, clipUb: 5 }, Rng.seeded(s)).join()
    ),
  );
  ok(draws.size > 1, "the draw depends on the seed");
  throws(
    () => clipCovTokens(cov, mask, clipped, { clipRatio: 0, clipLb: 1, clipUb: 5 }, Rng.seeded(1)),
    /clipRatio/,
  );
});

Deno.test("klCovTokens: the top ⌊ratio·N + u⌋ covariances, ties to the lower index", () => {
  const cov = Float64Array.from([0.1, 3, -2, 3, NaN, 2]);
  const mask = [1, 1, 1, 1, 0, 1];
  assertEquals(klCovTokens(cov, mask, 0.6, Rng.seeded(1)), [1, 3, 5]); // 0.6·5 = 3 tokens whatever u is
  assertEquals(klCovTokens(cov, [0, 0, 0, 0, 0, 0], 0.5, Rng.seeded(1)), []);
  // A ratio below one token per batch touches one token on that share of batches (the expected count), not always one.
  const touched = Array.from({ length: 400 }, (_, s) => klCovTokens(cov, mask, 0.05, Rng.seeded(s)).length);
  ok(touched.every((n) => n <= 1));
  const share = touched.reduce((a, b) => a + b, 0) / 400;
  ok(Math.abs(share - 0.25) < 0.07, `touched on ${share} of batches, expected 0.25`);
});

Deno.test("clip-cov and kl-cov presets: the authors' 7B recipes (ratios, clip range, no KL, dynamic sampling)", () => {
  const clip = resolveAlgo("clip-cov"), kl = resolveAlgo("kl-cov");
  assertEquals([clip.cov!.clipRatio, clip.cov!.clipLb, clip.cov!.clipUb, clip.clipLow, clip.clipHigh], [
    0.0002,
    1,
    5,
    1,
    1,
  ]);
  assertEquals([kl.cov!.klRatio, kl.cov!.klCoef, kl.clipLow, kl.clipHigh], [0.002, 1, 0.2, 0.2]);
  for (const a of [clip, kl]) ok(a.klCoef === 0 && a.dynamicSampling.enabled && a.lossAgg === "token-mean");
});

/** A batch where token 1 is the only one in Clip-Cov's band and has the largest covariance. */
function covBatch() {
  // B = 2, T = 2. A = [2, −2] → Ā = 0; logp = [0, −0.1, −4, −4] → mean −2.025.
  // cov = 2·(2.025, 1.925), −2·(−1.975, −1.975) = [4.05, 3.85, 3.95, 3.95]; token 0's ratio e^0.3 > 1.2 is clipped.
  return {
    logp: [0, -0.1, -4, -4],
    oldLogp: [-0.3, -0.15, -4.05, -3.9],
    advantages: [2, -2],
    mask: [1, 1, 1, 1],
    B: 2,
    T: 2,
  };
}

Deno.test("clip-cov: PPO's clipped token loss without dual clip, zero loss and gradient on the detached token", () => {
  const input = covBatch();
  const cfg = { ...CFG, cov: { ...CFG.cov!, clipRatio: 0.25, clipUb: 3.9 } }; // band (1, 3.9): token 1 only
  const r = clipCovLoss(input, cfg);
  const ratios = input.logp.map((l, t) => Math.exp(l - input.oldLogp[t]));
  // token 0: A = 2, ratio e^0.3 → clipped at 1.2, loss −2.4, grad 0; token 1 detached: 0;
  // tokens 2, 3: A = −2, loss 2·ratio (inside the clip range for e^0.05 and e^−0.1 → 2·max(r, 0.8)), grad 2·r.
  const expected = (-2.4 + 0 + 2 * ratios[2] + 2 * Math.max(ratios[3], 0.8)) / 4;
  assertClose(r.loss, expected, 1e-12);
  assertEquals(r.dLogp[0], 0);
  assertEquals(r.dLogp[1], 0);
  assertClose(r.dLogp[2], (2 * ratios[2]) / 4, 1e-12);
  assertClose(r.dLogp[3], (2 * ratios[3]) / 4, 1e-12);
  // Dual clip is not applied: a huge ratio with A < 0 keeps loss −A·r.
  const big = clipCovLoss({ ...input, oldLogp: [-0.3, -0.15, -8, -3.9] }, cfg);
  assertClose(big.loss - r.loss, (2 * Math.exp(4) - 2 * ratios[2]) / 4, 1e-9);
  throws(() => clipCovLoss(input, { ...CFG, cov: undefined }), /needs algo\.cov/);
});

Deno.test("kl-cov: unclipped −A·r plus β·|log r| on the top-covariance token, gradient by finite differences", () => {
  const input = covBatch();
  const cfg = { ...CFG, cov: { ...CFG.cov!, klRatio: 0.25, klCoef: 0.5 } }; // one token: the top one, token 0
  const r = klCovLoss(input, cfg);
  const lr = input.logp.map((l, t) => l - input.oldLogp[t]);
  const expected = (-2 * Math.exp(lr[0]) + 0.5 * Math.abs(lr[0]) - 2 * Math.exp(lr[1]) +
    2 * Math.exp(lr[2]) + 2 * Math.exp(lr[3])) / 4;
  assertClose(r.loss, expected, 1e-12);
  const h = 1e-6;
  for (let t = 0; t < 4; t++) {
    // token 0 stays the top-covariance token for a small step of its own logp
    const up = input.logp.slice(), down = input.logp.slice();
    up[t] += h;
    down[t] -= h;
    const fd = (klCovLoss({ ...input, logp: up }, cfg).loss - klCovLoss({ ...input, logp: down }, cfg).loss) /
      (2 * h);
    assertClose(r.dLogp[t], fd, 1e-6, `token ${t}`);
  }
  assertEquals(r.metrics.clipfrac, 0);
});

Deno.test("clip-cov: the same mini-batch detaches the same tokens (seeded by its sampling-time log-probs)", () => {
  const rng = Rng.seeded(5);
  const B = 8, T = 16;
  const logp = Array.from({ length: B * T }, () => -rng.float() * 3);
  const input = {
    logp,
    oldLogp: logp.map((l) => l + 0.01 * rng.normal()),
    advantages: Array.from({ length: B }, () => 3 * rng.normal()),
    mask: logp.map(() => 1),
    B,
    T,
  };
  const cfg = { ...CFG, cov: { ...CFG.cov!, clipRatio: 0.05 } };
  assertEquals(clipCovLoss(input, cfg), clipCovLoss(input, cfg));
  assertEquals(covRng(input.oldLogp).float(), covRng(input.oldLogp.slice()).float());
  const zeroed = clipCovLoss(input, cfg).dLogp.filter((g) => g === 0).length;
  ok(zeroed >= 1 && zeroed <= covCount(0.05, B * T, 1) + 2, `${zeroed} zero gradients`);
});

Deno.test("ace-allwrong: all-wrong groups get −α·φ(c); mixed groups are ACE's; other groups unchanged", () => {
  const ace = { ...PRESETS["ace-allwrong"].ace, alpha: 2 };
  ok(ace.enabled && ace.allWrong === true);
  const correct = [0, 0, 0, 1, 0, 1, 1, 0];
  const groupIds = [0, 0, 0, 1, 1, 2, 2, 3];
  const c = [0.5, -1, 3, 0.2, 1, 0, 0, 4];
  const adv = [0, 0, 0, 0.7, -0.7, 0, 0, 0];
  const out = aceAllWrong(adv, correct, groupIds, c, ace);
  for (let i = 0; i < 3; i++) assertClose(out[i], -2 * softplus(c[i]), 1e-12);
  assertEquals([...out.slice(3)], [0.7, -0.7, 0, 0, 0]); // a singleton group (3) is left alone
  assertEquals([...aceAllWrong(adv, correct, groupIds, c, { ...ace, allWrong: false })], adv);
  // Through the step: mixed groups get ACE's multiplier, the all-wrong group the ablation's term.
  const algo = resolveAlgo("ace-allwrong");
  const T = 1, B = 6;
  const step = batchAdvantages({
    rewards: [0, 0, 0, 1, 0, 1].map(Number),
    correct: [0, 0, 0, 1, 0, 1],
    groupIds: [0, 0, 0, 1, 1, 1],
    oldLogp: [-0.1, -0.2, -0.3, -0.4, -0.5, -0.6],
    refLogp: [-0.6, -0.2, -0.1, -0.4, -1.5, -0.6],
    mask: [1, 1, 1, 1, 1, 1],
    B,
    T,
  }, algo);
  for (let i = 0; i < 3; i++) assertClose(step.finalAdvantages[i], -softplus(step.c[i]), 1e-12);
  assertClose(step.finalAdvantages[4], step.advantages[4] * (1 + softplus(1)), 1e-12);
  assertEquals(step.finalAdvantages[3], step.advantages[3]);
});

Deno.test("baseline presets resolve through the registries with their one change from GRPO", () => {
  assertEquals(resolveAlgo("clip-cov").policyLoss, "clip_cov");
  assertEquals(resolveAlgo("kl-cov").policyLoss, "kl_cov");
  assertEquals(resolveAlgo("psr").advEstimator, "psr");
  assertEquals(resolveAlgo("clip-cov", { "cov.clipRatio": 0.01 }).cov!.clipRatio, 0.01);
  throws(() => resolveAlgo("grpo", { policyLoss: "clip-cov" }), /'clip-cov' is not registered/);
  throws(() => resolveAlgo("kl-cov", { cov: { klRatio: 0 } }), /klRatio/);
});

Deno.test("w-reinforce-ace: λ = 1/(mean ACE multiplier over the batch's incorrect rollouts), −1 on each of them", () => {
  const correct = [1, 0, 0, 1];
  const c = [5, 1, -1, 7];
  const algo = resolveAlgo("w-reinforce-ace");
  const adv = ADV_ESTIMATORS.get(algo.advEstimator)(
    { rewards: correct, groupIds: [0, 0, 1, 1], correct, c },
    algo,
  );
  const m = (2 + softplus(1) + softplus(-1)) / 2; // α = 1
  assertClose(adv[0], 1 / m, 1e-12);
  assertClose(adv[3], 1 / m, 1e-12);
  assertEquals([adv[1], adv[2]], [-1, -1]);
  throws(
    () => ADV_ESTIMATORS.get(algo.advEstimator)({ rewards: correct, groupIds: [0, 0, 1, 1], correct }, algo),
    /needs the confidence shift/,
  );
});
