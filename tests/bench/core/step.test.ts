// The pure step pieces (bench/core/step.ts) and the registered advantage estimators, by hand and by definition.
import { assertClose, assertEquals, ok, throws } from "../../assert.ts";
import {
  ADV_ESTIMATORS,
  batchAdvantages,
  fitOverlongBuffer,
  groupAdvantages,
  groupIdsOf,
  informativeGroup,
  meanUpdates,
  miniBatchRows,
  passkAdvantages,
  PRESETS,
  resolveAlgo,
  rlooAdvantages,
  scoreRollouts,
  wReinforceAdvantages,
} from "../../../bench/core/mod.ts";
import { Rng } from "../../../common/prng.ts";

const OPTIONS = { normByStd: true, stdEps: 1e-6, wReinforceLambda: 0.1, passK: 4, ace: { alpha: 1 } };

Deno.test("scoreRollouts: reward scheme, overlong penalty over the recorded buffer, no shaping without lengths", () => {
  const on = { rewardScheme: "pm1" as const, overlong: { enabled: true, buffer: 4, factor: 1 } };
  assertEquals([...scoreRollouts([1, 0, 1], [10, 20, 18], 20, on)], [1, -2, 0.5]);
  assertEquals([...scoreRollouts([1, 0], null, 20, on)], [1, -1]);
  assertEquals([...scoreRollouts([true, false], [20, 20], 20, { ...on, rewardScheme: "binary" })], [0, -1]);
  throws(() => scoreRollouts([1], [3], 3, on), /overlong.buffer is 4; expected 0 < buffer ≤ maxLen \(3\)/);
  assertEquals([fitOverlongBuffer(4096, 32), fitOverlongBuffer(8, 32), fitOverlongBuffer(4096, 2)], [
    8,
    8,
    1,
  ]);
});

Deno.test("informativeGroup: mixed verdicts or a singleton; one definition for booleans and 0/1", () => {
  assertEquals([[1, 0], [true, true], [0, 0, 0], [1], [false, false, true]].map(informativeGroup), [
    true,
    false,
    false,
    true,
    true,
  ]);
});

