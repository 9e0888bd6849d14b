// The tfjs Engine: `prepare` trains the shared SFT base model, `run` does RL from it with periodic evaluation,
// metrics, status and bit-for-bit resumable checkpoints.
import { join } from "node:path";
import { appendJsonl, atomicWrite, exists, readJson, readJsonl, writeJson } from "../../../common/fs.ts";
import { Rng } from "../../../common/prng.ts";
import { type AlgoConfig, resolveAlgo } from "../../core/mod.ts";
import type { Engine, RunConfig, RunHooks } from "../engine.ts";
import { loadBundle, loadLatestCheckpoint, saveBundle, saveCheckpoint } from "./checkpoint.ts";
import {
  createModel,
  createOptimizer,
  getOptimizerStateAsync,
  getWeightsAsync,
  initBackend,
  type OptimizerState,
  setOptimizerState,
  setWeights,
} from "./model.ts";
import { type EvalRecord, evaluate, policyFrom, type SavedModel } from "./policy.ts";
import { rlStep } from "./rl.ts";
import {
  baseKey,
  modelConfig,
  resolveSettings,
  settingsTokenizer,
  taskSets,
  type TfjsSettings,
} from "./settings.ts";
import { sftWorkers, trainSft } from "./sft.ts";

/** The base model bundle: saved model plus the key of the settings it was trained with. */
interface BaseBundle extends SavedModel {
  key: string;
  seed: number;
}

/** A run checkpoint: weights, Adam state, the run's Rng state and the step it follows. */
interface RunCheckpoint extends SavedModel {
  step: number;
  rng: number[];
  optimizer: OptimizerState;
}

/** Where the shared base model lives. */
export function baseDir(sweepDir: string): string {
  return join(sweepDir, "base");
}

/** Seed of the shared evaluation samples of the base model (fixed, so every run shares them). */
const BASE_EVAL_SEED = 1_000_003;

/**
 * Train the SFT base model into `<sweepDir>/base/` (model/, sft_metrics.jsonl, base.json), unless one trained
 * with the same settings is already there; a base trained with other settings is an error.
 */
export async function prepareBase(
  sweep: { settings: Record<string, unknown>; seed: number },
  sweepDir: string,
  hooks?: RunHooks,
) {
  const s = resolveSettings(sweep.settings, "tfjs settings");
  const dir = baseDir(sweepDir);
  const key = baseKey(s);
  if (exists(join(dir, "base.json"))) {
    const old = readJson<{ key: string }>(join(dir, "base.json"));
    if (old.key !== key) {
      throw new Error(`${dir}: base model trained with other settings (key ${old.key} ≠ ${key})`);
    }
    return;
  }
  const backend = await initBackend(s.backend);
  const tok = settingsTokenizer(s);
  const rng = Rng.seeded(sweep.seed).derive("sft");
  const model = createModel(modelConfig(s, tok), rng.derive("init"));
  const t0 = performance.now();
  const log = await trainSft(model, tok, taskSets(s).train, s, rng, hooks?.onProgress);
  const seconds = (performance.now() - t0) / 1000;
  atomicWrite(join(dir, "sft_metrics.jsonl"), log.map((l) => JSON.stringify(l)).join("\n") + "\n");
  saveBundle(
    join(dir, "model"),
    { settings: s, weights: await getWeightsAsync(model), key, seed: sweep.seed } as BaseBundle,
  );
  writeJson(join(dir, "base.json"), {
    key,
    seed: sweep.seed,
    backend,
    sftWorkers: sftWorkers(s),
    sftSeconds: seconds,
    finalLoss: log.at(-1)?.loss ?? null,
  });
}

/** Merge a patch into status.json (the sweep runner writes it too, so existing fields are kept). */
function markStatus(runDir: string, patch: Record<string, unknown>): void {
  const path = join(runDir, "status.json");
  const old = exists(path) ? readJson<Record<string, unknown>>(path) : {};
  writeJson(path, { ...old, ...patch });
}

/** Keep only JSON lines whose step is ≤ `step` (drops what was written after the checkpoint we resume from). */
function truncateAfter(path: string, step: number): void {
  if (!exists(path)) return;
  const kept = readJsonl<{ step: number }>(path).filter((r) => r.step <= step);
  atomicWrite(path, kept.map((r) => JSON.stringify(r)).join("\n") + (kept.length ? "\n" : ""));
}

/**
 * Base-model evaluation records for `n` samples per test problem, computed once per sweep and cached in
 * `base/eval-n<n>.jsonl` (deterministic, so two runs computing it at once write identical files).
 */
