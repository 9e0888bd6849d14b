// Data-parallel training across Deno Workers: each worker holds a model replica on its own wasm backend and
// computes the gradient of its rows' share of the loss; the main side sums the gradients in worker order
// (deterministic), applies clipping + Adam to its model with the existing optimizer, and ships the new weights.
import * as tf from "@tensorflow/tfjs-core";
import { applyGradients, type Model, type Optimizer, tokenLogProbs } from "./model.ts";

/**
 * A batch for masked next-token cross-entropy: tokens [rows, cols] (int32, row-major) and a mask
 * [rows, maskCols] over the log-prob columns maskStart..maskStart+maskCols-1 (column t scores token t+1).
 * The loss is −Σ mask·logp / denom (denom defaults to Σ mask: the mean NLL over masked tokens).
 */
export interface MaskedBatch {
  tokens: Int32Array;
  rows: number;
  cols: number;
  mask: Float32Array;
  maskStart: number;
  maskCols: number;
  denom?: number;
}

/** An all-ones mask over every next-token position: the plain mean next-token cross-entropy. */
export function fullBatch(tokens: Int32Array, rows: number, cols: number): MaskedBatch {
  return {
    tokens,
    rows,
    cols,
    mask: new Float32Array(rows * (cols - 1)).fill(1),
    maskStart: 0,
    maskCols: cols - 1,
  };
}

/** The masked next-token loss −Σ mask·logp / denom of tokens [B, T] and mask [B, maskCols] (differentiable). */
export function maskedNll(
  model: Model,
  tokens: tf.Tensor2D,
  mask: tf.Tensor2D,
  maskStart: number,
  denom: number,
): tf.Scalar {
  return tf.tidy(() => {
    const logp = tokenLogProbs(model, tokens).logp;
    const cols = mask.shape[1];
    const part = cols === logp.shape[1] && maskStart === 0
      ? logp
      : tf.slice(logp, [0, maskStart], [logp.shape[0], cols]);
    return tf.div(tf.neg(tf.sum(tf.mul(part, mask))), denom) as tf.Scalar;
  });
}

/** Messages to a worker. */
export type ToWorker =
  | { kind: "init"; backend: string; config: Model["config"]; shapes: number[][]; weights: SharedArrayBuffer }
  | {
    kind: "step";
    tokens: Int32Array;
    rows: number;
    cols: number;
    mask: Float32Array;
    maskStart: number;
    denom: number;
  };

/** Messages from a worker: ready after init; a step's loss share and gradients (flat, params order). */
export type FromWorker =
  | { kind: "ready" }
  | { kind: "grads"; loss: number; grads: Float32Array }
  | { kind: "error"; message: string };

/** A worker with a one-message-at-a-time request/reply channel. */
class Replica {
  private pending: ((m: FromWorker) => void) | null = null;
  constructor(readonly worker: Worker) {
    worker.onmessage = (e: MessageEvent<FromWorker>) => this.settle(e.data);
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      this.settle({ kind: "error", message: e.message });
    };
  }
  private settle(m: FromWorker): void {
    const p = this.pending;
    this.pending = null;
    p?.(m);
  }
  /** Send a message and wait for the reply (throws on a worker error). */
  request(msg: ToWorker, transfer: Transferable[] = []): Promise<FromWorker> {
    return new Promise((resolve, reject) => {
      this.pending = (m) =>
        m.kind === "error" ? reject(new Error(`parallel worker: ${m.message}`)) : resolve(m);
      this.worker.postMessage(msg, transfer);
    });
  }
}

/** Number of logical cores (Deno's navigator.hardwareConcurrency), at least 1. */
export function coreCount(): number {
  return Math.max(1, navigator.hardwareConcurrency ?? 1);
}

/**
 * Data-parallel trainer: `step` splits a batch's rows across the workers, sums their gradients in worker
 * order, and applies the update to `model` with `opt` (the same clipping + Adam as `trainStep`). Workers read
 * the model's weights from a shared buffer that is refreshed after every update. Call `close()` when done.
 */
