// Per-step training diagnostics, computed here so every engine logs the same metrics.jsonl fields.
import { assertFinite, assertLength, type Num } from "./check.ts";
import type { StepRollouts, UpdateResult } from "./step.ts";

/**
 * Inputs: the step's rollouts (after filtering), the estimator's advantages and those fed to the loss (after ACE),
 * the confidence shift per rollout (null when there is no reference model), and the update's loss and metrics.
 */
export type DiagnosticsInput =
  & Pick<StepRollouts, "rewards" | "correct">
  & Pick<UpdateResult, "loss" | "metrics">
  & { advantages: Num; finalAdvantages: Num; c: Num | null; groupsKeptFrac: number };

/**
 * One metrics.jsonl record (without `step`); null where a quantity does not exist this step. ACE ones, over
 * incorrect rollouts: `ace_overconf_frac` = fraction with c > 0, `ace_overconf_mean_c` = their mean c (null if
 * none), `ace_multiplier` = mean A'/A over incorrect rollouts with A < 0 (1 with ACE off; null if there are none).
 * They are logged for GRPO too, to see overconfidence without ACE.
 */
export function trainingDiagnostics(input: DiagnosticsInput) {
  const { rewards, correct, advantages, finalAdvantages, c } = input;
  const n = rewards.length;
  assertFinite("rewards", rewards);
  assertLength("correct", correct, n);
  assertLength("advantages", advantages, n);
  assertLength("finalAdvantages", finalAdvantages, n);
  if (c) assertLength("c", c, n);
  let rewardSum = 0, correctCount = 0, advAbs = 0;
  let wrong = 0, overconf = 0, overconfC = 0, penalised = 0, multiplier = 0;
  for (let i = 0; i < n; i++) {
    rewardSum += rewards[i];
    advAbs += Math.abs(finalAdvantages[i]);
    if (correct[i]) {
      correctCount++;
      continue;
    }
    wrong++;
    if (c && c[i] > 0) {
      overconf++;
      overconfC += c[i];
    }
    if (advantages[i] < 0) {
      penalised++;
      multiplier += finalAdvantages[i] / advantages[i];
    }
  }
  const mean = (s: number, k: number) => (k > 0 ? s / k : null);
  return {
    reward_mean: mean(rewardSum, n) ?? 0,
    accuracy: mean(correctCount, n) ?? 0,
    groups_kept_frac: input.groupsKeptFrac,
    entropy: input.metrics.entropy,
    kl: input.metrics.kl,
    clipfrac: input.metrics.clipfrac,
    clipfrac_lower: input.metrics.clipfrac_lower,
    ppo_kl: input.metrics.ppo_kl,
    loss: input.loss,
    pg_loss: input.metrics.pg_loss,
    ace_overconf_frac: c ? mean(overconf, wrong) : null,
    ace_overconf_mean_c: c ? mean(overconfC, overconf) : null,
    ace_multiplier: mean(multiplier, penalised),
    adv_abs_mean: mean(advAbs, n) ?? 0,
  };
}

/**
 * ACE's premise, checked per class of incorrect rollout (classes a backend knows, e.g. a tempting shortcut the
 * base model learned vs any other error): for each class, `err_<class>_n` (count), `err_<class>_c` (mean c, nats;
 * null when none) and `err_<class>_overconf` (share with c > 0; null when none). Correct rollouts are skipped.
 */
export function errorClassDiagnostics(
  correct: ArrayLike<number | boolean>,
  classes: readonly string[],
  c: Num,
): Record<string, number | null> {
  assertLength("classes", classes, correct.length);
  assertLength("c", c, correct.length);
  const stats = new Map<string, { n: number; c: number; over: number }>();
  for (let i = 0; i < correct.length; i++) {
    if (correct[i]) continue;
    const s = stats.get(classes[i]) ?? { n: 0, c: 0, over: 0 };
    s.n++, s.c += c[i], s.over += c[i] > 0 ? 1 : 0;
    stats.set(classes[i], s);
  }
  const out: Record<string, number | null> = {};
  for (const [name, s] of [...stats].sort(([a], [b]) => a.localeCompare(b))) {
    out[`err_${name}_n`] = s.n;
    out[`err_${name}_c`] = s.c / s.n;
    out[`err_${name}_overconf`] = s.over / s.n;
  }
  return out;
}
