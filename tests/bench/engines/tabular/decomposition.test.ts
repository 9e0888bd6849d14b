// ACE's gradient decomposition (arXiv 2602.21420, Theorem 1; docs/references.md), checked with finite differences
// on the tabular policy, and through the production update path (the one RL loop driving the tabular backend).
import { assertClose, ok } from "../../../assert.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  aceAdvantages,
  aceRegulariser,
  aceResidualWeight,
  groupAdvantages,
  PRESETS,
} from "../../../../bench/core/mod.ts";
import { updatePolicy } from "../../../../bench/engines/loop.ts";
import {
  buildWorld,
  logitGradient,
  logProbs,
  resolveSettings,
  sampleGroup,
  tabularBackend,
  type TabularParams,
} from "../../../../bench/engines/tabular/mod.ts";

const settings = resolveSettings({ prompts: 3, strategies: 4, broadCorrectProb: 0.5, nicheCorrectProb: 0.4 });
const runSpec = {
  runId: "t",
  engine: "tabular",
  method: "grpo",
  preset: "grpo",
  seed: 11,
  base: 0,
  eval: { n: 1, ks: [1], every: 1 },
};
const world = buildWorld(settings, 11);
const S = world.strategies, P = world.prompts;

function paramsOf(theta: number[]): TabularParams {
  return { shared: Float64Array.from(theta.slice(0, S)), perPrompt: Float64Array.from(theta.slice(S)) };
}

/** Central finite-difference gradient of f at theta. */
function fd(f: (theta: number[]) => number, theta: number[], h = 1e-5): number[] {
  return theta.map((_, j) => {
    const up = [...theta], dn = [...theta];
    up[j] += h;
    dn[j] -= h;
    return (f(up) - f(dn)) / (2 * h);
  });
}

// A policy moved away from the reference, so rollouts have confidence shifts of both signs.
// The first seed whose sample has errors of both signs of c (a deterministic search, so the test is stable).
function scenario(seed: number) {
  const rng = Rng.seeded(seed);
  const theta0 = Array.from({ length: S + P * S }, () => 1.2 * rng.normal());
  const rollouts = Array.from({ length: P }, (_, x) => sampleGroup(world, paramsOf(theta0), x, 6, rng))
    .flat();
  const groupIds = rollouts.map((r) => r.x);
  const correct = rollouts.map((r) => r.correct);
  const A = groupAdvantages(rollouts.map((r) => (r.correct ? 1 : 0)), groupIds);
  const logpAt = (theta: number[]) => rollouts.map((r) => logProbs(world, paramsOf(theta), r.x)[r.strategy]);
  const cAt = (theta: number[]) => logpAt(theta).map((lp, i) => lp - rollouts[i].refLogp);
  const c0 = cAt(theta0);
  const wrong = rollouts.map((_, i) => !correct[i] && A[i] < 0);
  const usable = wrong.some((w, i) => w && c0[i] > 0) && wrong.some((w, i) => w && c0[i] < 0) &&
    c0.every((c) => Math.abs(c) > 1e-3);
  return { theta0, rollouts, correct, A, logpAt, cAt, c0, usable };
}
let seed = 0;
while (!scenario(seed).usable && seed < 200) seed++;
const { theta0, rollouts, correct, A, logpAt, cAt, c0 } = scenario(seed);

