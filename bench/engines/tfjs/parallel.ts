// Data-parallel training across Deno Workers: each worker holds a model replica on its own wasm backend and
// computes the gradient of its rows' share of the loss; the main side sums the gradients in worker order
// (deterministic), applies clipping + Adam to its model with the existing optimizer, and ships the new weights.
import * as tf from "@tensorflow/tfjs-core";
import {
  applyGradients,
  type LogitsRequest,
  type Model,
  type Optimizer,
  setSamplerDelegate,
  type StepResult,
  tokenLogProbs,
} from "./model.ts";
import { backendInUse, rowInvariant } from "./backend.ts";
import { threadsInUse } from "./ops/blas.ts";
import type { TfjsSettings } from "./settings.ts";

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

/** The masked next-token loss −Σ mask·logp / denom of a batch (differentiable; absent denom: Σ mask). */
export function maskedNll(model: Model, b: MaskedBatch): tf.Scalar {
  const denom = b.denom ?? b.mask.reduce((a, x) => a + x, 0);
  return tf.tidy(() => {
    const logp = tokenLogProbs(model, tf.tensor2d(b.tokens, [b.rows, b.cols], "int32")).logp;
    const part = b.maskCols === logp.shape[1] && b.maskStart === 0
      ? logp
      : tf.slice(logp, [0, b.maskStart], [logp.shape[0], b.maskCols]);
    return tf.div(
      tf.neg(tf.sum(tf.mul(part, tf.tensor2d(b.mask, [b.rows, b.maskCols])))),
      denom,
    ) as tf.Scalar;
  });
}

/** Messages to a worker. */
export type ToWorker =
  | {
    kind: "init";
    backend: string;
    /** Whether the caller's BLAS products are cut in two (ops/blas.ts `setThreads`): workers cut theirs alike. */
    blasSplit: boolean;
    config: Model["config"];
    shapes: number[][];
    weights: SharedArrayBuffer;
  }
  | { kind: "step" } & MaskedBatch & { denom: number }
  /** Start sampling `rows` rows from the shared weights: the prefill chunk (its logits are the reply). */
  | { kind: "sample-open"; rows: number; tokens: Int32Array; t: number }
  | { kind: "sample-next"; tokens: Int32Array; t: number }
  /** Free the sampling cache (no reply). */
  | { kind: "sample-close" };

/**
 * Messages from a worker: ready after init; a step's loss share and gradients (flat, params order) with where its
 * time went (ms: weight load, forward+backward, gradient read).
 */
export type FromWorker =
  | { kind: "ready" }
  | { kind: "grads"; loss: number; grads: Float32Array; ms: { load: number; compute: number; read: number } }
  | { kind: "logits"; logits: Float32Array }
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

/** Copy `model`'s weights into `into` (params order, flat). */
function publish(model: Model, into: Float32Array): void {
  let off = 0;
  for (const v of model.params.values()) {
    into.set(v.dataSync() as Float32Array, off);
    off += v.size;
  }
}

/** Workers holding replicas of a model, which read its weights from a shared buffer (`publish`). */
class Replicas {
  protected replicas: Replica[] = [];
  protected weights: Float32Array = new Float32Array(0);

  /** Start `workers` replicas of `model` on this backend, reading its weights from a new shared buffer. */
  protected async start(model: Model, workers: number, who: string): Promise<this> {
    if (!Number.isInteger(workers) || workers < 1) {
      throw new Error(`${who}: workers must be a positive integer, got ${workers}`);
    }
    const vars = [...model.params.values()];
    const weights = new Float32Array(new SharedArrayBuffer(vars.reduce((a, v) => a + v.size, 0) * 4));
    publish(model, weights);
    const url = new URL("./parallel_worker.ts", import.meta.url).href;
    const replicas = Array.from({ length: workers }, () => new Replica(new Worker(url, { type: "module" })));
    const init: ToWorker = {
      kind: "init",
      backend: backendInUse(),
      blasSplit: threadsInUse().split,
      config: model.config,
      shapes: vars.map((v) => [...v.shape]),
      weights: weights.buffer as SharedArrayBuffer,
    };
    try {
      await Promise.all(replicas.map((r) => r.request(init)));
    } catch (e) {
      for (const r of replicas) r.worker.terminate();
      throw e;
    }
    [this.replicas, this.weights] = [replicas, weights];
    return this;
  }

  /** Number of workers. */
  get workers(): number {
    return this.replicas.length;
  }

  /** Terminate the workers. */
  close(): void {
    for (const r of this.replicas) r.worker.terminate();
    this.replicas.length = 0;
  }
}

/** Rows [lo, hi) of worker i of n for a batch of `rows` rows (contiguous, in worker order). */
function share(i: number, n: number, rows: number): [number, number] {
  return [Math.floor(i * rows / n), Math.floor((i + 1) * rows / n)];
}

/**
 * Data-parallel trainer: `step` splits a batch's rows across the workers, sums their gradients in worker
 * order, and applies the update to `model` with `opt` (the same clipping + Adam as `trainStep`). Workers read
 * the model's weights from a shared buffer that is refreshed after every update. Call `close()` when done.
 */
export class DataParallelTrainer extends Replicas {
  private constructor(private readonly model: Model, private readonly opt: Optimizer) {
    super();
  }

  /** Start `workers` workers (default: one per core) with replicas of `model` on the current backend. */
  static create(model: Model, opt: Optimizer, workers = coreCount()): Promise<DataParallelTrainer> {
    return new DataParallelTrainer(model, opt).start(model, workers, "DataParallelTrainer");
  }

  /** Milliseconds per phase summed over the steps so far (for `bench model --profile`). */
  readonly times = { steps: 0, wait: 0, load: 0, compute: 0, read: 0, sum: 0, apply: 0, publish: 0 };

