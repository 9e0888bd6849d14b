// The RL core's baselines mapped to VERL at plan time: each new method plans with VERL's own estimator names
// (rloo, grpo_passk; ace_verl's w_reinforce), Dr. GRPO as VERL spells it, or is refused naming the method.
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import { verlRunPlan } from "../../../../bench/engines/verl/mod.ts";
import { assertEquals, ok, throws } from "../../../assert.ts";
import { missing, skipping, VERL_SRC } from "../../../external_inputs.ts";

const SWEEP = { name: "baselines", rl: { steps: 100 }, dir: "/work/sweeps/baselines" };
const VERL_SOURCE = new URL(`file://${VERL_SRC}verl-0.7.0/verl/trainer/ppo/core_algos.py`);

function plan(preset: string, overrides: Record<string, unknown> = {}) {
  const run: RunConfig = {
    runId: `${preset}_s1`,
    engine: "verl",
    method: preset,
    preset,
    seed: 1,
    base: 0,
    algo: resolveAlgo(preset, overrides),
    settings: { model: "Qwen/Qwen2.5-Math-7B", clusterSweepDir: "/shared/acebench/b", rl: { steps: 100 } },
    eval: { n: 8, ks: [1, 8], every: 50 },
  };
  const overridesOf = verlRunPlan(run, SWEEP, {}).overrides;
  return (key: string) => overridesOf.find((o) => o.replace(/^\+*/, "").startsWith(`${key}=`))?.split("=")[1];
}

Deno.test("verl methods: Dr. GRPO, RLOO, pass@k and W-REINFORCE plan with VERL's names", () => {
  const dr = plan("dr-grpo");
  assertEquals([dr("algorithm.adv_estimator"), dr("algorithm.norm_adv_by_std_in_grpo")], ["grpo", "False"]);
  assertEquals(dr("actor_rollout_ref.actor.loss_agg_mode"), "seq-mean-token-sum-norm");
  assertEquals(plan("rloo")("algorithm.adv_estimator"), "rloo");
  assertEquals(plan("grpo-passk")("algorithm.adv_estimator"), "grpo_passk");
  const w = plan("w-reinforce", { wReinforceLambda: 0.2 });
  assertEquals(w("algorithm.adv_estimator"), "w_reinforce");
  assertEquals(w("ray_kwargs.ray_init.runtime_env.worker_process_setup_hook"), "ace_verl.install");
  assertEquals(w("ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_W_REINFORCE_LAMBDA"), '"0.2"');
  assertEquals(plan("ace-grpo")("algorithm.adv_estimator"), "ace");
});

Deno.test("verl methods: what VERL cannot run is refused at plan time, naming the method", () => {
  throws(() => plan("ace-grpo", { advEstimator: "rloo" }), /ACE over rloo is not mapped to VERL/);
  throws(() => plan("psr"), /'psr' has no VERL estimator mapped/);
  throws(() => plan("nsr"), /trainOn is 'incorrect' \(nsr, psr\); VERL's trainer updates on the whole batch/);
  throws(() => plan("passk"), /advEstimator 'passk' has no VERL estimator mapped/); // Chen et al.'s analytical one
  throws(() => plan("ace-uniform"), /batch-mean/);
  throws(() => plan("w-reinforce-ace"), /w_reinforce_ace/);
  throws(() => plan("oracle"), /oracle/);
  throws(() => plan("ace-allwrong"), /ace-allwrong/);
});

Deno.test("verl methods: W-REINFORCE at λ = 0 is ace_verl's w_reinforce; Clip-Cov and KL-Cov are VERL's loss modes", () => {
  const nsr = plan("w-reinforce", { wReinforceLambda: 0 });
  assertEquals(nsr("algorithm.adv_estimator"), "w_reinforce");
  assertEquals(nsr("ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_W_REINFORCE_LAMBDA"), '"0"');
  const clip = plan("clip-cov", { cov: { clipRatio: 0.001 } });
  assertEquals(clip("actor_rollout_ref.actor.policy_loss.loss_mode"), "clip_cov");
  assertEquals(clip("actor_rollout_ref.actor.policy_loss.clip_cov_ratio"), "0.001");
  assertEquals(clip("actor_rollout_ref.actor.policy_loss.clip_cov_ub"), "5");
  const kl = plan("kl-cov");
  assertEquals(kl("actor_rollout_ref.actor.policy_loss.loss_mode"), "kl_cov");
  assertEquals(kl("actor_rollout_ref.actor.policy_loss.ppo_kl_coef"), "1");
  assertEquals(kl("actor_rollout_ref.actor.policy_loss.kl_cov_ratio"), "0.002");
  assertEquals(plan("grpo")("actor_rollout_ref.actor.policy_loss.loss_mode"), undefined);
});

const hasVerl = exists(VERL_SOURCE);
skipping("the VERL registry check", hasVerl ? null : missing("verlSrc", `${VERL_SOURCE.pathname} not found`));

Deno.test(
  "verl methods: the built-in estimator names exist in VERL's own registry",
  { ignore: !hasVerl },
  () => {
    const source = Deno.readTextFileSync(VERL_SOURCE);
    for (const name of ["RLOO", "GRPO_PASSK", "GRPO"]) {
      ok(source.includes(`@register_adv_est(AdvantageEstimator.${name})`), name);
    }
    ok(/RLOO = "rloo"/.test(source) && /GRPO_PASSK = "grpo_passk"/.test(source), "enum values");
    ok(source.includes('loss_agg_mode == "seq-mean-token-sum-norm"'), "Dr. GRPO's aggregation");
    ok(
      source.includes('@register_policy_loss("clip_cov")') &&
        source.includes('@register_policy_loss("kl_cov")'),
    );
    ok(!source.includes('"w_reinforce"'), "no built-in w_reinforce: ace_verl.py registers it");
    const ace = Deno.readTextFileSync(new URL("../../../../bench/engines/verl/ace_verl.py", import.meta.url));
    ok(
      /ESTIMATORS = \{[^}]*W_REINFORCE_NAME: compute_w_reinforce_outcome_advantage/.test(ace) &&
        ace.includes('W_REINFORCE_NAME = "w_reinforce"'),
    );
  },
);

function exists(url: URL): boolean {
  try {
    Deno.statSync(url);
    return true;
  } catch {
    return false;
  }
}
