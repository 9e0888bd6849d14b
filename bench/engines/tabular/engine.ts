// The tabular engine: the explicit policy as a backend of the one RL loop, writing the standard run folder.
import type { Engine, RunConfig } from "../engine.ts";
import { runLoop } from "../loop.ts";
import { tabularBackend } from "./backend.ts";
import { buildWorld, resolveSettings, type TabularSettings } from "./world.ts";

/**
 * The run as the tabular engine trains it: settings with every default filled in, and overlong shaping off
 * (a tabular rollout is one action, it has no length), so config.json records what is applied.
 */
function resolveTabularRun(run: RunConfig): RunConfig<TabularSettings> {
  const settings = resolveSettings(run.settings, `${run.runId}: settings`);
  const algo = structuredClone(run.algo);
  algo.overlong.enabled = false;
  return { ...run, algo, settings };
}

/**
 * The tabular engine (`--engine tabular`): exact Pass@k on an explicit prompts × strategies policy. Its base
 * model is the world: base b is world `worldSeed + b`, so a sweep with `bases: B` draws B worlds.
 */
export const tabularEngine: Engine<TabularSettings> & { resolve: typeof resolveTabularRun } = {
  name: "tabular",
  resolve: resolveTabularRun,
  async run(run, runDir, _sweepDir, hooks) {
    const world = buildWorld(run.settings, run.base ?? 0);
    const backend = tabularBackend(world, run, runDir);
    const schedule = {
      steps: run.settings.rl.steps,
      evalEvery: run.eval.every,
      checkpointEvery: run.settings.checkpointEvery,
    };
    await runLoop(backend, run.algo, schedule, runDir, hooks);
    return "done";
  },
};
