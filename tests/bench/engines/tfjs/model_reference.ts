// A direct float64 implementation of the transformer's log-probs from plain weight arrays, written
// independently of model.ts (loops, no tfjs) so the tests can check the tfjs forward against it.
import type { ModelConfig, TensorData } from "../../../../bench/engines/tfjs/model.ts";

type Mat = Float64Array[];

function layerNormRow(x: Float64Array, g: Float32Array, b: Float32Array): Float64Array {
  let mean = 0, varSum = 0;
  for (const v of x) mean += v;
  mean /= x.length;
  for (const v of x) varSum += (v - mean) ** 2;
  const rstd = 1 / Math.sqrt(varSum / x.length + 1e-5);
  return x.map((v, i) => (v - mean) * rstd * g[i] + b[i]);
}

/** row [K] @ w [K, M] (w row-major). */
function vecMat(x: Float64Array, w: TensorData): Float64Array {
  const [k, m] = w.shape, out = new Float64Array(m);
  for (let i = 0; i < k; i++) for (let j = 0; j < m; j++) out[j] += x[i] * w.data[i * m + j];
  return out;
}

/** log p(seq[t+1] | seq[≤t]) for t = 0..T-2, one sequence. */
export function referenceLogProbs(cfg: ModelConfig, w: Record<string, TensorData>, seq: number[]): number[] {
  const d = cfg.dModel, hd = d / cfg.heads, t = seq.length - 1;
  let x: Mat = [];
  for (let i = 0; i < t; i++) {
    x.push(Float64Array.from({ length: d }, (_, c) => w.wte.data[seq[i] * d + c] + w.wpe.data[i * d + c]));
  }
  for (let l = 0; l < cfg.layers; l++) {
    const qkv = x.map((r) =>
      vecMat(layerNormRow(r, w[`h${l}.ln1.g`].data, w[`h${l}.ln1.b`].data), w[`h${l}.qkv`])
    );
    const y: Mat = x.map(() => new Float64Array(d));
    for (let h = 0; h < cfg.heads; h++) {
      for (let i = 0; i < t; i++) {
        const scores: number[] = [];
        for (let j = 0; j <= i; j++) {
          let s = 0;
          for (let c = 0; c < hd; c++) s += qkv[i][h * hd + c] * qkv[j][d + h * hd + c];
          scores.push(s / Math.sqrt(hd));
        }
        const max = Math.max(...scores),
          e = scores.map((s) => Math.exp(s - max)),
          z = e.reduce((a, b) => a + b);
        for (let j = 0; j <= i; j++) {
          for (let c = 0; c < hd; c++) y[i][h * hd + c] += (e[j] / z) * qkv[j][2 * d + h * hd + c];
        }
      }
    }
    x = x.map((r, i) => r.map((v, c) => v + vecMat(y[i], w[`h${l}.proj`])[c]));
    x = x.map((r) => {
      const up = vecMat(layerNormRow(r, w[`h${l}.ln2.g`].data, w[`h${l}.ln2.b`].data), w[`h${l}.up`]).map((
        v,
      ) => Math.max(0, v));
      const down = vecMat(up, w[`h${l}.down`]);
      return r.map((v, c) => v + down[c]);
    });
  }
  return x.map((r, i) => {
    const hf = layerNormRow(r, w["lnf.g"].data, w["lnf.b"].data);
    const logits = Array.from({ length: cfg.vocab }, (_, v) => {
      let s = 0;
      for (let c = 0; c < d; c++) s += hf[c] * w.wte.data[v * d + c];
      return s;
    });
    const max = Math.max(...logits), z = logits.reduce((a, v) => a + Math.exp(v - max), 0);
    return logits[seq[i + 1]] - max - Math.log(z);
  });
}
