// The tfjs Engine: `prepare` trains the shared SFT base model; `run` drives the tfjs policy backend with the one RL
// loop from it, with periodic evaluation and bit-for-bit resumable checkpoints.
import { join } from "node:path";
import { atomicWrite, exists, readJson, readJsonl, writeJson } from "../../../common/fs.ts";
import { Rng } from "../../../common/prng.ts";
import { fitOverlongBuffer } from "../../core/mod.ts";
import type { Engine, RunBackend, RunConfig, RunHooks, RunOutcome } from "../engine.ts";
import { runLoop } from "../loop.ts";
import { loadBundle, loadLatestCheckpoint, saveBundle, saveCheckpoint } from "./checkpoint.ts";
import {
  createModel,
  createOptimizer,
  getOptimizerStateAsync,
  getWeightsAsync,
  type Model,
  type OptimizerState,
  setOptimizerState,
  setWeights,
} from "./model.ts";
import { type EvalRecord, evaluate, policyFrom, type SavedModel } from "./policy.ts";
import { type RlContext, type TfjsGroup, tfjsPolicy, type Tokens } from "./rl.ts";
import {
  baseKey,
  modelConfig,
  resolveSettings,
  settingsTokenizer,
  taskSets,
  type TfjsSettings,
} from "./settings.ts";
import { sftWorkers, trainSft } from "./sft.ts";
import { type BackendDecision, initEngineBackend } from "./auto.ts";
import { initBackend } from "./backend.ts";
import { parallelSampling } from "./parallel.ts";

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
  const tok = settingsTokenizer(s);
  const backendDecision = await initEngineBackend(s.backend, modelConfig(s, tok));
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
    backend: backendDecision.backend,
    backendDecision,
    sftWorkers: sftWorkers(s),
    sftSeconds: seconds,
    finalLoss: log.at(-1)?.loss ?? null,
  });
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

/**
 * The run as the tfjs engine trains it: settings validated with defaults, and an overlong buffer larger than the
 * response budget (the presets' 4096 tokens) fitted to it (`fitOverlongBuffer`), so config.json records the
 * buffer the penalty uses.
 */
export function resolveTfjsRun(run: RunConfig): RunConfig<TfjsSettings> {
  const settings = resolveSettings(run.settings, `run ${run.runId} settings`);
  const algo = structuredClone(run.algo);
  algo.overlong.buffer = fitOverlongBuffer(algo.overlong.buffer, settings.rl.maxNewTokens);
  return { ...run, algo, settings };
}

/** The tfjs run backend: the policy of `tfjsPolicy` plus evaluation and bit-for-bit checkpoints. */
function tfjsRunBackend(
  run: RunConfig<TfjsSettings>,
  runDir: string,
  sweepDir: string,
  base: BaseBundle,
): { backend: RunBackend<TfjsGroup, Tokens>; model: Model } {
  const s = run.settings;
  const { train, test } = taskSets(s);
  const policy = policyFrom(base);
  const opt = createOptimizer(policy.model, { lr: s.rl.lr, clipNorm: s.rl.clipNorm });
  const ctx: RlContext = {
    model: policy.model,
    ref: policyFrom(base).model,
    opt,
    tok: settingsTokenizer(s),
    train,
    settings: s,
    algo: run.algo,
    rng: Rng.seeded(run.seed).derive("rl"),
  };
  const ckptDir = join(runDir, "checkpoints");
  const backend: RunBackend<TfjsGroup, Tokens> = {
    ...tfjsPolicy(ctx),
    extraLogs: [],
    evaluate: async (step) => ({
      samples: step === 0
        ? await baseEval(base, s, sweepDir, run.eval.n)
        : await evaluate(policy, test, run.eval.n, step, evalSeed(run.seed, step)),
    }),
    async save(step) {
      const checkpoint: RunCheckpoint = {
        settings: s,
        weights: await getWeightsAsync(policy.model),
        step,
        rng: ctx.rng.state(),
        optimizer: await getOptimizerStateAsync(opt),
      };
      saveCheckpoint(ckptDir, step, checkpoint);
    },
    load() {
      const resumed = loadLatestCheckpoint<RunCheckpoint>(ckptDir);
      if (!resumed) return Promise.resolve(null);
      setWeights(policy.model, resumed.value.weights);
      setOptimizerState(opt, resumed.value.optimizer);
      ctx.rng = Rng.fromState(resumed.value.rng);
      return Promise.resolve(resumed.step);
    },
  };
  return { backend, model: policy.model };
}

/**
 * The backend of a run: `auto` reuses the decision the sweep's base model recorded (one calibration per sweep,
 * not per run), any other choice is started as requested.
 */
async function runBackendDecision(s: TfjsSettings, sweepDir: string): Promise<BackendDecision> {
  const info = join(baseDir(sweepDir), "base.json");
  const recorded = s.backend === "auto" && exists(info)
    ? readJson<{ backendDecision?: BackendDecision }>(info).backendDecision
    : undefined;
  if (!recorded) return await initEngineBackend(s.backend, modelConfig(s, settingsTokenizer(s)));
  await initBackend(recorded.backend);
  return { ...recorded, reason: `${recorded.reason} (the sweep's calibration, base/base.json)` };
}

/** RL from the shared base model, resuming from the newest checkpoint when there is one. */
export async function runRl(
  run: RunConfig<TfjsSettings>,
  runDir: string,
  sweepDir: string,
  hooks: RunHooks,
): Promise<RunOutcome> {
  const s = run.settings;
  const baseBundlePath = join(baseDir(sweepDir), "model");
  if (!exists(join(baseBundlePath, "state.json"))) {
    throw new Error(`${baseBundlePath}: no base model; the sweep must call the tfjs engine's prepare first`);
  }
  const base = loadBundle<BaseBundle>(baseBundlePath);
  if (base.key !== baseKey(s)) {
    throw new Error(`${baseBundlePath}: base model was trained with other settings`);
  }
  const decision = await runBackendDecision(s, sweepDir);
  hooks.onRecord?.({ backendDecision: decision });
  const { backend, model } = tfjsRunBackend(run, runDir, sweepDir, base);
  using _sampling = await parallelSampling(s, model); // sampling workers stop when runRl returns or throws
  const schedule = { steps: s.rl.steps, evalEvery: run.eval.every, checkpointEvery: s.rl.checkpointEvery };
  await runLoop(backend, run.algo, schedule, runDir, hooks);
  return "done";
}

/** Seed of the evaluation samples at `step` of a run (independent of the training stream, so resume-safe). */
function evalSeed(seed: number, step: number): number {
  return Rng.seeded(seed).derive(`eval|${step}`).int(2 ** 31);
}

/** The tfjs engine (name "tfjs"). */
export const tfjsEngine: Engine<TfjsSettings> & { resolve: typeof resolveTfjsRun } = {
  name: "tfjs",
  prepare: prepareBase,
  resolve: resolveTfjsRun,
  run: runRl,
};
