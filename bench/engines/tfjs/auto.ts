// `backend: "auto"` for the engine: webgpu only where a short calibration run measured it faster than the CPU
// backend for the model and batch at hand, else blas where a BLAS loads, else wasm (then cpu). The decision is
// cached per shape and recorded by the engine.
import * as tf from "@tensorflow/tfjs-core";
import { Rng } from "../../../common/prng.ts";
import type { BackendDecisionRecord as BackendDecision } from "../../../common/run_folder.ts";
import { hasWebgpuAdapter, initBackend } from "./backend.ts";
import { blasError, blasInfo } from "./ops/blas.ts";
import { nativeError, nativeInfo } from "./ops/native.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  type ModelConfig,
  sampleAsync,
  tokenLogProbs,
  trainStepAsync,
} from "./model.ts";
import { disposeOptimizer } from "./model/adam.ts";

/** The decision with the BLAS it runs on (blas), or why there is none (auto on wasm: said once on stderr too). */
function withBlas(d: BackendDecision): BackendDecision {
  const blas = d.backend === "blas" ? blasInfo() : null;
  if (blas) return { ...d, blas, native: nativeInfo()?.library ?? `off: ${nativeError()}` };
  if (d.requested !== "auto" || d.backend !== "wasm" || !blasError()) return d;
  console.error(`backend auto: wasm, not blas: ${blasError()}`);
  return { ...d, reason: `${d.reason}; not blas: ${blasError()}` };
}

const decisions = new Map<string, BackendDecision>();

/** Rows of the calibration train step and sampling run (small, so that it costs seconds on wasm even for gpu). */
const CAL_TRAIN_ROWS = 4, CAL_SAMPLE_ROWS = 64, CAL_NEW = 8;

/** ms of one train step (after a warm-up) plus one short sampling run of `cfg` on the active backend. */
async function calibrate(cfg: ModelConfig): Promise<number> {
  const rng = Rng.seeded(0), model = createModel(cfg, rng.split());
  const opt = createOptimizer(model, { lr: 1e-3, clipNorm: 1 });
  const tokens = tf.tensor2d(
    Int32Array.from({ length: CAL_TRAIN_ROWS * cfg.context }, () => rng.int(cfg.vocab)),
    [CAL_TRAIN_ROWS, cfg.context],
    "int32",
  );
  const loss = () => tf.neg(tf.mean(tokenLogProbs(model, tokens).logp)) as tf.Scalar;
  const prompt = Math.max(1, Math.min(8, cfg.context - CAL_NEW));
  const prompts = Int32Array.from({ length: CAL_SAMPLE_ROWS * prompt }, () => rng.int(cfg.vocab));
  const draw = () =>
    sampleAsync(model, prompts, CAL_SAMPLE_ROWS, { maxNew: CAL_NEW, temperature: 1, topP: 1, rng });
  try {
    await trainStepAsync(model, opt, loss);
    await draw();
    const t0 = performance.now();
    await trainStepAsync(model, opt, loss);
    await draw();
    return performance.now() - t0;
  } finally {
    tokens.dispose();
    disposeModel(model);
    disposeOptimizer(opt);
  }
}

/**
 * Start the backend the settings name; "auto" keeps the faster of the CPU backend (blas, else wasm) and webgpu,
 * calibrated on `cfg`, where a WebGPU adapter exists (none: blas, else wasm, else cpu). Returns the decision.
 */
export async function initEngineBackend(requested: string, cfg: ModelConfig): Promise<BackendDecision> {
  if (requested !== "auto") {
    return withBlas({ requested, backend: await initBackend(requested), reason: "requested" });
  }
  const key = JSON.stringify(cfg), known = decisions.get(key);
  if (known) {
    await initBackend(known.backend);
    return known;
  }
  let decision: BackendDecision;
  if (!(await hasWebgpuAdapter())) {
    decision = withBlas({ requested, backend: await initBackend("auto"), reason: "no WebGPU adapter" });
  } else {
    const measured: Record<string, number> = {}, cpu = blasInfo() ? "blas" : "wasm";
    for (const b of [cpu, "webgpu"]) {
      try {
        await initBackend(b);
        measured[b] = Math.round(await calibrate(cfg));
      } catch (e) {
        console.error(`backend auto: ${b} calibration failed (${(e as Error).message.split("\n")[0]})`);
      }
    }
    const pick = measured.webgpu !== undefined && !(measured.webgpu >= (measured[cpu] ?? Infinity))
      ? "webgpu"
      : cpu;
    decision = withBlas({
      requested,
      backend: await initBackend(pick === "webgpu" ? pick : "auto"),
      reason:
        `calibration: one train step of ${CAL_TRAIN_ROWS} rows + sampling ${CAL_SAMPLE_ROWS} rows x ${CAL_NEW} tokens, ms`,
      measured,
    });
  }
  decisions.set(key, decision);
  return decision;
}
