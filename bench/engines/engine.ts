// The contract every training engine implements (sweeps drive engines only through it), and the policy-backend
// interface the one RL loop (loop.ts) drives.

import type { EvalSample, LearnedFields, RecordedConfig } from "../../common/run_folder.ts";
import { Rng } from "../../common/prng.ts";
import type { AlgoConfig, Num, PolicyLossFn } from "../core/mod.ts";

/** When a run is evaluated and how: n samples per problem, Pass@k at `ks`, every `every` RL steps and the last. */
export type EvalSpec = RecordedConfig["eval"];

/**
 * One run of a sweep, a method (preset + overrides) under one seed, with `algo` resolved; the engine's `resolve`
 * types its settings once, and that is what config.json records and the engine runs.
 */
export type RunConfig<S = Record<string, unknown>> = Omit<
  RecordedConfig<S, AlgoConfig>,
  "record" | "backendDecision"
>;

/** A run's root random stream: its seed's, derived by base b > 0 (base 0 keeps one-base sweeps' streams). */
export function runStream(run: { seed: number; base?: number }): Rng {
  const root = Rng.seeded(run.seed);
  return run.base ? root.derive(`base|${run.base}`) : root;
}

/** What an engine may report while it runs. */
export interface RunHooks {
  onProgress(step: number, total: number): void;
  /** Fields the engine learns while running (e.g. the backend `auto` chose), added to the run's config.json. */
  onRecord?(fields: LearnedFields): void;
}

/** How a run ended when it did not throw: trained to the end, or only planned (VERL without a launcher). */
export type RunOutcome = "done" | "planned";

/**
 * A training engine. `run` must be resumable: called again on a folder with checkpoints, it continues. It writes
 * metrics.jsonl, eval.jsonl and checkpoints; config.json and status.json belong to the sweep runner.
 */
export interface Engine<S = Record<string, unknown>> {
  name: string;
  /**
   * Work shared by the runs of one base model, once per base (tfjs: its SFT and step-0 evaluation under
   * `<sweepDir>/base/<base>/`); `seed` is the base's own training seed. Resumable like `run`.
   */
  prepare?(
    sweep: { settings: Record<string, unknown>; seed: number; base: number; eval?: EvalSpec },
    sweepDir: string,
    hooks?: RunHooks,
  ): Promise<void>;
  /** The run with settings validated (defaults filled) and the algorithm fitted to the engine; throws on bad input. */
  resolve?(run: RunConfig): RunConfig<S>;
  run(run: RunConfig<S>, runDir: string, sweepDir: string, hooks: RunHooks): Promise<RunOutcome | void>;
}

/** Per-token arrays of the core's [B, T] layout as a backend hands them over (sliceable). */
export type TokenArray = Float32Array | Float64Array;

/** One prompt's rollouts as the step recipe sees them; a backend adds what it needs to score them again. */
export interface RolloutGroup {
  /** 1/true where the grader accepted the rollout. */
  correct: ArrayLike<number | boolean>;
  /** Response lengths in tokens; null when rollouts have no length (never overlong). */
  lengths: Num | null;
  /** Rollouts the grader could not grade (timeout, internal error): not correct in `correct`, counted here. */
  ungraded?: number;
  /** A class per rollout from the backend's world (tfjs: the SFT method it reproduced); c is logged per class. */
  errorClasses?: readonly string[];
}

/** Whole groups of rollouts laid out for the core: `rows` is the backend's own view of them (tokens, actions). */
export interface StepBatch<R> {
  rows: R;
  B: number;
  T: number;
  oldLogp: TokenArray;
  mask: TokenArray;
}

/** A mini-batch ready for an update: the batch rows plus reference log-probs and final advantages. */
export interface MiniBatch<R> extends StepBatch<R> {
  refLogp: TokenArray;
  advantages: Float64Array;
}

/** What a backend's `update` gets: aggregation weights [B, T] and the core's loss at given log-probs. */
export interface UpdateRequest {
  /** The loss aggregation's per-token weights (the entropy bonus is aggregated with them). */
  weights: Float64Array;
  entropyCoef: number;
  /** The core's loss at log-probs and entropies [B, T] of the current parameters (padding is masked out). */
  lossAt(logp: Num, entropy: Num): ReturnType<PolicyLossFn>;
}

/**
 * An engine's policy as the one RL step drives it. Sampling draws from the run's seeded stream in a fixed order,
 * so a backend is deterministic and resumable bit-for-bit from `save`/`load`.
 */
export interface PolicyBackend<G extends RolloutGroup = RolloutGroup, R = unknown> {
  /** Groups generated per sampling round (prompts per step). */
  readonly groupsPerStep: number;
  /** Response budget in tokens (the overlong penalty's maximum length). */
  readonly maxResponseLength: number;
  /** Mini-batch updates per epoch and epochs per step. */
  readonly miniBatches: number;
  readonly ppoEpochs: number;
  /**
   * One round of `groupsPerStep` groups with their log-probs at sampling time; `step` (1-based) and `round`
   * (0-based, DAPO) key the random draws: two runs of one seed share prompts and uniforms (common random numbers).
   */
  sampleGroups(step: number, round: number): Promise<G[]>;
  /** The kept groups as one batch (the algorithm decides padding, e.g. Dr. GRPO's constant length). */
  toBatch(groups: G[], algo: AlgoConfig): StepBatch<R>;
  /** The rows at `indices`, in that order (a mini-batch, or the subset a PSR/NSR loss trains on). */
  selectRows(rows: R, indices: readonly number[], T: number): R;
  /** Reference-policy log-probs [B, T] of a batch. */
  refLogp(batch: StepBatch<R>): Promise<TokenArray>;
  /**
   * One optimiser step on a mini-batch: log-probs and entropy at the current parameters → `lossAt` → the
   * gradient of Σ dLogp·logp − entropyCoef·Σ w·H applied. Returns the gradient norm before clipping, or null.
   */
  update(mb: MiniBatch<R>, request: UpdateRequest): Promise<number | null>;
  /** Extra metrics of a step's groups (tfjs: which solution method each rollout used). */
  groupMetrics?(groups: G[]): Record<string, unknown>;
}

/** A backend the run loop can drive from start to end: a policy that also evaluates and checkpoints. */
export interface RunBackend<G extends RolloutGroup = RolloutGroup, R = unknown> extends PolicyBackend<G, R> {
  /** Log files besides metrics.jsonl and eval.jsonl that hold per-step records (truncated on resume). */
  readonly extraLogs: readonly string[];
  /** Graded samples at `step` for eval.jsonl, plus records for the extra logs (keyed by file name). */
  evaluate(step: number): Promise<{ samples: EvalSample[]; logs?: Record<string, unknown[]> }>;
  /** Save everything needed to continue after `step` (parameters, optimiser, the run's random stream). */
  save(step: number): Promise<void>;
  /** Restore the newest checkpoint and return its step, or null when there is none. */
  load(): Promise<number | null>;
}
