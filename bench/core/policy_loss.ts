// PPO clipped surrogate (arXiv 1707.06347) with clip-higher (DAPO, arXiv 2503.14476), dual clip
// (arXiv 1912.09729), KL and entropy terms, aggregated as VERL's agg_loss does (docs/references.md).
import { assertFinite, assertShape, type Num } from "./check.ts";
import { klPenalty, type KlType } from "./kl.ts";
import { clipCovTokens, type CovConfig, covRng, klCovTokens, tokenCovariance } from "./cov_losses.ts";
import { Registry } from "./registry.ts";

/** All accepted loss aggregation modes, as VERL's `loss_agg_mode` names them (seq-mean-token-sum-norm: Dr. GRPO,
 * 2503.20783). */
export const LOSS_AGG_MODES = [
  "token-mean",
  "seq-mean-token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-sum-norm",
] as const;

/** One aggregation mode of LOSS_AGG_MODES. */
export type LossAggMode = (typeof LOSS_AGG_MODES)[number];

/**
 * Per-token weights w so that an aggregated loss is Σ_t w_t·ℓ_t over the [B, T] layout. token-mean: mask/Σmask;
 * seq-mean-token-mean: mask/(len_b·#non-empty rows); seq-mean-token-sum: mask/#non-empty rows;
 * seq-mean-token-sum-norm (Dr. GRPO): mask/T (the padded length; not divided by B, as VERL).
 * An all-masked batch gives all-zero weights (loss 0, no NaN).
 */
export function aggregationWeights(mask: Num, B: number, T: number, mode: LossAggMode): Float64Array {
  assertShape(B, T);
  assertFinite("mask", mask, B * T);
  const w = new Float64Array(B * T);
  const lens = new Float64Array(B);
  for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) lens[b] += mask[b * T + t];
  const total = lens.reduce((s, l) => s + l, 0);
  const nonEmpty = lens.reduce((s, l) => s + (l > 0 ? 1 : 0), 0);
  for (let b = 0; b < B; b++) {
    if (lens[b] === 0) continue;
    let scale: number;
    if (mode === "token-mean") scale = 1 / total;
    else if (mode === "seq-mean-token-mean") scale = 1 / (lens[b] * nonEmpty);
    else if (mode === "seq-mean-token-sum") scale = 1 / nonEmpty;
    else if (mode === "seq-mean-token-sum-norm") scale = 1 / T;
    else throw new RangeError(`lossAgg is '${mode}'; expected ${LOSS_AGG_MODES.join(", ")}`);
    for (let t = b * T; t < (b + 1) * T; t++) w[t] = mask[t] * scale;
  }
  return w;
}

/** The options policyLoss reads (a subset of AlgoConfig). */
export interface PolicyLossConfig {
  clipLow: number;
  clipHigh: number;
  /** Dual-clip bound for A < 0 (VERL clip_ratio_c, > 1); null disables it. */
  clipC: number | null;
  logRatioClamp: number;
  lossAgg: LossAggMode;
  klCoef: number;
  klType: KlType;
  entropyCoef: number;
  /** Options of the clip_cov and kl_cov losses; required by them, ignored by vanilla. */
  cov?: CovConfig;
}

/** Inputs of policyLoss: [B, T] per-token arrays and per-sequence advantages (already ACE-scaled if ACE is on). */
export interface PolicyLossInput {
  logp: Num;
  oldLogp: Num;
  /** Needed when klCoef ≠ 0; also gives the `kl` metric when present. */
  refLogp?: Num;
  advantages: Num;
  mask: Num;
  B: number;
  T: number;
  /** Per-token entropy; adds −entropyCoef·agg(entropy) to the loss (its gradient is the engine's: it is not a logp term). */
  entropy?: Num;
}

/** Scalar metrics of one loss evaluation (token means over the mask). */
export interface PolicyLossMetrics {
  pg_loss: number;
  clipfrac: number;
  clipfrac_lower: number;
  ppo_kl: number;
  kl: number | null;
  entropy: number | null;
}

/**
 * Clipped policy loss: per token ℓ = max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high)), then min(ℓ, −A·clipC) where A < 0,
 * r = exp(clamp(logp − oldLogp, ±logRatioClamp)); aggregated with `lossAgg`; plus klCoef·agg(kl) and
 * −entropyCoef·agg(entropy). `dLogp` is d(loss)/d(logp) per token (policy and KL terms; zero where a clip or clamp
 * is active, as autograd would give), so an engine backpropagates through sum(dLogp ⊙ logp).
 */
