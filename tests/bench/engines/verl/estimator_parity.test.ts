// The RL core's estimators against VERL 0.7.0's own code: rloo, grpo_passk and grpo (Dr. GRPO: no std) run from
// ../shared's core_algos.py, w_reinforce from ace_verl.py, on the same seeded batches, under Debian's python3-torch.
import { fileURLToPath } from "node:url";
import { ADV_ESTIMATORS, groupIdsOf } from "../../../../bench/core/mod.ts";
import { Rng } from "../../../../common/prng.ts";
import { assertClose, assertEquals, ok } from "../../../assert.ts";
import { CORE_ALGOS, coreAlgosMissing, runParityScript } from "./core_algos.ts";
import { skipping } from "../../../external_inputs.ts";

const ACE_VERL = fileURLToPath(new URL("../../../../bench/engines/verl/ace_verl.py", import.meta.url));
const missing = coreAlgosMissing();
skipping("estimator parity with VERL", missing);

Deno.test("estimators match VERL 0.7.0's rloo, grpo_passk, grpo (no std) and ace_verl's w_reinforce", {
  ignore: missing !== null,
}, async () => {
  const rng = Rng.seeded(17);
  const cases = [];
  for (const estimator of ["rloo", "grpo_passk", "grpo", "w_reinforce"]) {
    for (const normByStd of [true, false]) {
      if (estimator === "grpo" && normByStd) continue; // GRPO's own parity lives in ace_parity.test.ts
      for (let k = 0; k < 4; k++) {
        // pass@k needs ≥ 2 rollouts per group; the others also see a singleton group.
        const sizes = estimator === "grpo_passk" ? [4, 3, 5, 2] : [4, 1, 5, 3];
        const groupIds = [...groupIdsOf(sizes)];
        const scale = k % 2 ? [1, -1] : [1, 0];
        const rewards = groupIds.map(() =>
          (rng.float() < 0.4 ? scale[0] : scale[1]) - 0.25 * (k === 3 ? rng.float() : 0)
        );
        cases.push({ estimator, normByStd, groupIds, rewards });
      }
    }
  }
  const verl = await runParityScript<number[][]>("estimator_parity.py", cases, [CORE_ALGOS, ACE_VERL], {
    ACE_VERL_W_REINFORCE_LAMBDA: "0.1",
  });
  assertEquals(verl.length, cases.length);
  let nonZero = 0;
  cases.forEach((c, i) => {
    const ours = ADV_ESTIMATORS.get(c.estimator)(
      { rewards: c.rewards, groupIds: c.groupIds, correct: c.rewards.map((r) => r > 0) },
      { normByStd: c.normByStd, stdEps: 1e-6, wReinforceLambda: 0.1, passK: 4, ace: { alpha: 1 } },
    );
    ours.forEach((a, j) => assertClose(a, verl[i][j], 1e-9, `${c.estimator} case ${i} rollout ${j}`));
    nonZero += ours.filter((a) => a !== 0).length;
  });
  ok(nonZero > cases.length, "the cases exercise non-zero advantages");
});
