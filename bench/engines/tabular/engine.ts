// The tabular engine: trains the explicit policy with the RL core and writes the standard run folder.
import { join } from "node:path";
import { appendJsonl, atomicWrite, exists, readJson, readJsonl, writeJson } from "../../../common/fs.ts";
import { Rng } from "../../../common/prng.ts";
import { type AlgoConfig, resolveAlgo } from "../../core/mod.ts";
import type { Engine, RunConfig, RunHooks } from "../engine.ts";
import { exactPassAtK, logProbs, type TabularParams, zeroParams } from "./policy.ts";
import { trainStep } from "./train.ts";
import { buildWorld, resolveSettings, type TabularSettings, type TabularWorld } from "./world.ts";

/** What a checkpoint holds: enough to continue bit-for-bit (the world is rebuilt from the seed). */
interface Checkpoint {
  step: number;
  shared: number[];
  perPrompt: number[];
  rng: number[];
}

/** k values of the exact pass@k log: the eval ks plus powers of two up to 256 (large k is cheap when exact). */
export function exactKs(evalKs: readonly number[]): number[] {
  const powers = Array.from({ length: 9 }, (_, i) => 2 ** i);
  return [...new Set([...evalKs, ...powers])].sort((a, b) => a - b);
}

function checkEval(run: RunConfig): void {
  const { n, ks, every } = run.eval ?? {};
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`${run.runId}: eval.n is ${n}; expected an integer ≥ 1`);
  }
  if (!Array.isArray(ks) || ks.some((k) => !Number.isInteger(k) || k < 1)) {
    throw new RangeError(`${run.runId}: eval.ks is ${JSON.stringify(ks)}; expected positive integers`);
  }
  if (!Number.isInteger(every) || every < 1) {
    throw new RangeError(`${run.runId}: eval.every is ${every}; expected an integer ≥ 1`);
  }
}

/** Sampled and exact evaluation at `step`: eval.jsonl gets n graded samples per prompt, exact.jsonl pass@k. */
function evaluate(
  world: TabularWorld,
  params: TabularParams,
  run: RunConfig,
  step: number,
  runDir: string,
): void {
  const rng = Rng.seeded(run.seed).derive(`tabular-eval/${step}`);
  const lines: unknown[] = [];
  for (let x = 0; x < world.prompts; x++) {
    const probs = logProbs(world, params, x).map(Math.exp);
    for (let sample = 0; sample < run.eval.n; sample++) {
      const s = rng.categorical(probs);
      const correct = world.correct[x * world.strategies + s] === 1;
      const status = correct ? "correct" : "wrong";
      lines.push({
        step,
        dataset: "tabular",
        problemId: `tabular/${x}`,
        sample,
        correct,
        status,
        extracted: `s${s}`,
      });
    }
  }
  appendJsonl(join(runDir, "eval.jsonl"), lines);
  const ks = exactKs(run.eval.ks);
  const pass = exactPassAtK(world, params, ks);
  appendJsonl(join(runDir, "exact.jsonl"), ks.map((k, i) => ({ step, k, passAtK: pass[i] })));
}

/** Keep only the records of steps ≤ `step` (after a crash the logs may run ahead of the last checkpoint). */
function truncateLog(path: string, step: number): void {
  const kept = readJsonl<{ step: number }>(path).filter((r) => r.step <= step);
  atomicWrite(path, kept.map((r) => JSON.stringify(r) + "\n").join(""));
}

function saveCheckpoint(runDir: string, step: number, params: TabularParams, rng: Rng): void {
  const ckpt: Checkpoint = {
    step,
    shared: [...params.shared],
    perPrompt: [...params.perPrompt],
    rng: rng.state(),
  };
  atomicWrite(join(runDir, "checkpoints", "state.json"), JSON.stringify(ckpt) + "\n");
}

/** Start fresh (evaluating the reference at step 0) or continue from the last checkpoint. */
function startOrResume(
  world: TabularWorld,
  run: RunConfig,
  runDir: string,
): { step: number; params: TabularParams; rng: Rng } {
  const ckptPath = join(runDir, "checkpoints", "state.json");
  if (exists(ckptPath)) {
    const ckpt = readJson<Checkpoint>(ckptPath);
    const expected = world.prompts * world.strategies;
    if (ckpt.perPrompt.length !== expected) {
      throw new Error(
        `${ckptPath}: perPrompt has ${ckpt.perPrompt.length} entries; the world needs ${expected}`,
      );
    }
    for (const log of ["metrics.jsonl", "eval.jsonl", "exact.jsonl"]) {
      truncateLog(join(runDir, log), ckpt.step);
    }
    const params = { shared: Float64Array.from(ckpt.shared), perPrompt: Float64Array.from(ckpt.perPrompt) };
    return { step: ckpt.step, params, rng: Rng.fromState(ckpt.rng) };
  }
  for (const log of ["metrics.jsonl", "eval.jsonl", "exact.jsonl"]) atomicWrite(join(runDir, log), "");
  const params = zeroParams(world);
  const rng = Rng.seeded(run.seed).derive("tabular-train");
  evaluate(world, params, run, 0, runDir);
  saveCheckpoint(runDir, 0, params, rng);
  return { step: 0, params, rng };
}

/** The resolved config.json of a run: algorithm and settings with every default filled in. */
export function resolvedRunConfig(run: RunConfig): RunConfig & { ace: AlgoConfig["ace"] } {
  const algo = resolveAlgo(run.preset, run.algo);
  const settings = resolveSettings(run.settings, `${run.runId}: settings`);
  return {
    ...run,
    algo: algo as unknown as Record<string, unknown>,
    ace: algo.ace,
    settings: { ...settings },
  };
}

/** Train one run to `settings.rl.steps`, resuming from `checkpoints/state.json` when present. */
async function runTabular(run: RunConfig, runDir: string, hooks: RunHooks): Promise<void> {
  const resolved = resolvedRunConfig(run);
  checkEval(run);
  const algo = resolved.algo as unknown as AlgoConfig;
  const settings = resolved.settings as unknown as TabularSettings;
  const world = buildWorld(settings, run.seed);
  writeJson(join(runDir, "config.json"), resolved);
  const startedAt = new Date().toISOString();
  writeJson(join(runDir, "status.json"), { state: "running", startedAt });
  try {
    let { step, params, rng } = startOrResume(world, run, runDir);
    const total = settings.rl.steps;
    while (step < total) {
      step++;
      const diagnostics = trainStep(world, params, algo, settings, rng);
      appendJsonl(join(runDir, "metrics.jsonl"), [{ step, ...diagnostics }]);
      if (step % run.eval.every === 0 || step === total) evaluate(world, params, run, step, runDir);
      if (step % settings.checkpointEvery === 0 || step === total) saveCheckpoint(runDir, step, params, rng);
      hooks.onProgress(step, total);
      if (step % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 0)); // let messages and signals in
    }
    writeJson(join(runDir, "status.json"), {
      state: "done",
      startedAt,
      finishedAt: new Date().toISOString(),
    });
  } catch (e) {
    const reason = (e as Error).message;
    writeJson(join(runDir, "status.json"), {
      state: "failed",
      reason,
      startedAt,
      finishedAt: new Date().toISOString(),
    });
    throw e;
  }
}

/** The tabular engine (`--engine tabular`): exact Pass@k on an explicit prompts × strategies policy. */
export const tabularEngine: Engine = {
  name: "tabular",
  run: (run, runDir, _sweepDir, hooks) => runTabular(run, runDir, hooks),
};