export function policyLoss(input: PolicyLossInput, config: PolicyLossConfig) {
  return policyLossWith(input, config, () => (logRatio, A) => clippedTokenLoss(logRatio, A, config));
}

/** What one token contributes: its loss, d(loss)/d(logp), whether PPO or the dual clip bound it, its log-ratio. */
type TokenResult = [loss: number, grad: number, clipped: boolean, lower: boolean, logRatio: number];

/** One token's result from its raw log-ratio, its sequence's advantage and its index t in the [B, T] layout. */
type TokenLoss = (rawLogRatio: number, A: number, t: number) => TokenResult;

/**
 * The shared body of every policy loss: input checks, aggregation by `lossAgg`, the KL and entropy terms and the
 * metrics around a per-token rule; `rule` sees the validated input once (a covariance loss picks its tokens there).
 */
function policyLossWith(
  input: PolicyLossInput,
  config: PolicyLossConfig,
  rule: (input: PolicyLossInput) => TokenLoss,
): { loss: number; dLogp: Float64Array; metrics: PolicyLossMetrics } {
  const { logp, oldLogp, refLogp, advantages, mask, B, T, entropy } = input;
  assertShape(B, T);
  assertFinite("advantages", advantages, B);
  for (const [name, a] of [["logp", logp], ["oldLogp", oldLogp], ["mask", mask]] as const) {
    assertFinite(name, a, B * T);
  }
  if (entropy) assertFinite("entropy", entropy, B * T);
  if (config.clipC !== null && !(config.clipC > 1)) {
    throw new RangeError(`clipC is ${config.clipC}; expected > 1`);
  }
  if (config.klCoef !== 0 && !refLogp) throw new RangeError("klCoef is non-zero but refLogp is missing");

  const w = aggregationWeights(mask, B, T, config.lossAgg);
  let tokens = 0;
  for (let t = 0; t < B * T; t++) tokens += mask[t];
  const tokenMean = (f: (t: number) => number) => {
    if (tokens === 0) return 0;
    let s = 0;
    for (let t = 0; t < B * T; t++) if (mask[t]) s += mask[t] * f(t);
    return s / tokens;
  };

  const tokenLoss = rule(input);
  const dLogp = new Float64Array(B * T);
  let pgLoss = 0, clipped = 0, clippedLower = 0, negLogRatio = 0;
  for (let b = 0; b < B; b++) {
    const A = advantages[b];
    for (let t = b * T; t < (b + 1) * T; t++) {
      if (!mask[t]) continue;
      const [loss, grad, isClipped, isLower, logRatio] = tokenLoss(logp[t] - oldLogp[t], A, t);
      pgLoss += w[t] * loss;
      dLogp[t] = w[t] * grad;
      clipped += mask[t] * (isClipped ? 1 : 0);
      clippedLower += mask[t] * (isLower ? 1 : 0);
      negLogRatio -= mask[t] * logRatio;
    }
  }

  let loss = pgLoss;
  const kl = refLogp ? klPenalty(logp, refLogp, config.klType) : null;
  if (kl && config.klCoef !== 0) {
    for (let t = 0; t < B * T; t++) {
      loss += config.klCoef * w[t] * kl.value[t];
      dLogp[t] += config.klCoef * w[t] * kl.grad[t];
    }
  }
  if (entropy) { for (let t = 0; t < B * T; t++) loss -= config.entropyCoef * w[t] * entropy[t]; }
  const per = tokens === 0 ? 0 : 1 / tokens;
  return {
    loss,
    dLogp,
    metrics: {
      pg_loss: pgLoss,
      clipfrac: clipped * per,
      clipfrac_lower: clippedLower * per,
      ppo_kl: negLogRatio * per,
      kl: kl && tokenMean((t) => kl.value[t]),
      entropy: entropy ? tokenMean((t) => entropy[t]) : null,
    },
  };
}

