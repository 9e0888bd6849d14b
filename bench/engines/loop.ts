// The one RL loop: every engine is a PolicyBackend, and this file is the whole training program around it — the
// step recipe (sample → score → advantages → mini-batch updates → metrics) and the run loop (resume, truncate
// after resume, evaluation and checkpoint cadence, progress, failure reason).
import { join } from "node:path";
import { appendJsonl, atomicWrite, exists, readJsonl } from "../../common/fs.ts";
import { runFile } from "../../common/run_folder.ts";
import {
  aggregationWeights,
  type AlgoConfig,
  batchAdvantages,
  dynamicSample,
  errorClassDiagnostics,
  groupIdsOf,
  informativeGroup,
  meanUpdates,
  miniBatchRows,
  type Num,
  POLICY_LOSSES,
  scoreRollouts,
  trainingDiagnostics,
  trainingRows,
  type UpdateResult,
} from "../core/mod.ts";
import type {
  MiniBatch,
  PolicyBackend,
  RolloutGroup,
  RunBackend,
  RunHooks,
  StepBatch,
  TokenArray,
} from "./engine.ts";

/** One metrics.jsonl record. */
export type StepMetrics = Record<string, unknown>;

/** Draw this step's groups: one round, or DAPO's dynamic sampling until `groupsPerStep` informative ones. */
async function collectGroups<G extends RolloutGroup>(
  backend: PolicyBackend<G>,
  algo: AlgoConfig,
  step: number,
) {
  if (!algo.dynamicSampling.enabled) {
    const groups = await backend.sampleGroups(step, 0);
    return { groups, generatedGroups: groups.length, rounds: 1 };
  }
  return await dynamicSample(
    (round) => backend.sampleGroups(step, round),
    (g) => informativeGroup(g.correct),
    backend.groupsPerStep,
    algo.dynamicSampling.maxRounds,
    algo.dynamicSampling.onExhausted,
  );
}

/** Values at masked-out positions set to exactly zero (padding is never NaN), as doubles. */
function masked(values: Num, mask: Num): Float64Array {
  return Float64Array.from({ length: mask.length }, (_, i) => (mask[i] ? values[i] : 0));
}

/** Σ values, in order. */
function sum(values: Num): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s;
}

/** The rows `rows` of a batch, in order (a mini-batch, or the subset a PSR/NSR loss trains on). */
function selectBatch<R>(backend: PolicyBackend<RolloutGroup, R>, mb: MiniBatch<R>, rows: number[]) {
  const T = mb.T;
  const pick = <A extends TokenArray>(a: A) => {
    const out = new (a.constructor as new (n: number) => A)(rows.length * T);
    rows.forEach((r, i) => out.set(a.subarray(r * T, (r + 1) * T), i * T));
    return out;
  };
  return {
    rows: backend.selectRows(mb.rows, rows, T),
    B: rows.length,
    T,
    oldLogp: pick(mb.oldLogp),
    refLogp: pick(mb.refLogp),
    mask: pick(mb.mask),
    advantages: Float64Array.from(rows, (r) => mb.advantages[r]),
  };
}

/** One update through the backend with the registered policy loss; throws when it diverged. */
async function updateOnce<R>(backend: PolicyBackend<RolloutGroup, R>, mb: MiniBatch<R>, algo: AlgoConfig) {
  const loss = POLICY_LOSSES.get(algo.policyLoss);
  let result: ReturnType<typeof loss> | null = null;
  const gradNorm = await backend.update(mb, {
    weights: aggregationWeights(mb.mask, mb.B, mb.T, algo.lossAgg),
    entropyCoef: algo.entropyCoef,
    lossAt: (logp, entropy) => {
      result = loss({
        logp: masked(logp, mb.mask),
        oldLogp: mb.oldLogp,
        refLogp: mb.refLogp,
        advantages: mb.advantages,
        mask: mb.mask,
        B: mb.B,
        T: mb.T,
        entropy: masked(entropy, mb.mask),
      }, algo);
      return result;
    },
  });
  const r = result as ReturnType<typeof loss> | null;
  if (!r || !Number.isFinite(r.loss) || (gradNorm !== null && !Number.isFinite(gradNorm))) {
    throw new Error(`RL loss is ${r?.loss} (gradient norm ${gradNorm}): the run diverged`);
  }
  return { loss: r.loss, metrics: r.metrics, gradNorm };
}

/**
 * The updates of one step: `ppoEpochs` passes over `miniBatches` mini-batches of whole groups (see
 * `miniBatchRows`; default the backend's); returns the means over the updates and the last gradient norm.
 */
export async function updatePolicy<R>(
  backend: PolicyBackend<RolloutGroup, R>,
  batch: MiniBatch<R>,
  groupIds: Num,
  algo: AlgoConfig,
  miniBatches = backend.miniBatches,
): Promise<UpdateResult> {
  const results: UpdateResult[] = [];
  const parts = miniBatchRows(groupIds, miniBatches);
  for (let epoch = 0; epoch < backend.ppoEpochs; epoch++) {
    for (const [from, to] of parts) {
      const rows = Array.from({ length: to - from }, (_, i) => from + i);
      results.push(await updateOnce(backend, selectBatch(backend, batch, rows), algo));
    }
  }
  return meanUpdates(results);
}

/**
 * RL step `step`: collect groups (dynamic sampling when enabled), score them, reference log-probs, advantages
 * (estimator → ACE), the mini-batch updates, and the metrics record. A step left with no groups is logged as
 * skipped. Throws when the loss or gradient norm is not finite.
 */
