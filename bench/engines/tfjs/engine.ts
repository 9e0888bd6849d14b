// The tfjs Engine: `prepare` trains one SFT base model per base of the sweep; `run` drives the tfjs policy backend with the one RL
// loop from it, with periodic evaluation and bit-for-bit resumable checkpoints.
import { join } from "node:path";
import { rmSync } from "node:fs";
import { atomicWrite, exists, readJson, readJsonl, writeJson } from "../../../common/fs.ts";
import { Rng } from "../../../common/prng.ts";
import { fitOverlongBuffer } from "../../core/mod.ts";
import {
  type Engine,
  type RunBackend,
  type RunConfig,
  type RunHooks,
  type RunOutcome,
  runStream,
} from "../engine.ts";
import { runLoop } from "../loop.ts";
import { gradingOf } from "../registry.ts";
import { loadBundle, loadLatestCheckpoint, saveBundle, saveCheckpoint } from "./checkpoint.ts";
import {
  createModel,
  createOptimizer,
  getOptimizerStateAsync,
  getWeightsAsync,
  type OptimizerState,
  setOptimizerState,
  setWeights,
} from "./model.ts";
import { type EvalRecord, evaluate, policyFrom, type SavedModel } from "./policy.ts";
import { type RlContext, type TfjsGroup, tfjsPolicy } from "./rl.ts";
import {
  baseKey,
  type EvalProtocolSetting,
  modelConfig,
  resolveSettings,
  settingsTokenizer,
  taskSets,
  type TfjsSettings,
  threadsAsked,
} from "./settings.ts";
import { sftWorkers, trainSft } from "./sft.ts";
import { initEngineBackend } from "./auto.ts";
import type { BackendDecisionRecord as BackendDecision } from "../../../common/run_folder.ts";
import { backendInUse, initBackend } from "./backend.ts";
import { setThreads, stopThreads, threadsInUse } from "./ops/blas.ts";
import { parallelSampling } from "./parallel.ts";

/** The base model bundle: saved model plus the key of the settings it was trained with. */
interface BaseBundle extends SavedModel {
  key: string;
  seed: number;
}

/** A run checkpoint: weights, Adam state and step; no random state (a step's draws are keyed by its step, rl.ts). */
interface RunCheckpoint extends SavedModel {
  step: number;
  optimizer: OptimizerState;
}

/** Where base model `base` (0-based) of a sweep lives: `<sweepDir>/base/<base>/`. */
function baseDir(sweepDir: string, base: number): string {
  return join(sweepDir, "base", String(base));
}

/** Eval seed of base `base` at step 0: shared by the base's runs (base 0 keeps the seed of one-base sweeps). */
function baseEvalSeed(base: number): number {
  const BASE_EVAL_SEED = 1_000_003;
  return base === 0 ? BASE_EVAL_SEED : Rng.seeded(BASE_EVAL_SEED).derive(`base|${base}`).int(2 ** 31);
}

/**
 * Train SFT base `sweep.base` into `<sweepDir>/base/<base>/` (model/, sft_metrics.jsonl, base.json) from its own
 * seed, unless one trained with the same settings is there (other settings: an error); resumable bit-for-bit from
 * `sft-checkpoints/`. With `eval`, the base's step-0 evaluation is cached there too, once per base.
 */
export async function prepareBase(
  sweep: { settings: Record<string, unknown>; seed: number; base?: number; eval?: { n: number } },
  sweepDir: string,
  hooks?: RunHooks,
) {
  const s = resolveSettings(sweep.settings, "tfjs settings");
  // Back to one thread, no helpers, when the job ends (the sweep runs jobs in Workers).
  using _threads = { [Symbol.dispose]: stopThreads };
  const index = sweep.base ?? 0, dir = baseDir(sweepDir, index);
  const needsEval = sweep.eval !== undefined && !exists(join(dir, `eval-n${sweep.eval.n}.jsonl`));
  if (exists(join(dir, "base.json"))) {
    const old = readJson<{ key: string }>(join(dir, "base.json"));
    if (old.key !== baseKey(s)) {
      throw new Error(`${dir}: base model trained with other settings (key ${old.key} ≠ ${baseKey(s)})`);
    }
    if (needsEval) await runBackendDecision(s, dir);
  } else await trainBase(s, sweep.seed, index, dir, hooks);
  if (needsEval) {
    await baseEval(loadBundle<BaseBundle>(join(dir, "model")), s, sweepDir, index, sweep.eval!.n);
  }
}