Deno.test("miniBatchRows: whole groups, balanced, never more parts than groups", () => {
  const ids = groupIdsOf([2, 2, 2, 2, 2]);
  assertEquals([...ids], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
  assertEquals(miniBatchRows(ids, 1), [[0, 10]]);
  assertEquals(miniBatchRows(ids, 2), [[0, 4], [4, 10]]);
  assertEquals(miniBatchRows(ids, 4), [[0, 2], [2, 4], [4, 6], [6, 10]]);
  assertEquals(miniBatchRows(groupIdsOf([3, 1]), 8), [[0, 3], [3, 4]]);
});

Deno.test("meanUpdates: means over updates skipping nulls, the last gradient norm", () => {
  const m = (loss: number, kl: number | null, gradNorm: number | null) => ({
    loss,
    gradNorm,
    metrics: { pg_loss: loss, clipfrac: 0, clipfrac_lower: 0, ppo_kl: 0, kl, entropy: null },
  });
  const r = meanUpdates([m(1, null, 3), m(3, 2, 5)]);
  assertEquals([r.loss, r.metrics.kl, r.metrics.entropy, r.gradNorm], [2, 2, null, 5]);
  throws(() => meanUpdates([]), /no updates/);
});

Deno.test("RLOO: each advantage is the reward minus the mean of the other rollouts of its group", () => {
  const rng = Rng.seeded(5);
  const rewards = Array.from({ length: 12 }, () => rng.int(3) - 1);
  const groupIds = groupIdsOf([4, 4, 3, 1]);
  const adv = rlooAdvantages({ rewards, groupIds, correct: rewards.map((r) => r > 0) });
  rewards.forEach((r, i) => {
    const others = rewards.filter((_, j) => j !== i && groupIds[j] === groupIds[i]);
    const expected = others.length ? r - others.reduce((a, b) => a + b, 0) / others.length : r;
    assertClose(adv[i], expected, 1e-12, `rollout ${i}`);
  });
  // Leave-one-out differs from GRPO's centring by the factor n/(n−1) within each group.
  const centred = groupAdvantages(rewards, groupIds, { normByStd: false, stdEps: 0 });
  for (let i = 0; i < 8; i++) assertClose(adv[i], centred[i] * 4 / 3, 1e-12);
});

Deno.test("grpo_passk (VERL, Tang et al.): only the group's best rollout, r_max − r_second (÷ std when normalised)", () => {
  const rewards = [1, 0, 0, 0, 1, 1, 0, 0];
  const groupIds = groupIdsOf([4, 4]);
  const input = { rewards, groupIds, correct: rewards };
  const std = Math.sqrt(((1 - 0.25) ** 2 + 3 * 0.25 ** 2) / 3);
  const grpoPassk = ADV_ESTIMATORS.get("grpo_passk");
  const normed = grpoPassk(input, OPTIONS);
  assertClose(normed[0], 1 / (std + 1e-6), 1e-12);
  assertEquals([...normed.slice(1)], [0, 0, 0, 0, 0, 0, 0]); // two correct: r_max − r_second = 0
  assertEquals([...grpoPassk(input, { ...OPTIONS, normByStd: false })], [1, 0, 0, 0, 0, 0, 0, 0]);
  throws(() => grpoPassk({ rewards: [1], groupIds: [0], correct: [1] }, OPTIONS), /≥ 2 rollouts/);
});

Deno.test("passk (Chen et al. 2025): the analytical Pass@k advantage, by hand", () => {
  // Group of N = 8 with 2 correct, k = 4. R̄ = 1 − C(6,4)/C(8,4) = 1 − 15/70 = 11/14; σ = √(11/14 · 3/14).
  // Correct: (1 − R̄)/σ = (3/14)/σ. Incorrect: (1 − R̄ − C(5,3)/C(7,3))/σ = (3/14 − 10/35)/σ = (3/14 − 2/7)/σ.
  const correct = [1, 1, 0, 0, 0, 0, 0, 0];
  const input = { rewards: correct, groupIds: groupIdsOf([8]), correct };
  const adv = passkAdvantages(input, OPTIONS);
  const sigma = Math.sqrt((11 / 14) * (3 / 14)) + 1e-6; // the authors' code divides by σ + 1e-6
  assertClose(adv[0], (3 / 14) / sigma, 1e-12);
  assertClose(adv[1], (3 / 14) / sigma, 1e-12);
  for (let i = 2; i < 8; i++) assertClose(adv[i], (3 / 14 - 2 / 7) / sigma, 1e-12);
  ok(adv[2] < 0, "an incorrect rollout of a mixed group is pushed down");
  // k = 1 is GRPO with the population std: correct (1 − p)/√(p(1−p)), incorrect −p/√(p(1−p)), p = 1/4.
  const k1 = passkAdvantages(input, { ...OPTIONS, passK: 1 });
  const p = 0.25, s1 = Math.sqrt(p * (1 - p)) + 1e-6;
  assertClose(k1[0], (1 - p) / s1, 1e-12);
  assertClose(k1[5], -p / s1, 1e-12);
  // No signal where every k-subset already passes (N_neg < k), where all agree, or where none is correct.
  const easy = [1, 1, 1, 1, 1, 0, 0, 0]; // 3 incorrect < k = 4
  assertEquals(
    [...passkAdvantages({ rewards: easy, groupIds: groupIdsOf([8]), correct: easy }, OPTIONS)],
    Array(8).fill(0),
  );
  const none = Array(8).fill(0);
  assertEquals(
    [...passkAdvantages({ rewards: none, groupIds: groupIdsOf([8]), correct: none }, OPTIONS)],
    none,
  );
  throws(
    () => passkAdvantages({ rewards: [1, 0], groupIds: [0, 0], correct: [1, 0] }, OPTIONS),
    /k = 4 ≤ the group size/,
  );
});

Deno.test("W-REINFORCE: λ for a correct rollout, −1 for an incorrect one, whatever the reward scale", () => {
  const adv = wReinforceAdvantages({ rewards: [1, -1, 1], groupIds: [0, 0, 1], correct: [1, 0, 1] }, OPTIONS);
  assertEquals([...adv], [0.1, -1, 0.1]);
});

Deno.test("estimator registry: presets select estimators by name; ACE rescales after any of them", () => {
  assertEquals(
    ["grpo", "dr-grpo", "rloo", "passk", "grpo-passk", "w-reinforce"].map((p) => PRESETS[p].advEstimator),
    ["grpo", "grpo", "rloo", "passk", "grpo_passk", "w_reinforce"],
  );
  const dr = PRESETS["dr-grpo"];
  ok(!dr.normByStd && dr.lossAgg === "seq-mean-token-sum-norm" && dr.klCoef === 0); // Liu et al.: --beta 0
  throws(
    () => ADV_ESTIMATORS.get("gae"),
    /advEstimator is 'gae'; expected grpo, rloo, passk, grpo_passk, w_reinforce/,
  );
  const rollouts = {
    rewards: [1, 0, 0, 0],
    correct: [1, 0, 0, 0],
    groupIds: [0, 0, 0, 0],
    oldLogp: [-1, -0.5, -2, -0.1],
    refLogp: [-1, -1, -1, -1],
    mask: [1, 1, 1, 1],
    B: 4,
    T: 1,
  };
  const algo = resolveAlgo("ace-grpo", { advEstimator: "w_reinforce" });
  const out = batchAdvantages(rollouts, algo);
  assertEquals([...out.advantages], [0.1, -1, -1, -1]);
  assertEquals([...out.c], [0, 0.5, -1, 0.9]);
  ok(
    out.finalAdvantages[1] < -1 && out.finalAdvantages[3] < out.finalAdvantages[1],
    "ACE: more confident, more penalty",
  );
});
