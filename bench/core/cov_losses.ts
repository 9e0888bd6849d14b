// Token selection of Cui et al.'s covariance losses (arXiv 2505.22617, "The Entropy Mechanism of RL for
// Reasoning LMs"), as VERL 0.7.0's compute_policy_loss_clip_cov / _kl_cov pick their tokens: the tokens whose
// centred advantage × centred log-prob product is large drive entropy collapse, so a few of them lose their
// gradient (Clip-Cov) or get a |log-ratio| penalty (KL-Cov).
import { type Num } from "./check.ts";
import { Rng } from "../../common/prng.ts";

/** The covariance losses' options (VERL actor.policy_loss: clip_cov_ratio/_lb/_ub, kl_cov_ratio, ppo_kl_coef). */
export interface CovConfig {
  /** Clip-Cov: expected fraction of response tokens detached, drawn from the band (clipLb, clipUb). */
  clipRatio: number;
  clipLb: number;
  clipUb: number;
  /** KL-Cov: expected fraction of response tokens, those with the largest covariance, that get the penalty. */
  klRatio: number;
  /** KL-Cov: coefficient β of |log π − log π_old| on those tokens. */
  klCoef: number;
}

/**
 * Per-token covariance term cov_t = (A_b − Ā)·(logp_t − mean logp), the means over masked-in tokens (A_b is the
 * advantage of token t's sequence); NaN where the mask is 0. An all-masked batch gives all NaN.
 */
export function tokenCovariance(logp: Num, advantages: Num, mask: Num, B: number, T: number): Float64Array {
  let tokens = 0, sumA = 0, sumLogp = 0;
  for (let t = 0; t < B * T; t++) {
    if (!mask[t]) continue;
    tokens += mask[t];
    sumA += mask[t] * advantages[Math.floor(t / T)];
    sumLogp += mask[t] * logp[t];
  }
  const meanA = sumA / tokens, meanLogp = sumLogp / tokens;
  return Float64Array.from(
    { length: B * T },
    (_, t) => (mask[t] ? (advantages[Math.floor(t / T)] - meanA) * (logp[t] - meanLogp) : NaN),
  );
}

/**
 * How many tokens a ratio selects: ⌊ratio·#tokens + u⌋ for a uniform u ∈ [0, 1), so on average exactly
 * ratio·#tokens. The authors' code takes max(⌊ratio·#tokens⌋, 1) per micro-batch of ~20–30k tokens, where the
 * floor of 1 never binds and the share touched is the ratio; on this suite's mini-batches of a few hundred tokens
 * that floor would touch up to 8× the authors' share, so the expected count is kept instead.
 */
export function covCount(ratio: number, tokens: number, u: number): number {
  return Math.floor(ratio * tokens + u);
}

/**
 * Clip-Cov's detached tokens: among masked-in tokens not already clipped by PPO (`clipped[t]`) whose covariance
 * lies strictly in (clipLb, clipUb), a uniformly random subset of min(covCount(clipRatio), #candidates). The draw
 * is seeded by `rng` (VERL uses torch.randperm). Returns the token indices, ascending.
 */
export function clipCovTokens(
  cov: Float64Array,
  mask: Num,
  clipped: ArrayLike<boolean>,
  config: Pick<CovConfig, "clipRatio" | "clipLb" | "clipUb">,
  rng: Rng,
): number[] {
  if (!(config.clipRatio > 0)) throw new RangeError(`cov.clipRatio is ${config.clipRatio}; expected > 0`);
  let tokens = 0;
  const candidates: number[] = [];
  for (let t = 0; t < cov.length; t++) {
    if (!mask[t]) continue;
    tokens += mask[t];
    if (!clipped[t] && cov[t] > config.clipLb && cov[t] < config.clipUb) candidates.push(t);
  }
  const n = Math.min(covCount(config.clipRatio, tokens, rng.float()), candidates.length);
  return rng.shuffle(candidates).slice(0, n).sort((a, b) => a - b);
}

/**
 * KL-Cov's penalised tokens: the covCount(klRatio) masked-in tokens with the largest covariance (ties: the lower
 * index first; the count's rounding drawn from `rng`). Returns the token indices, ascending.
 */
export function klCovTokens(cov: Float64Array, mask: Num, klRatio: number, rng: Rng): number[] {
  if (!(klRatio > 0)) throw new RangeError(`cov.klRatio is ${klRatio}; expected > 0`);
  const valid: number[] = [];
  for (let t = 0; t < cov.length; t++) if (mask[t]) valid.push(t);
  if (valid.length === 0) return [];
  const n = covCount(klRatio, valid.length, rng.float());
  return valid.sort((a, b) => cov[b] - cov[a] || a - b).slice(0, n).sort((a, b) => a - b);
}

/**
 * The Rng of a Clip-Cov or KL-Cov draw, seeded by the mini-batch's sampling-time log-probs: the same mini-batch always
 * detaches the same tokens (every evaluation of one update agrees, and a resumed run repeats the choice).
 */
export function covRng(oldLogp: Num): Rng {
  let h = 0x811c9dc5;
  const bytes = new Uint8Array(Float64Array.from(oldLogp).buffer);
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return Rng.seeded(h);
}
