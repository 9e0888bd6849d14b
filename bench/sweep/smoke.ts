// `sweep --smoke`: any sweep config shrunk to seconds (two bases or seeds, two RL steps, a handful of problems,
// the engine's registry entry's `smoke` settings) while keeping its engine, methods, grid and Worker lanes. The
// name gains "-smoke" and the description says so: the numbers a smoke sweep reports are no result.
import type { EngineSpec } from "../engines/registry.ts";
import type { SweepConfig } from "./config.ts";
import { withOverrides } from "../core/mod.ts";

const SMOKE_STEPS = 2;
const SMOKE_N = 4;

/** The smoke version of a validated sweep for its engine's `spec` (the caller validates the result again); pure. */
export function smokeConfig(sweep: SweepConfig, spec: EngineSpec): SweepConfig {
  const { plansOnly = false } = spec.smoke;
  const design = sweep.bases !== undefined
    ? { bases: Math.min(sweep.bases, 2), seedsPerBase: 1 }
    : { seeds: (sweep.seeds ?? [0]).slice(0, 2) };
  const ks = [...new Set(sweep.eval.ks.filter((k) => k <= SMOKE_N).concat(1))].sort((a, b) => a - b);
  const rl: SweepConfig["rl"] = { ...sweep.rl, ...spec.smoke.rl, steps: SMOKE_STEPS };
  if (!plansOnly && "checkpointEvery" in rl) rl.checkpointEvery = 1;
  const { bases: _b, seeds: _s, seedsPerBase: _p, ...rest } = sweep;
  // A barely trained smoke model gets uniform groups, so DAPO's filter would exhaust its rounds: smoke runs
  // train on what the rounds found ("partial"), two rounds at most. An engine that only plans keeps its methods.
  const partial = { dynamicSampling: { maxRounds: 2, onExhausted: "partial" } };
  const methods = plansOnly
    ? sweep.methods
    : sweep.methods.map((m) => ({ ...m, overrides: withOverrides(m.overrides, partial) }));
  const what = plansOnly
    ? `only plans: ${JSON.stringify(spec.smoke.settings)}, nothing launched`
    : `${SMOKE_STEPS} RL steps, n = ${SMOKE_N}, tiny settings, DAPO's filter partial after 2 rounds`;
  return {
    ...rest,
    ...design,
    methods,
    name: `${sweep.name}-smoke`,
    description: `SMOKE RUN (--smoke: ${what}); its numbers are no result. ${sweep.description ?? ""}`.trim(),
    settings: withOverrides(sweep.settings, spec.smoke.settings),
    rl,
    eval: plansOnly ? sweep.eval : { n: SMOKE_N, ks, every: SMOKE_STEPS },
  };
}
