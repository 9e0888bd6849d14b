import { assertClose, assertEquals, ok, throws } from "../../assert.ts";
import {
  aceAdvantages,
  type AceConfig,
  aceRegulariser,
  aceResidualWeight,
  confidenceShift,
  PRESETS,
  softplus,
} from "../../../bench/core/mod.ts";

const ACE: AceConfig = { enabled: true, alpha: 1, phi: "softplus", aggregation: "sum", clip: null };

Deno.test("confidenceShift: masked sum, per-token mean, all-masked rows and clipping", () => {
  const logp = [-1, -2, -0.5, -3, -9, -9];
  const ref = [-1.5, -1, -0.5, -0.5, -1, -1];
  const mask = [1, 1, 1, 0, 0, 0];
  assertEquals([...confidenceShift(logp, ref, mask, 3, 2)], [-0.5, 0, 0]);
  assertEquals([...confidenceShift(logp, ref, mask, 3, 2, { aggregation: "mean", clip: null })], [
    -0.25,
    0,
    0,
  ]);
  assertEquals([...confidenceShift(logp, ref, mask, 3, 2, { aggregation: "sum", clip: 0.3 })], [-0.3, 0, 0]);
  throws(() => confidenceShift([NaN, 0], [0, 0], [1, 1], 1, 2), /logp\[0\] is NaN/);
  throws(() => confidenceShift([0, 0], [0, 0], [1, 1], 1, 3), /logp has length 2; expected 3/);
});

Deno.test("aceAdvantages: scales only incorrect rollouts with negative advantage, by 1 + α·φ(c)", () => {
  const adv = [-1, -1, 1, -0.5, 0];
  const correct = [0, 0, 1, 1, 0];
  const c = [0, 2, 5, 3, 4];
  const soft = aceAdvantages(adv, correct, c, ACE);
  assertClose(soft[0], -(1 + Math.LN2), 1e-12, "c = 0 gets log 2");
  assertClose(soft[1], -(1 + 2.1269280110429727), 1e-12, "softplus(2)");
  assertEquals([soft[2], soft[3], soft[4]], [1, -0.5, 0]);
  const relu = aceAdvantages(adv, correct, c, { ...ACE, phi: "relu", alpha: 0.5 });
  assertEquals([...relu], [-1, -2, 1, -0.5, 0]);
  assertEquals([...aceAdvantages(adv, correct, c, { ...ACE, enabled: false })], adv);
  const uniform = aceAdvantages(adv, correct, c, { ...ACE, phi: "uniform" }); // the confidence-blind control
  assertEquals([uniform[0], uniform[1]], [-(1 + Math.LN2), -(1 + Math.LN2)]);
  throws(() => aceAdvantages([NaN], [0], [0], ACE), /advantages\[0\] is NaN/);
  throws(() => aceAdvantages([-1], [0], [0], { ...ACE, alpha: -1 }), /ace.alpha/);
});

Deno.test("softplus: stable at extreme arguments", () => {
  assertEquals(softplus(1000), 1000);
  assertEquals(softplus(-1000), 0);
  assertClose(softplus(0), Math.LN2, 1e-15);
  const huge = aceAdvantages([-1], [0], [1e300], ACE);
  ok(Number.isFinite(huge[0]), "finite for huge c");
});

Deno.test("ρ(c) = softplus(c) − (1 + c)·1{c > 0} lies in (−1, log 2 − 1] for c > 0 and (0, log 2] for c ≤ 0", () => {
  // Beyond |c| ≈ 36 the open ends round to −1 and 0 in float64, so the grid stays where they are representable.
  for (let c = -30; c <= 30; c += 0.01) {
    const rho = aceResidualWeight(c);
    assertClose(rho, softplus(c) - (c > 0 ? 1 + c : 0), 1e-12, `identity at c = ${c}`);
    if (c > 0) ok(rho > -1 && rho <= Math.LN2 - 1, `c = ${c}: ρ = ${rho}`);
    else ok(rho > 0 && rho <= Math.LN2, `c = ${c}: ρ = ${rho}`);
  }
  assertEquals(aceResidualWeight(0), Math.LN2); // the closed ends are attained at c = 0 and c → 0⁺
  assertClose(aceResidualWeight(1e-12), Math.LN2 - 1, 1e-11);
  ok(aceResidualWeight(1e-12) <= Math.LN2 - 1);
  assertClose(aceResidualWeight(40), -1, 1e-15); // tends to −1 from above
});

Deno.test("aceRegulariser: sums |A|(c + c²/2) over incorrect, penalised, overconfident rollouts", () => {
  const r = aceRegulariser([-1, -2, 1, -1], [0, 0, 1, 0], [2, -1, 3, 0.5]);
  assertClose(r, 1 * (2 + 2) + 1 * (0.5 + 0.125), 1e-12);
});

Deno.test("ace-uniform (φ batch-mean): every penalised error gets the batch's mean ACE multiplier", () => {
  const adv = [1, -1, -1, -2, -0.5];
  const correct = [1, 0, 0, 0, 1];
  const c = [3, 2, -1, 0.5, 4];
  const ace = { ...PRESETS["ace-uniform"].ace, alpha: 2 };
  const out = aceAdvantages(adv, correct, c, ace);
  const mean = (softplus(2) + softplus(-1) + softplus(0.5)) / 3; // penalised: rows 1, 2, 3
  assertEquals([out[0], out[4]], [1, -0.5]); // correct rows untouched
  for (const i of [1, 2, 3]) assertClose(out[i], adv[i] * (1 + 2 * mean), 1e-12);
  // The same mean multiplier as softplus ACE over those rows, without its selectivity.
  const selective = aceAdvantages(adv, correct, c, { ...ace, phi: "softplus" });
  const ratio = (a: ArrayLike<number>) => [1, 2, 3].reduce((s, i) => s + a[i] / adv[i], 0) / 3;
  assertClose(ratio(out), ratio(selective), 1e-12);
});
