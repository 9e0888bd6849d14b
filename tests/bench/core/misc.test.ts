import { assertClose, assertEquals, ok, rejects, throws } from "../../assert.ts";
import {
  dynamicSample,
  errorClassDiagnostics,
  overlongPenalty,
  PRESETS,
  resolveAlgo,
  trainingDiagnostics,
} from "../../../bench/core/mod.ts";

Deno.test("dynamicSample: refills to the batch size, truncates the surplus, caps the rounds", async () => {
  let next = 0;
  const rounds: number[] = [];
  const gen = (round: number) => {
    rounds.push(round);
    return Promise.resolve([next++, next++, next++]);
  };
  const odd = (g: number) => g % 2 === 1; // odd numbers are "informative"
  const full = await dynamicSample(gen, odd, 4, 10);
  assertEquals(full, { groups: [1, 3, 5, 7], rounds: 3, generatedGroups: 9 });
  assertEquals(rounds, [0, 1, 2]);
  next = 0;
  await rejects(() => dynamicSample(gen, odd, 10, 2), /only 3\/10 informative groups after 2 rounds/);
  next = 0;
  const partial = await dynamicSample(gen, odd, 10, 2, "partial");
  assertEquals(partial, { groups: [1, 3, 5], rounds: 2, generatedGroups: 6 });
  next = 0;
  assertEquals((await dynamicSample(gen, odd, 10, 0)).groups.length, 10); // ≤ 0: unlimited
});

Deno.test("overlongPenalty: zero before the buffer, linear to −factor at the maximum length", () => {
  assertEquals([...overlongPenalty([10, 16, 18, 20], 20, 4, 1)], [0, 0, -0.5, -1]);
  assertEquals([...overlongPenalty([19], 20, 4, 2)], [-1.5]);
  throws(() => overlongPenalty([1], 20, 0, 1), /overlong.buffer/);
});

Deno.test("presets: DAPO's published defaults, ACE variants, and validated overrides", () => {
  const dapo = PRESETS.dapo;
  assertEquals([dapo.clipLow, dapo.clipHigh, dapo.clipC, dapo.lossAgg, dapo.klCoef], [
    0.2,
    0.28,
    10,
    "token-mean",
    0,
  ]);
  ok(dapo.dynamicSampling.enabled && !dapo.ace.enabled && dapo.rewardScheme === "pm1");
  const grpo = PRESETS.grpo;
  assertEquals([grpo.clipLow, grpo.clipHigh, grpo.normByStd, grpo.stdEps], [0.2, 0.2, true, 1e-6]);
  ok(!grpo.dynamicSampling.enabled && !grpo.ace.enabled);
  assertEquals(PRESETS["ace-grpo"].ace, {
    enabled: true,
    alpha: 1,
    phi: "softplus",
    aggregation: "sum",
    clip: null,
  });
  ok(PRESETS["ace-dapo"].ace.enabled && PRESETS["ace-dapo"].clipHigh === 0.28);
  const a = resolveAlgo("ace-grpo", { "ace.alpha": 2, ace: { phi: "relu", clip: 5 }, clipC: null });
  assertEquals([a.ace.alpha, a.ace.phi, a.ace.clip, a.clipC], [2, "relu", 5, null]);
  assertEquals(PRESETS["ace-grpo"].ace.alpha, 1); // presets are not mutated
  throws(() => resolveAlgo("ppo"), /preset 'ppo' is unknown/);
  throws(
    () => resolveAlgo("grpo", { "ace.beta": 1 }),
    /algo \(preset grpo\): ace: must NOT have additional properties 'beta'/,
  );
  throws(() => resolveAlgo("grpo", { clipLow: "0.2" }), /clipLow: must be number/);
  throws(
    () => resolveAlgo("grpo", { "ace.phi": "tanh" }),
    /ace.phi: must be equal to one of the allowed values \(softplus, relu, uniform, batch-mean\)/,
  );
  throws(() => resolveAlgo("grpo", { clipC: 0.5 }), /clipC: must be > 1/);
  throws(
    () => resolveAlgo("grpo", { advEstimator: "gae" }),
    /advEstimator: 'gae' is not registered \(grpo, rloo/,
  );
  throws(
    () => resolveAlgo("grpo", { policyLoss: "gspo" }),
    /policyLoss: 'gspo' is not registered \(vanilla, clip_cov, kl_cov\)/,
  );
});

Deno.test("trainingDiagnostics: reward, ACE overconfidence fraction, mean c and multiplier by hand", () => {
  const metrics = { pg_loss: 0.1, clipfrac: 0, clipfrac_lower: 0, ppo_kl: 0, kl: 0.01, entropy: 1.5 };
  const d = trainingDiagnostics({
    rewards: [1, 0, 0, 0],
    correct: [1, 0, 0, 0],
    advantages: [1.5, -0.5, -0.5, -0.5],
    finalAdvantages: [1.5, -1, -0.75, -0.5],
    c: [0.3, 1, -1, 2],
    groupsKeptFrac: 0.5,
    loss: 0.2,
    metrics,
  });
  assertEquals([d.reward_mean, d.accuracy, d.groups_kept_frac, d.entropy, d.kl], [
    0.25,
    0.25,
    0.5,
    1.5,
    0.01,
  ]);
  assertClose(d.ace_overconf_frac!, 2 / 3, 1e-12);
  assertEquals(d.ace_overconf_mean_c, 1.5);
  assertEquals(d.ace_multiplier, 1.5);
  const none = trainingDiagnostics({
    rewards: [1],
    correct: [1],
    advantages: [0],
    finalAdvantages: [0],
    c: null,
    groupsKeptFrac: 1,
    loss: 0,
    metrics,
  });
  assertEquals([none.ace_overconf_frac, none.ace_overconf_mean_c, none.ace_multiplier], [null, null, null]);
});

Deno.test("errorClassDiagnostics: count, mean c and share with c > 0 per class of incorrect rollout", () => {
  const out = errorClassDiagnostics([0, 0, 1, 0, 0], ["shortcut", "other", "shortcut", "shortcut", "other"], [
    2,
    -1,
    9,
    -0.5,
    0.5,
  ]);
  assertEquals(out, {
    err_other_n: 2,
    err_other_c: -0.25,
    err_other_overconf: 0.5,
    err_shortcut_n: 2,
    err_shortcut_c: 0.75,
    err_shortcut_overconf: 0.5,
  });
});
