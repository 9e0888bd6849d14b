// Clip-Cov and KL-Cov of the RL core against VERL 0.7.0's own compute_policy_loss_clip_cov / _kl_cov (from
// ../shared's core_algos.py) on the same seeded tensors, loss and gradient, under Debian's python3-torch. Clip-Cov
// detaches a random subset of its candidates (torch.randperm there, the seeded Rng here), so its cases take a
// ratio that selects every candidate; the unit tests cover the subset draw. KL-Cov's count is ⌊ratio·N + u⌋ here
// (its expected share) and max(⌊ratio·N⌋, 1) in VERL: the cases take ratio·N a hair above an integer, where both
// select the same number of tokens.
import { POLICY_LOSSES, type PolicyLossConfig } from "../../../../bench/core/mod.ts";
import { Rng } from "../../../../common/prng.ts";
import { assertClose, assertEquals, ok } from "../../../assert.ts";
import { CORE_ALGOS, coreAlgosMissing, runParityScript } from "./core_algos.ts";
import { skipping } from "../../../external_inputs.ts";

const missing = coreAlgosMissing();
skipping("Clip-Cov/KL-Cov parity with VERL", missing);

/** A seeded [B, T] batch with ragged masks, off-policy log-ratios and per-sequence advantages. */
function makeCase(rng: Rng, loss: "clip_cov" | "kl_cov", lossAgg: string) {
  const B = 6, T = 10;
  const lens = Array.from({ length: B }, () => 3 + rng.int(T - 2));
  const mask = Array.from({ length: B * T }, (_, t) => (t % T < lens[Math.floor(t / T)] ? 1 : 0));
  const logp = mask.map((m) => (m ? -4 * rng.float() : 0));
  const oldLogp = logp.map((l, t) => (mask[t] ? l + 0.4 * rng.normal() : 0));
  const advantages = Array.from({ length: B }, () => 2 * rng.normal());
  const tokens = mask.reduce((a: number, m) => a + m, 0);
  const cov = { clipRatio: 1, clipLb: 0.5, clipUb: 3, klRatio: (3 + 1e-9) / tokens, klCoef: 0.7 };
  return { loss, lossAgg, B, T, logp, oldLogp, mask, advantages, cov, clipLow: 0.2, clipHigh: 0.28 };
}

Deno.test("clip_cov and kl_cov match VERL 0.7.0's own losses: value and gradient per token", {
  ignore: missing !== null,
}, async () => {
  const rng = Rng.seeded(23);
  const cases = [];
  for (const loss of ["clip_cov", "kl_cov"] as const) {
    for (const lossAgg of ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"]) {
      for (let k = 0; k < 3; k++) cases.push(makeCase(rng, loss, lossAgg));
    }
  }
  const verl = await runParityScript<{ loss: number; dLogp: number[] }[]>("cov_loss_parity.py", cases, [
    CORE_ALGOS,
  ]);
  assertEquals(verl.length, cases.length);
  let special = 0;
  cases.forEach((c, i) => {
    const config: PolicyLossConfig = {
      clipLow: c.clipLow,
      clipHigh: c.clipHigh,
      clipC: 3,
      logRatioClamp: 20,
      lossAgg: c.lossAgg as PolicyLossConfig["lossAgg"],
      klCoef: 0,
      klType: "low_var_kl",
      entropyCoef: 0,
      cov: c.cov,
    };
    const ours = POLICY_LOSSES.get(c.loss)(c, config);
    const name = `${c.loss} ${c.lossAgg} case ${i}`;
    // VERL's seq-mean-token-mean divides each row by (its token count + 1e-8): a relative 1e-8/len difference.
    const tol = c.lossAgg === "seq-mean-token-mean" ? 1e-8 : 1e-12;
    assertClose(ours.loss, verl[i].loss, tol, name);
    ours.dLogp.forEach((g, t) => assertClose(g, verl[i].dLogp[t], tol, `${name} token ${t}`));
    // The selection must matter: without it (no candidates, no penalty) the loss differs.
    const plain = POLICY_LOSSES.get(c.loss)(c, { ...config, cov: { ...c.cov, clipLb: 1e9, klCoef: 0 } });
    if (Math.abs(plain.loss - ours.loss) > 1e-9) special++;
  });
  ok(special >= cases.length / 2, `${special} of ${cases.length} cases exercise the covariance selection`);
});
