// Per-token KL estimators to the reference policy (Schulman's k1/k2/k3 under VERL's names; docs/references.md),
// with their gradients wrt logp.
import { assertFinite, assertLength, type Num } from "./check.ts";

/** All accepted estimator names, as VERL spells them; a trailing "+" is straight-through (value of the
 * estimator, gradient of k2). */
export const KL_TYPES = [
  ...["k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl"] as const,
  ...["k1+", "kl+", "abs+", "k3+", "low_var_kl+"] as const,
];

/** One estimator name of KL_TYPES. */
export type KlType = (typeof KL_TYPES)[number];

/**
 * Per-token KL penalty values and d(value)/d(logp). k1 = logp − ref; abs = |logp − ref|; k2 = ½(logp − ref)²;
 * k3 = e^d − d − 1 with d = ref − logp clamped to ±20 and the value clamped to [−10, 10] (gradient 0 where a clamp
 * is active, as torch.clamp). Straight-through "+" variants keep the value and use the k2 gradient (logp − ref).
 */
export function klPenalty(
  logp: Num,
  refLogp: Num,
  type: KlType,
): { value: Float64Array; grad: Float64Array } {
  assertLength("refLogp", refLogp, logp.length);
  assertFinite("logp", logp);
  assertFinite("refLogp", refLogp);
  if (!KL_TYPES.includes(type)) {
    throw new RangeError(`kl type '${type}' is unknown; expected ${KL_TYPES.join(", ")}`);
  }
  const straightThrough = type.endsWith("+");
  const base = straightThrough ? type.slice(0, -1) : type;
  const value = new Float64Array(logp.length);
  const grad = new Float64Array(logp.length);
  for (let i = 0; i < logp.length; i++) {
    const diff = logp[i] - refLogp[i];
    let v: number, g: number;
    if (base === "k1" || base === "kl") [v, g] = [diff, 1];
    else if (base === "abs") [v, g] = [Math.abs(diff), Math.sign(diff)];
    else if (base === "k2" || base === "mse") [v, g] = [0.5 * diff * diff, diff];
    else [v, g] = k3(diff);
    value[i] = v;
    grad[i] = straightThrough ? diff : g;
  }
  return { value, grad };
}

/** Schulman's low-variance k3 and its gradient wrt logp, with VERL's clamps. */
function k3(diff: number): [number, number] {
  const d = Math.min(20, Math.max(-20, -diff));
  const v = Math.exp(d) - d - 1;
  if (v > 10) return [10, 0];
  return [v, d !== -diff ? 0 : 1 - Math.exp(d)]; // a clamped d passes no gradient
}