/** SFT of base `index` from `seed` into `dir` (model/, sft_metrics.jsonl, base.json); the backend is started. */
async function trainBase(s: TfjsSettings, seed: number, index: number, dir: string, hooks?: RunHooks) {
  const key = baseKey(s), tok = settingsTokenizer(s);
  const backendDecision = await startBlasThreads(s, await initEngineBackend(s.backend, modelConfig(s, tok)));
  const rng = Rng.seeded(seed).derive("sft");
  const model = createModel(modelConfig(s, tok), rng.derive("init"));
  const t0 = performance.now();
  const checkpoints = join(dir, "sft-checkpoints");
  const log = await trainSft(model, tok, taskSets(s).train, s, rng, hooks?.onProgress, checkpoints);
  const seconds = (performance.now() - t0) / 1000;
  atomicWrite(join(dir, "sft_metrics.jsonl"), log.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const bundle: BaseBundle = { settings: s, weights: await getWeightsAsync(model), key, seed };
  saveBundle(join(dir, "model"), bundle);
  writeJson(join(dir, "base.json"), {
    key,
    base: index,
    seed,
    backend: backendDecision.backend,
    backendDecision,
    sftWorkers: sftWorkers(s),
    sftSeconds: seconds,
    finalLoss: log.at(-1)?.loss ?? null,
  });
  rmSync(checkpoints, { recursive: true, force: true }); // base.json is written: the base is complete
}

/**
 * Evaluation records of base model `index` for `n` samples per test problem (or an extra `protocol`'s), computed
 * once per base and cached in `base/<index>/eval-n<n>.jsonl` (`eval-<name>-n<n>-t<T>-p<top-p>.jsonl`;
 * deterministic, so two runs computing it at once write identical files).
 */
async function baseEval(
  base: BaseBundle,
  s: TfjsSettings,
  sweepDir: string,
  index: number,
  n: number,
  protocol?: EvalProtocolSetting,
): Promise<EvalRecord[]> {
  const name = protocol
    ? `eval-${protocol.name}-n${protocol.n}-t${protocol.temperature}-p${protocol.topP}-${
      protocol.problems ?? "all"
    }.jsonl`
    : `eval-n${n}.jsonl`;
  const path = join(baseDir(sweepDir, index), name);
  if (exists(path)) return readJsonl<EvalRecord>(path);
  const seed = protocolSeed(baseEvalSeed(index), protocol);
  const grader = tfjsGrading(sweepDir, s, { n, ks: [1] });
  const records = await evaluate(policyFrom(base), taskSets(s).test, n, 0, seed, grader, protocol);
  atomicWrite(path, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return records;
}

/** The evaluation seed of an extra protocol: derived from the main one by the protocol's name. */
function protocolSeed(seed: number, protocol?: EvalProtocolSetting): number {
  return protocol ? Rng.seeded(seed).derive(`protocol|${protocol.name}`).int(2 ** 31) : seed;
}

/**
 * The run as tfjs trains it: settings with defaults, and an overlong buffer larger than the response budget fitted
 * to it (`fitOverlongBuffer`), so config.json records the buffer the penalty uses.
 */
export function resolveTfjsRun(run: RunConfig): RunConfig<TfjsSettings> {
  const settings = resolveSettings(run.settings, `run ${run.runId} settings`);
  const algo = structuredClone(run.algo);
  algo.overlong.buffer = fitOverlongBuffer(algo.overlong.buffer, settings.rl.maxNewTokens);
  return { ...run, algo, settings };
}

/** How tfjs grades in this sweep (its recorded protocol); it grades in-process, so a timeout is refused. */
function tfjsGrading(sweepDir: string, s: TfjsSettings, e: { n: number; ks: number[] }): { strict: boolean } {
  const { strict, timeoutMs } = gradingOf("tfjs", sweepDir, s as unknown as Record<string, unknown>, e);
  if (timeoutMs !== null) {
    throw new Error(
      `${sweepDir}: protocol grader timeoutMs ${timeoutMs}: tfjs grades in-process, with no timeout`,
    );
  }
  return { strict };
}

/** The tfjs run backend: the policy of `tfjsPolicy` plus evaluation and bit-for-bit checkpoints. */
function tfjsRunBackend(run: RunConfig<TfjsSettings>, runDir: string, sweepDir: string, base: BaseBundle) {
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
    rng: runStream(run).derive("rl"),
    grader: tfjsGrading(sweepDir, s, run.eval),
  };
  const ckptDir = join(runDir, "checkpoints");
  const backend: RunBackend<TfjsGroup, Int32Array> = {
    ...tfjsPolicy(ctx),
    extraLogs: [],
    evaluate: async (step) => {
      const seed = evalSeed(run, step);
      const main = (protocol?: EvalProtocolSetting) =>
        step === 0
          ? baseEval(base, s, sweepDir, run.base ?? 0, run.eval.n, protocol)
          : evaluate(policy, test, run.eval.n, step, protocolSeed(seed, protocol), ctx.grader, protocol);
      // The main protocol, plus every `eval.protocols` one at step 0 and the last step.
      const samples = await main();
      if (step === 0 || step === s.rl.steps) {
        for (const protocol of s.eval.protocols ?? []) samples.push(...await main(protocol));
      }
      return { samples };
    },
    async save(step) {
      const checkpoint: RunCheckpoint = {
        settings: s,
        weights: await getWeightsAsync(policy.model),
        step,
        optimizer: await getOptimizerStateAsync(opt),
      };
      saveCheckpoint(ckptDir, step, checkpoint);
    },
    load() {
      const resumed = loadLatestCheckpoint<RunCheckpoint>(ckptDir);
      if (!resumed) return Promise.resolve(null);
      setWeights(policy.model, resumed.value.weights);
      setOptimizerState(opt, resumed.value.optimizer);
      return Promise.resolve(resumed.step);
    },
  };
  return { backend, model: policy.model };
}

/** A run's backend: `auto` reuses its base's recorded decision (one calibration per base); others start as asked. */
async function runBackendDecision(s: TfjsSettings, baseFolder: string): Promise<BackendDecision> {
  const info = join(baseFolder, "base.json");
  const recorded = s.backend === "auto" && exists(info)
    ? readJson<{ backendDecision?: BackendDecision }>(info).backendDecision
    : undefined;
  if (!recorded) {
    return startBlasThreads(s, await initEngineBackend(s.backend, modelConfig(s, settingsTokenizer(s))));
  }
  await initBackend(recorded.backend);
  return startBlasThreads(s, {
    ...recorded,
    reason: `${recorded.reason} (the calibration of the run's base, ${info})`,
  });
}

/** On blas, start the BLAS threads the settings ask for (`blasThreads`, 1 = the caller only); record them. */
async function startBlasThreads(s: TfjsSettings, decision: BackendDecision): Promise<BackendDecision> {
  if (backendInUse() !== "blas") {
    if ((s.blasThreads ?? 1) === 1) return decision;
    // Said and recorded, not dropped quietly: the run computes on one thread of its backend.
    console.error(
      `tfjs settings: blasThreads ${s.blasThreads} ignored: backend ${backendInUse()} has no BLAS`,
    );
    return { ...decision, blasThreads: { threads: 1, split: false } };
  }
  await setThreads(threadsAsked(s.blasThreads));
  return { ...decision, blasThreads: threadsInUse() };
}

/** RL from the run's base model, resuming from the newest checkpoint when there is one. */
async function runRl(
  run: RunConfig<TfjsSettings>,
  runDir: string,
  sweepDir: string,
  hooks: RunHooks,
): Promise<RunOutcome> {
  const s = run.settings,
    baseFolder = baseDir(sweepDir, run.base ?? 0),
    baseBundlePath = join(baseFolder, "model");
  if (!exists(join(baseBundlePath, "state.json"))) {
    throw new Error(`${baseBundlePath}: no base model; the sweep must call the tfjs engine's prepare first`);
  }
  const base = loadBundle<BaseBundle>(baseBundlePath);
  if (base.key !== baseKey(s)) {
    throw new Error(`${baseBundlePath}: base model was trained with other settings`);
  }
  using _threads = { [Symbol.dispose]: stopThreads };
  const decision = await runBackendDecision(s, baseFolder);
  hooks.onRecord?.({ backendDecision: decision });
  const { backend, model } = tfjsRunBackend(run, runDir, sweepDir, base);
  using _sampling = await parallelSampling(s, model); // sampling workers stop when runRl returns or throws
  const schedule = { steps: s.rl.steps, evalEvery: run.eval.every, checkpointEvery: s.rl.checkpointEvery };
  await runLoop(backend, run.algo, schedule, runDir, hooks);
  return "done";
}

/** Seed of the evaluation samples at `step` of a run (independent of the training stream, so resume-safe). */
function evalSeed(run: RunConfig<TfjsSettings>, step: number): number {
  return runStream(run).derive(`eval|${step}`).int(2 ** 31);
}

/** The tfjs engine (name "tfjs"). */
export const tfjsEngine: Engine<TfjsSettings> & { resolve: typeof resolveTfjsRun } = {
  name: "tfjs",
  prepare: prepareBase,
  resolve: resolveTfjsRun,
  run: runRl,
};