export async function rlStep<G extends RolloutGroup, R>(
  backend: PolicyBackend<G, R>,
  algo: AlgoConfig,
  step: number,
): Promise<StepMetrics> {
  const t0 = performance.now();
  const { groups, generatedGroups, rounds } = await collectGroups(backend, algo, step);
  const tSample = performance.now();
  const correct = Uint8Array.from(groups.flatMap((g) => Array.from(g.correct, Number)));
  const lengths = groups.every((g) => g.lengths)
    ? Float64Array.from(groups.flatMap((g) => Array.from(g.lengths!)))
    : null;
  const rewards = scoreRollouts(correct, lengths, backend.maxResponseLength, algo);
  const groupIds = groupIdsOf(groups.map((g) => g.correct.length));
  const B = correct.length;
  const base: StepMetrics = {
    step,
    rounds,
    informative_frac: groups.length
      ? groups.filter((g) => informativeGroup(g.correct)).length / groups.length
      : 0,
    ...backend.groupMetrics?.(groups),
    // Per step, for backends whose grader can fail to grade (tfjs): rollouts rewarded as not correct, unknown.
    ...(groups.some((g) => g.ungraded !== undefined)
      ? { ungraded: groups.reduce((t, g) => t + (g.ungraded ?? 0), 0) }
      : {}),
  };
  if (B === 0) return { ...base, reward_mean: null, skipped: "no informative groups" };

  const batch: StepBatch<R> = backend.toBatch(groups, algo);
  const refLogp = await backend.refLogp(batch);
  refLogp.forEach((v, i) => (refLogp[i] = batch.mask[i] ? v : 0)); // padded positions: exactly zero, never NaN
  const adv = batchAdvantages({ ...batch, rewards, correct, groupIds, refLogp }, algo);
  let trained: MiniBatch<R> = { ...batch, refLogp, advantages: adv.finalAdvantages };
  let units: Num = groupIds, miniBatches = backend.miniBatches;
  const subset = trainingRows(correct, algo.trainOn);
  if (subset) {
    // The subset alone, in mini-batches of the full batch's mini-batch size (VERL splits by a fixed size).
    if (subset.length === 0) {
      return {
        ...base,
        reward_mean: sum(rewards) / B,
        accuracy: sum(correct) / B,
        skipped: `no ${algo.trainOn} rollouts`,
      };
    }
    trained = selectBatch(backend, trained, subset);
    units = Int32Array.from(subset, (_, i) => i);
    miniBatches = Math.ceil(subset.length / Math.ceil(B / backend.miniBatches));
  }
  const update = await updatePolicy(backend, trained, units, algo, miniBatches);
  const diag = trainingDiagnostics({
    ...adv,
    ...update,
    rewards,
    correct,
    groupsKeptFrac: groups.length / generatedGroups,
  });
  const classes = groups.every((g) => g.errorClasses) ? groups.flatMap((g) => [...g.errorClasses!]) : null;
  return {
    ...base,
    ...diag,
    ...(classes ? errorClassDiagnostics(correct, classes, adv.c) : {}),
    grad_norm: update.gradNorm,
    response_len: sum(batch.mask) / B,
    sample_s: (tSample - t0) / 1000,
    update_s: (performance.now() - tSample) / 1000,
  };
}

/** Keep only JSON lines whose step is ≤ `step` (drops what was written after the checkpoint we resume from). */
function truncateAfter(path: string, step: number): void {
  if (!exists(path)) return;
  const kept = readJsonl<{ step: number }>(path).filter((r) => r.step <= step);
  atomicWrite(path, kept.map((r) => JSON.stringify(r)).join("\n") + (kept.length ? "\n" : ""));
}

/**
 * Train `backend` to `schedule.steps` in `runDir`: resume from its newest checkpoint (dropping log lines written
 * after it) or start fresh with an evaluation at step 0; then step, log, and every `evalEvery` (`checkpointEvery`)
 * steps and at the last evaluate (checkpoint), reporting progress. A failing step throws "step N: reason".
 */
export async function runLoop<G extends RolloutGroup, R>(
  backend: RunBackend<G, R>,
  algo: AlgoConfig,
  schedule: { steps: number; evalEvery: number; checkpointEvery: number },
  runDir: string,
  hooks: RunHooks,
): Promise<void> {
  const metricsPath = runFile(runDir, "metrics"), evalPath = runFile(runDir, "eval");
  const logs = [metricsPath, evalPath, ...backend.extraLogs.map((f) => join(runDir, f))];
  const evaluate = async (step: number) => {
    const out = await backend.evaluate(step);
    appendJsonl(evalPath, out.samples);
    for (const [file, records] of Object.entries(out.logs ?? {})) appendJsonl(join(runDir, file), records);
  };
  let step = await backend.load();
  if (step !== null) {
    for (const log of logs) truncateAfter(log, step);
  } else {
    step = 0;
    for (const log of logs) atomicWrite(log, "");
    await evaluate(0);
  }
  const total = schedule.steps;
  hooks.onProgress(step, total);
  while (step < total) {
    step++;
    let metrics: StepMetrics;
    try {
      metrics = await rlStep(backend, algo, step);
    } catch (e) {
      throw new Error(`step ${step}: ${(e as Error).message}`);
    }
    appendJsonl(metricsPath, [metrics]);
    if (step === total || step % schedule.evalEvery === 0) await evaluate(step);
    if (step === total || step % schedule.checkpointEvery === 0) await backend.save(step);
    hooks.onProgress(step, total);
    if (step % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 0)); // let messages and signals in
  }
}