async function baseEval(
  base: BaseBundle,
  s: TfjsSettings,
  sweepDir: string,
  n: number,
): Promise<EvalRecord[]> {
  const path = join(baseDir(sweepDir), `eval-n${n}.jsonl`);
  if (exists(path)) return readJsonl<EvalRecord>(path);
  const records = await evaluate(policyFrom(base), taskSets(s).test, n, 0, BASE_EVAL_SEED);
  atomicWrite(path, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return records;
}

/** Steps at which a run evaluates: every `every` steps and always the last. */
function evalDue(step: number, total: number, every: number): boolean {
  return step === total || (every > 0 && step % every === 0);
}

/** RL from the shared base model, resuming from the newest checkpoint when there is one. */
export async function runRl(
  run: RunConfig,
  runDir: string,
  sweepDir: string,
  hooks: RunHooks,
): Promise<void> {
  const s = resolveSettings(run.settings, `run ${run.runId} settings`);
  const algo: AlgoConfig = resolveAlgo(run.preset, run.algo);
  const baseBundlePath = join(baseDir(sweepDir), "model");
  if (!exists(join(baseBundlePath, "state.json"))) {
    throw new Error(`${baseBundlePath}: no base model; the sweep must call the tfjs engine's prepare first`);
  }
  const base = loadBundle<BaseBundle>(baseBundlePath);
  if (base.key !== baseKey(s)) {
    throw new Error(`${baseBundlePath}: base model was trained with other settings`);
  }
  await initBackend(s.backend);
  markStatus(runDir, { state: "running", startedAt: new Date().toISOString() });
  // The sweep runner writes config.json; an engine called directly (tests, scripts) records its own.
  if (!exists(join(runDir, "config.json"))) {
    writeJson(join(runDir, "config.json"), { ...run, algo, settings: s });
  }

  const tok = settingsTokenizer(s);
  const { train, test } = taskSets(s);
  const ref = policyFrom(base).model;
  const policy = policyFrom(base);
  const opt = createOptimizer(policy.model, { lr: s.rl.lr, clipNorm: s.rl.clipNorm });
  let rng = Rng.seeded(run.seed).derive("rl");
  let step = 0;
  const metricsPath = join(runDir, "metrics.jsonl"), evalPath = join(runDir, "eval.jsonl");
  const ckptDir = join(runDir, "checkpoints");
  const resumed = loadLatestCheckpoint<RunCheckpoint>(ckptDir);
  if (resumed) {
    setWeights(policy.model, resumed.value.weights);
    setOptimizerState(opt, resumed.value.optimizer);
    rng = Rng.fromState(resumed.value.rng);
    step = resumed.step;
    truncateAfter(metricsPath, step);
    truncateAfter(evalPath, step);
  } else {
    atomicWrite(metricsPath, "");
    atomicWrite(evalPath, "");
    appendJsonl(evalPath, await baseEval(base, s, sweepDir, run.eval.n));
  }
  const total = s.rl.steps;
  hooks.onProgress(step, total);
  const ctx = { model: policy.model, ref, opt, tok, train, settings: s, algo, rng };
  while (step < total) {
    step++;
    let metrics;
    try {
      metrics = await rlStep(ctx, step);
    } catch (e) {
      const reason = `step ${step}: ${(e as Error).message}`;
      markStatus(runDir, { state: "failed", reason, finishedAt: new Date().toISOString() });
      throw new Error(reason);
    }
    appendJsonl(metricsPath, [metrics]);
    if (evalDue(step, total, run.eval.every)) {
      appendJsonl(evalPath, await evaluate(policy, test, run.eval.n, step, evalSeed(run.seed, step)));
    }
    if (step === total || step % s.rl.checkpointEvery === 0) {
      saveCheckpoint(
        ckptDir,
        step,
        {
          settings: s,
          weights: await getWeightsAsync(policy.model),
          step,
          rng: ctx.rng.state(),
          optimizer: await getOptimizerStateAsync(opt),
        } satisfies RunCheckpoint,
      );
    }
    hooks.onProgress(step, total);
  }
  markStatus(runDir, { state: "done", finishedAt: new Date().toISOString() });
}

/** Seed of the evaluation samples at `step` of a run (independent of the training stream, so resume-safe). */
function evalSeed(seed: number, step: number): number {
  return Rng.seeded(seed).derive(`eval|${step}`).int(2 ** 31);
}

/** The tfjs engine (name "tfjs"). */
export const tfjsEngine: Engine = {
  name: "tfjs",
  prepare: prepareBase,
  run: runRl,
};