  /** The full-batch gradient (one Float32Array per parameter, params order) and loss, summed over workers. */
  async gradients(batch: MaskedBatch): Promise<{ loss: number; grads: Float32Array[] }> {
    const { rows, cols, maskCols } = batch;
    const denom = batch.denom ?? batch.mask.reduce((a, b) => a + b, 0);
    const n = this.replicas.length;
    const t0 = performance.now();
    const parts = this.replicas.map((r, i) => {
      const [lo, hi] = share(i, n, rows);
      if (hi === lo) return Promise.resolve(null);
      const tokens = batch.tokens.slice(lo * cols, hi * cols),
        mask = batch.mask.slice(lo * maskCols, hi * maskCols);
      return r.request({ kind: "step", ...batch, tokens, rows: hi - lo, mask, denom });
    });
    const replies = await Promise.all(parts);
    const t1 = performance.now();
    let loss = 0, sum: Float32Array | null = null;
    for (const m of replies) { // fixed worker order: the sum does not depend on which worker finished first
      if (!m || m.kind !== "grads") continue;
      loss += m.loss;
      for (const k of ["load", "compute", "read"] as const) this.times[k] += m.ms[k] / n;
      if (!sum) sum = m.grads;
      else for (let j = 0; j < sum.length; j++) sum[j] += m.grads[j];
    }
    this.times.steps++;
    this.times.wait += t1 - t0;
    this.times.sum += performance.now() - t1;
    const grads: Float32Array[] = [];
    let off = 0;
    for (const v of this.model.params.values()) {
      grads.push(sum!.subarray(off, off + v.size));
      off += v.size;
    }
    return { loss, grads };
  }

  /** One data-parallel training step on `batch`; returns the loss and pre-clip gradient norm like `trainStep`. */
  async step(batch: MaskedBatch): Promise<StepResult> {
    const { loss, grads } = await this.gradients(batch);
    const t0 = performance.now();
    const out = applyGradients(this.model, this.opt, grads, loss);
    const t1 = performance.now();
    publish(this.model, this.weights);
    this.times.apply += t1 - t0;
    this.times.publish += performance.now() - t1;
    return out;
  }
}

/**
 * Data-parallel sampling: while installed (`start`), `sampleAsync` on a model of the pool's shape splits its
 * rows across the workers, which run the forward passes on their shares and send back last-position logits
 * each step; the draws stay in the caller, in row order, so the samples equal the single-process ones. Each
 * sampling call first copies the model's weights into the buffer the workers read.
 */
export class SamplerPool extends Replicas {
  private busy = false;
  /** Sampling calls served by the workers so far. */
  served = 0;
  private constructor(private readonly config: Model["config"], private readonly minRows: number) {
    super();
  }

  /**
   * Start `workers` workers for models shaped like `model` and route `sampleAsync` through them for batches
   * of at least `minRows` rows (smaller ones, other shapes and concurrent calls run in this process).
   */
  static async start(model: Model, workers = coreCount(), minRows = 16): Promise<SamplerPool> {
    if (!rowInvariant()) {
      throw new Error(
        `SamplerPool: on ${backendInUse()} a row's logits depend on its batch, so pooled samples would differ`,
      );
    }
    const pool = await new SamplerPool({ ...model.config }, minRows).start(model, workers, "SamplerPool");
    setSamplerDelegate((m, rows) => pool.open(m, rows));
    return pool;
  }

  /** A logits source over the workers for `rows` rows of `model`, or null when this call should run locally. */
  private open(model: Model, rows: number) {
    const same = JSON.stringify(model.config) === JSON.stringify(this.config);
    if (this.busy || !same || rows < this.minRows || this.replicas.length === 0) return null;
    this.busy = true;
    this.served++;
    publish(model, this.weights);
    const n = this.replicas.length, vocab = model.config.vocab;
    const parts = this.replicas.map((_, i) => share(i, n, rows));
    let opened = false;
    return {
      next: async (req: LogitsRequest): Promise<Float32Array> => {
        const replies = await Promise.all(this.replicas.map((r, i) => {
          const [lo, hi] = parts[i];
          const tokens = req.tokens.slice(lo * req.t, hi * req.t);
          const msg: ToWorker = opened
            ? { kind: "sample-next", tokens, t: req.t }
            : { kind: "sample-open", rows: hi - lo, tokens, t: req.t };
          return r.request(msg, [tokens.buffer]);
        }));
        opened = true;
        const out = new Float32Array(rows * vocab);
        replies.forEach((m, i) => {
          if (m.kind === "logits") out.set(m.logits, parts[i][0] * vocab);
        });
        return out;
      },
      close: () => {
        if (opened) {
          for (const r of this.replicas) r.worker.postMessage({ kind: "sample-close" } satisfies ToWorker);
        }
        this.busy = false;
      },
    };
  }

  /** Stop routing `sampleAsync` here and terminate the workers. */
  override close(): void {
    setSamplerDelegate(null);
    super.close();
  }
}

/**
 * Data-parallel sampling for `model` as the settings ask (`sampleWorkers`: absent = 1, 0 = one per core; wasm
 * and cpu only), for a `using` declaration: the workers stop when the scope ends, also on a throw. A no-op for
 * one worker.
 */
export async function parallelSampling(s: TfjsSettings, model: Model) {
  const n = !rowInvariant() ? 1 : s.sampleWorkers === 0 ? coreCount() : s.sampleWorkers ?? 1;
  const pool = n > 1 ? await SamplerPool.start(model, n) : null;
  return { workers: pool?.workers ?? 1, [Symbol.dispose]: () => pool?.close() };
}