for (const [phi, alpha] of [["softplus", 1], ["softplus", 2.5]] as const) {
  Deno.test(`ACE gradient = −α∇R − α Σ|A|ρ(c)∇c on the tabular policy (finite differences, α = ${alpha})`, () => {
    const wrongPenalised = rollouts.map((_, i) => !correct[i] && A[i] < 0);
    ok(wrongPenalised.some((w, i) => w && c0[i] > 0), "needs an overconfident error");
    ok(wrongPenalised.some((w, i) => w && c0[i] < 0), "needs an error the policy is abandoning");
    ok(c0.every((c) => Math.abs(c) > 1e-3), "no c at the kink of 1{c > 0}");
    const ace = { enabled: true, alpha, phi, aggregation: "sum" as const, clip: null };
    const Aace = aceAdvantages(A, correct, c0, ace); // detached: fixed while differentiating
    const objective = (adv: ArrayLike<number>) => (theta: number[]) =>
      logpAt(theta).reduce((s, lp, i) => s + adv[i] * lp, 0);
    const gGrpo = fd(objective(A), theta0);
    const gAce = fd(objective(Aace), theta0);
    const gR = fd((theta) => aceRegulariser(A, correct, cAt(theta)), theta0);
    const gC = rollouts.map((_, i) => fd((theta) => cAt(theta)[i], theta0));
    let extraNorm = 0, withoutResidual = 0;
    for (let j = 0; j < theta0.length; j++) {
      let residual = 0;
      for (let i = 0; i < rollouts.length; i++) {
        if (wrongPenalised[i]) residual += Math.abs(A[i]) * aceResidualWeight(c0[i]) * gC[i][j];
      }
      const extra = gAce[j] - gGrpo[j];
      extraNorm += extra * extra;
      withoutResidual = Math.max(withoutResidual, Math.abs(extra + alpha * gR[j]));
      assertClose(extra, -alpha * gR[j] - alpha * residual, 1e-6, `parameter ${j}`);
    }
    ok(extraNorm > 1e-4, "ACE changes the gradient");
    ok(withoutResidual > 1e-3, "the residual term is needed: −α∇R alone does not match");
  });
}

Deno.test("the production update (one RL loop → tabular backend) moves the logits by exactly ACE's extra term", async () => {
  const ace = { ...PRESETS["ace-grpo"].ace };
  const Aace = aceAdvantages(A, correct, c0, ace);
  const B = rollouts.length;
  const lp = Float64Array.from(logpAt(theta0));
  const lr = 1e-3, scale = settings.perPromptLrScale;
  const run = { ...runSpec, settings, algo: PRESETS.grpo };
  // One update of the loop's updatePolicy at theta0 (ratio 1, no clipping): the per-prompt logits move by −lr·∇loss.
  const deltaWith = async (advantages: Float64Array) => {
    const backend = tabularBackend(
      world,
      { ...run, settings: { ...settings, rl: { ...settings.rl, lr } } },
      "",
    );
    backend.params.shared.set(theta0.slice(0, S));
    backend.params.perPrompt.set(theta0.slice(S));
    const batch = {
      rows: rollouts,
      B,
      T: 1,
      oldLogp: lp,
      refLogp: Float64Array.from(rollouts, (r) => r.refLogp),
      mask: new Float64Array(B).fill(1),
      advantages,
    };
    await updatePolicy(backend, batch, rollouts.map((r) => r.x), { ...PRESETS.grpo, klCoef: 0 });
    return [...backend.params.perPrompt].map((v, j) => v - theta0[S + j]);
  };
  const [dAce, dGrpo] = [await deltaWith(Aace), await deltaWith(Float64Array.from(A))];
  const engineExtra = dAce.map((d, j) => (B * (d - dGrpo[j])) / (lr * scale)); // token-mean: loss = −(1/B)·J
  const objective = (adv: ArrayLike<number>) => (theta: number[]) =>
    logpAt(theta).reduce((s, l, i) => s + adv[i] * l, 0);
  const fdExtra = fd(objective(Aace), theta0).map((g, j) => g - fd(objective(A), theta0)[j]).slice(S); // per-prompt logits
  ok(fdExtra.some((g) => Math.abs(g) > 1e-3), "ACE changes the per-prompt gradient");
  fdExtra.forEach((g, j) => assertClose(engineExtra[j], g, 1e-6, `logit ${j}`));
});

Deno.test("tabular logitGradient: log-prob and entropy-bonus gradients match finite differences", () => {
  const x = 1;
  const samples = [{ strategy: 0, dLogp: 0.7, weight: 0.25 }, { strategy: 2, dLogp: -1.3, weight: 0.5 }];
  const coef = 0.4;
  // the loss these gradients belong to: Σ g_i·log π(s_i) − coef·Σ w_i·H(π)
  const loss = (theta: number[]) => {
    const lp = logProbs(world, paramsOf(theta), x);
    const H = -lp.reduce((s, l) => s + Math.exp(l) * l, 0);
    return samples.reduce((s, r) => s + r.dLogp * lp[r.strategy] - coef * r.weight * H, 0);
  };
  const analytic = logitGradient(logProbs(world, paramsOf(theta0), x), samples, coef);
  const numeric = fd(loss, theta0).slice(S + x * S, S + (x + 1) * S); // prompt x's own logits
  numeric.forEach((g, j) => assertClose(analytic[j], g, 1e-6, `logit ${j}`));
});
