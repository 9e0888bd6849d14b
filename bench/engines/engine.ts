// The contract every training engine implements; sweeps drive engines only through it.

/** One run of a sweep: a method (preset + overrides) under one seed, with engine-specific settings. */
export interface RunConfig {
  /** Folder name under `<sweep>/runs/`, e.g. "ace-grpo_a1_softplus_sum_s2". */
  runId: string;
  /** Engine name: "tabular" | "tfjs" | "verl". */
  engine: string;
  /** Method label shown in reports, e.g. "grpo", "ace-grpo". */
  method: string;
  /** Preset the method starts from ("grpo" | "dapo" | "ace-grpo" | "ace-dapo"). */
  preset: string;
  /** Training seed; every random choice of the run derives from it. */
  seed: number;
  /** Resolved algorithm options (the RL core's AlgoConfig: preset merged with overrides). */
  algo: Record<string, unknown>;
  /** Engine-specific settings (world for tabular; model, SFT, task and RL schedule for tfjs; cluster for verl). */
  settings: Record<string, unknown>;
  /** Evaluation: samples per problem, k values, and how often (in RL steps; the final step is always evaluated). */
  eval: { n: number; ks: number[]; every: number };
}

/** What an engine may report while it runs. */
export interface RunHooks {
  onProgress(step: number, total: number): void;
}

/** A training engine. `run` must be resumable: called again on a folder with checkpoints, it continues. */
export interface Engine {
  name: string;
  /** Work shared by all runs of a sweep (e.g. the SFT base model), written under `<sweepDir>/base/`. */
  prepare?(
    sweep: { settings: Record<string, unknown>; seed: number },
    sweepDir: string,
    hooks?: RunHooks,
  ): Promise<void>;
  run(run: RunConfig, runDir: string, sweepDir: string, hooks: RunHooks): Promise<void>;
}

/** One line of a run's eval.jsonl: a graded evaluation sample (engines add their own `meta`). */
export interface EvalSample {
  /** RL step the policy was evaluated at (0 = before RL). */
  step: number;
  dataset: string;
  problemId: string;
  /** Sample index within the problem, 0 … n−1. */
  sample: number;
  correct: boolean;
  /** The grader's status: correct | wrong | no_answer | parse_error | timeout. */
  status: string;
  extracted: string | null;
  rule?: string;
  meta?: Record<string, unknown>;
}
