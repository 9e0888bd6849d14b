// A data-parallel replica (see parallel.ts): loads weights from the shared buffer, returns its rows' gradient.
import * as tf from "@tensorflow/tfjs-core";
import { Rng } from "../../../common/prng.ts";
import { createModel, initBackend, localLogits, type Model } from "./model.ts";
import { type FromWorker, maskedNll, type ToWorker } from "./parallel.ts";
import { setSplit } from "./ops/blas.ts";

/** The worker global, typed here (the repository type-checks against the window lib). */
const scope = self as unknown as {
  onmessage: (e: MessageEvent<ToWorker>) => void;
  postMessage(m: FromWorker, transfer?: Transferable[]): void;
};

let model: Model | null = null;
let weights: Float32Array | null = null;
let sampler: ReturnType<typeof localLogits> | null = null;

function loadWeights(): void {
  let off = 0;
  tf.tidy(() => {
    for (const v of model!.params.values()) {
      v.assign(tf.tensor(weights!.slice(off, off + v.size), v.shape, "float32"));
      off += v.size;
    }
  });
}

async function handle(msg: ToWorker): Promise<void> {
  const post = (m: FromWorker, transfer: Transferable[] = []) => scope.postMessage(m, transfer);
  if (msg.kind === "init") {
    await initBackend(msg.backend);
    setSplit(msg.blasSplit);
    model = createModel(msg.config, Rng.seeded(0));
    weights = new Float32Array(msg.weights);
    post({ kind: "ready" });
    return;
  }
  if (msg.kind === "sample-open" || msg.kind === "sample-next") {
    if (msg.kind === "sample-open") {
      sampler?.close();
      loadWeights();
      sampler = localLogits(model!, msg.rows);
    }
    const t = sampler!.next({ tokens: msg.tokens, t: msg.t });
    const logits = t.dataSync() as Float32Array;
    t.dispose();
    post({ kind: "logits", logits }, [logits.buffer as ArrayBuffer]); // dataSync returns a copy
    return;
  }
  if (msg.kind === "sample-close") {
    sampler?.close();
    sampler = null;
    return;
  }
  const t0 = performance.now();
  loadWeights();
  const t1 = performance.now();
  const vars = [...model!.params.values()];
  const { value, grads } = tf.variableGrads(() => maskedNll(model!, msg), vars);
  const t2 = performance.now();
  const flat = new Float32Array(weights!.length);
  let off = 0;
  for (const v of vars) {
    const g = grads[v.name];
    if (g) flat.set(g.dataSync() as Float32Array, off);
    off += v.size;
  }
  const loss = value.dataSync()[0];
  tf.dispose([value, ...Object.values(grads)]);
  const ms = { load: t1 - t0, compute: t2 - t1, read: performance.now() - t2 };
  post({ kind: "grads", loss, grads: flat, ms }, [flat.buffer]);
}

scope.onmessage = (e: MessageEvent<ToWorker>) => {
  handle(e.data).catch((err) => scope.postMessage({ kind: "error", message: (err as Error).message }));
};