/** One token's clipped loss (PPO with clip-higher, then the dual clip where A < 0). */
function clippedTokenLoss(rawLogRatio: number, A: number, config: PolicyLossConfig): TokenResult {
  const bound = config.logRatioClamp;
  const logRatio = Math.min(bound, Math.max(-bound, rawLogRatio));
  const ratioLive = logRatio === rawLogRatio; // the clamp passes no gradient
  const ratio = Math.exp(logRatio);
  const clippedRatio = Math.min(1 + config.clipHigh, Math.max(1 - config.clipLow, ratio));
  const l1 = -A * ratio;
  const l2 = -A * clippedRatio;
  let loss = Math.max(l1, l2);
  const isClipped = l2 > l1;
  let grad = isClipped || !ratioLive ? 0 : -A * ratio;
  let isLower = false;
  if (A < 0 && config.clipC !== null) {
    const l3 = -A * config.clipC;
    if (loss > l3) [loss, grad, isLower] = [l3, 0, true];
  }
  return [loss, grad, isClipped, isLower, logRatio];
}

/** The cov options of a covariance loss; throws naming the field when they are missing. */
function covOptions(config: PolicyLossConfig, loss: string): CovConfig {
  if (!config.cov) throw new RangeError(`policyLoss '${loss}' needs algo.cov (clipRatio, clipLb, clipUb, …)`);
  return config.cov;
}

/**
 * Clip-Cov (Cui et al. 2025, arXiv 2505.22617, as VERL 0.7.0's clip_cov): the clip-higher PPO token loss without
 * dual clip (the authors' recipe sets the clip range to 1/1), except that a random covCount(clipRatio) of the tokens with (A − Ā)(logp − mean logp) in
 * (clipLb, clipUb), not already clipped, contribute neither loss nor gradient (see clipCovTokens).
 */
export function clipCovLoss(input: PolicyLossInput, config: PolicyLossConfig) {
  const cov = covOptions(config, "clip_cov");
  const noDual = { ...config, clipC: null };
  return policyLossWith(input, config, ({ logp, oldLogp, advantages, mask, B, T }) => {
    const token = (t: number) =>
      clippedTokenLoss(logp[t] - oldLogp[t], advantages[Math.floor(t / T)], noDual);
    const clipped = Array.from({ length: B * T }, (_, t) => mask[t] > 0 && token(t)[2]);
    const covariance = tokenCovariance(logp, advantages, mask, B, T);
    const detached = new Set(clipCovTokens(covariance, mask, clipped, cov, covRng(oldLogp)));
    return (logRatio, A, t) => {
      const out = clippedTokenLoss(logRatio, A, noDual);
      return detached.has(t) ? [0, 0, out[2], false, out[4]] : out;
    };
  });
}

/**
 * KL-Cov (Cui et al. 2025, as VERL 0.7.0's kl_cov): the unclipped surrogate −A·r per token, plus
 * klCoef·|log r| on the covCount(klRatio) tokens with the largest (A − Ā)(logp − mean logp) (see klCovTokens);
 * |·|'s gradient at 0 is 0, as torch's.
 */
export function klCovLoss(input: PolicyLossInput, config: PolicyLossConfig) {
  const cov = covOptions(config, "kl_cov");
  return policyLossWith(input, config, ({ logp, oldLogp, advantages, mask, B, T }) => {
    const covariance = tokenCovariance(logp, advantages, mask, B, T);
    const penalised = new Set(klCovTokens(covariance, mask, cov.klRatio, covRng(oldLogp)));
    const bound = config.logRatioClamp;
    return (rawLogRatio, A, t) => {
      const logRatio = Math.min(bound, Math.max(-bound, rawLogRatio));
      const live = logRatio === rawLogRatio ? 1 : 0; // the clamp passes no gradient
      const ratio = Math.exp(logRatio);
      let loss = -A * ratio, grad = -A * ratio * live;
      if (penalised.has(t)) {
        (loss += cov.klCoef * Math.abs(logRatio), grad += cov.klCoef * Math.sign(logRatio) * live);
      }
      return [loss, grad, false, false, logRatio];
    };
  });
}

/** A policy loss: the loss, its gradient wrt logp per token, and the metrics (the signature of `policyLoss`). */
export type PolicyLossFn = typeof policyLoss;

/**
 * The policy losses by VERL's names (`algo.policyLoss`): vanilla is the clipped loss above; clip_cov and kl_cov
 * are Cui et al.'s covariance-selected losses (cov_losses.ts).
 */
export const POLICY_LOSSES = new Registry<PolicyLossFn>("policyLoss", [
  ["vanilla", policyLoss],
  ["clip_cov", clipCovLoss],
  ["kl_cov", klCovLoss],
]);