export class DataParallelTrainer {
  private constructor(
    private readonly model: Model,
    private readonly opt: Optimizer,
    private readonly replicas: Replica[],
    private readonly weights: Float32Array,
  ) {}

  /** Start `workers` workers (default: one per core) with replicas of `model` on the current backend. */
  static async create(model: Model, opt: Optimizer, workers = coreCount()): Promise<DataParallelTrainer> {
    if (!Number.isInteger(workers) || workers < 1) {
      throw new Error(`DataParallelTrainer: workers must be a positive integer, got ${workers}`);
    }
    const vars = [...model.params.values()];
    const size = vars.reduce((a, v) => a + v.size, 0);
    const weights = new Float32Array(new SharedArrayBuffer(size * 4));
    const url = new URL("./parallel_worker.ts", import.meta.url).href;
    const replicas = Array.from({ length: workers }, () => new Replica(new Worker(url, { type: "module" })));
    const trainer = new DataParallelTrainer(model, opt, replicas, weights);
    try {
      trainer.publishWeights();
      const init: ToWorker = {
        kind: "init",
        backend: tf.getBackend(),
        config: model.config,
        shapes: vars.map((v) => [...v.shape]),
        weights: weights.buffer as SharedArrayBuffer,
      };
      await Promise.all(replicas.map((r) => r.request(init)));
    } catch (e) {
      trainer.close();
      throw e;
    }
    return trainer;
  }

  /** Number of workers. */
  get workers(): number {
    return this.replicas.length;
  }

  /** Copy the model's current weights into the shared buffer the workers read. */
  private publishWeights(): void {
    let off = 0;
    for (const v of this.model.params.values()) {
      this.weights.set(v.dataSync() as Float32Array, off);
      off += v.size;
    }
  }

  /** The full-batch gradient (one Float32Array per parameter, params order) and loss, summed over workers. */
  async gradients(batch: MaskedBatch): Promise<{ loss: number; grads: Float32Array[] }> {
    const { rows, cols, maskCols } = batch;
    const denom = batch.denom ?? batch.mask.reduce((a, b) => a + b, 0);
    const n = this.replicas.length;
    const parts = this.replicas.map((r, i) => {
      const lo = Math.floor(i * rows / n), hi = Math.floor((i + 1) * rows / n);
      if (hi === lo) return Promise.resolve(null);
      return r.request({
        kind: "step",
        tokens: batch.tokens.slice(lo * cols, hi * cols),
        rows: hi - lo,
        cols,
        mask: batch.mask.slice(lo * maskCols, hi * maskCols),
        maskStart: batch.maskStart,
        denom,
      });
    });
    const replies = await Promise.all(parts);
    let loss = 0, sum: Float32Array | null = null;
    for (const m of replies) { // fixed worker order: the sum does not depend on which worker finished first
      if (!m || m.kind !== "grads") continue;
      loss += m.loss;
      if (!sum) sum = m.grads;
      else for (let j = 0; j < sum.length; j++) sum[j] += m.grads[j];
    }
    const grads: Float32Array[] = [];
    let off = 0;
    for (const v of this.model.params.values()) {
      grads.push(sum!.subarray(off, off + v.size));
      off += v.size;
    }
    return { loss, grads };
  }

  /** One data-parallel training step on `batch`; returns the loss and pre-clip gradient norm like `trainStep`. */
  async step(batch: MaskedBatch): Promise<{ loss: number; gradNorm: number }> {
    const { loss, grads } = await this.gradients(batch);
    const out = applyGradients(this.model, this.opt, grads, loss);
    this.publishWeights();
    return out;
  }

  /** Terminate the workers. */
  close(): void {
    for (const r of this.replicas) r.worker.terminate();
    this.replicas.length = 0;
  }
}
