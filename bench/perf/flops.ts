// FLOPs of the reference transformer counted from its shapes, so `bench model` can turn tokens/s into achieved
// GFLOP/s and a fraction of the machine's measured matmul peak (how far each engine is from the limit).
import type { ModelConfig } from "../engines/tfjs/model.ts";

/**
 * Weights that take part in a matrix product per token: per layer the fused QKV (d×3d), the output projection
 * (d×d), the MLP up (d×4d) and down (4d×d), 12·d² in all, plus the tied output head (d×vocab). The token
 * embedding is a lookup (tfjs runs it as a one-hot product, but that is its implementation, not the model's
 * work) and LayerNorm gains and biases are element-wise, so neither counts, as in Kaplan et al.'s table.
 */
export function matmulParams(cfg: ModelConfig): number {
  return 12 * cfg.layers * cfg.dModel * cfg.dModel + cfg.dModel * cfg.vocab;
}

/**
 * Forward FLOPs of one token that attends to `keys` positions (itself included): 2 per multiply-add of every
 * matmul weight, plus attention's QKᵀ (2·keys·d) and A·V (2·keys·d) in each layer.
 */
export function forwardFlops(cfg: ModelConfig, keys: number): number {
  return 2 * matmulParams(cfg) + 4 * cfg.layers * keys * cfg.dModel;
}

/**
 * FLOPs per trained token for next-token training on full sequences of `cfg.context` tokens: 3× the forward
 * (the backward pass costs two forwards: gradients for activations and for weights), with the forward's
 * attention averaged over the causal context (position i attends i+1 keys, mean (T+1)/2):
 *
 *   C_train = 3 · (2·N + 4·L·d·(T+1)/2) = 6·N + 6·L·d·(T+1),   N = 12·L·d² + d·V   (matmulParams)
 *
 * This is Kaplan et al. 2020, "Scaling Laws for Neural Language Models" (arXiv:2001.08361), Table 1:
 * C_forward = 2N + 2·n_layer·n_ctx·d_attn with C_train ≈ 3·C_forward, whose attention term is our
 * 4·L·d·T/2 (QKᵀ and A·V over half the context on average); with the de-embedding (head) counted in N as their
 * table lists it. PaLM (Chowdhery et al. 2022, arXiv:2204.02311, Appendix B) writes the same as 6N + 12·L·H·Q·T
 * without halving for the causal mask; we count only the products a causal model needs ("model FLOPs", the
 * same for every engine whatever it computes and throws away).
 */
export function trainFlopsPerToken(cfg: ModelConfig): number {
  return 3 * (2 * matmulParams(cfg) + 2 * cfg.layers * cfg.dModel * (cfg.context + 1));
}

/**
 * FLOPs per sampled token of a sampling run with a KV cache: the prompt's forward (its `prompt` tokens at causal
 * contexts 1..prompt, the head only on the last, whose logits give the first new token), then `newTokens` - 1
 * single-token forwards at their actual context lengths prompt+1..prompt+newTokens-1 (the last sampled token
 * is never fed back), divided by `newTokens`. Counts what the sampler needs, as `trainFlopsPerToken` does.
 */
export function sampleFlopsPerToken(cfg: ModelConfig, prompt: number, newTokens: number): number {
  const head = 2 * cfg.dModel * cfg.vocab;
  let total = 0;
  for (let i = 1; i <= prompt; i++) total += forwardFlops(cfg, i) - head;
  total += head;
  for (let s = 1; s < newTokens; s++) total += forwardFlops(cfg, prompt + s);
  return total / newTokens;
}

/** FLOPs of one n×n by n×n matrix product (one multiply and one add per term): 2·n³. */
export function gemmFlops(n: number): number {
  return 2 * n ** 3;
}
