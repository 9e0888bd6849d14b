// `sweep --smoke`: any sweep config shrunk to seconds (two bases or seeds, two RL steps, a handful of problems,
// a tiny tfjs model) while keeping its engine, methods, grid and Worker lanes, so a shipped config can be run
// end to end under its shipped command. The name gains "-smoke" and the description says so: the numbers a
// smoke sweep reports are no result.
import type { SweepConfig } from "./config.ts";

const SMOKE_STEPS = 2;
const SMOKE_N = 4;

/**
 * Engine settings shrunk per engine. VERL only plans: its settings stay (the plan is the real one) except
 * `launch`, which becomes "none", so a smoke sweep never starts a real job (`smokeNote` says so).
 */
const SHRINK: Record<SweepConfig["engine"], (s: Record<string, unknown>) => Record<string, unknown>> = {
  tabular: (s) => ({ ...s, prompts: 16, checkpointEvery: 1 }),
  tfjs: (s) => ({
    ...s,
    model: { ...(s.model as object), dModel: 16, heads: 2, layers: 1 },
    tasks: { ...(s.tasks as object), trainSize: 32, testSize: 6 },
    sft: { ...(s.sft as object), steps: 8, batchSize: 8, workers: 1 },
  }),
  verl: (s) => ({ ...s, launch: "none" }),
};

/** The line `sweep --smoke` prints for a VERL config that asks to launch (null: nothing to say). */
export function smokeNote(sweep: SweepConfig): string | null {
  const launch = sweep.settings.launch;
  if (sweep.engine !== "verl" || launch === undefined || launch === "none") return null;
  return `--smoke: VERL runs are only planned, never launched (settings.launch "${launch}" ignored)`;
}

/** The smoke version of a validated sweep (the caller validates the result again); pure. */
export function smokeConfig(sweep: SweepConfig): SweepConfig {
  const design = sweep.bases !== undefined
    ? { bases: Math.min(sweep.bases, 2), seedsPerBase: 1 }
    : { seeds: (sweep.seeds ?? [0]).slice(0, 2) };
  const ks = [...new Set(sweep.eval.ks.filter((k) => k <= SMOKE_N).concat(1))].sort((a, b) => a - b);
  const rl: SweepConfig["rl"] = { ...sweep.rl, steps: SMOKE_STEPS };
  if (sweep.engine === "tfjs") Object.assign(rl, { promptsPerStep: 2, groupSize: 2 });
  if (sweep.engine !== "verl" && "checkpointEvery" in rl) rl.checkpointEvery = 1;
  const { bases: _b, seeds: _s, seedsPerBase: _p, ...rest } = sweep;
  // A barely trained smoke model gets uniform groups, so DAPO's filter would exhaust its rounds: smoke runs
  // train on what the rounds found ("partial"), two rounds at most. VERL keeps its methods: it only plans.
  const methods = sweep.engine === "verl" ? sweep.methods : sweep.methods.map((m) => ({
    ...m,
    overrides: {
      ...m.overrides,
      dynamicSampling: {
        ...(m.overrides.dynamicSampling as object | undefined),
        maxRounds: 2,
        onExhausted: "partial",
      },
    },
  }));
  return {
    ...rest,
    ...design,
    methods,
    name: `${sweep.name}-smoke`,
    description:
      `SMOKE RUN (--smoke: ${SMOKE_STEPS} RL steps, n = ${SMOKE_N}, tiny settings, DAPO's filter partial after 2 rounds); its numbers are ` +
      `no result. ${sweep.description ?? ""}`.trim(),
    settings: SHRINK[sweep.engine](sweep.settings),
    rl,
    eval: sweep.engine === "verl" ? sweep.eval : { n: SMOKE_N, ks, every: SMOKE_STEPS },
  };
}
