// The tabular policy as a PolicyBackend of the one RL loop: rollouts are single actions (T = 1), the gradient
// seeded by dLogp is applied to the logits exactly (SGD), and the world is rebuilt from the seed on resume.
import { join } from "node:path";
import { atomicWrite, exists, readJson } from "../../../common/fs.ts";
import { Rng } from "../../../common/prng.ts";
import type { EvalSample } from "../../../common/run_folder.ts";
import {
  type MiniBatch,
  type RolloutGroup,
  type RunBackend,
  type RunConfig,
  runStream,
  type UpdateRequest,
} from "../engine.ts";
import {
  entropyOf,
  exactPassAtK,
  logitGradient,
  logProbs,
  type TabularParams,
  zeroParams,
} from "./policy.ts";
import type { TabularSettings, TabularWorld } from "./world.ts";

/** G rollouts on prompt x from the current policy. */
export function sampleGroup(
  world: TabularWorld,
  params: TabularParams,
  x: number,
  G: number,
  rng: Rng,
) {
  const logp = logProbs(world, params, x);
  const ref = logProbs(world, zeroParams(world), x); // the reference policy: zero parameters
  const probs = logp.map(Math.exp);
  return Array.from({ length: G }, () => {
    const s = rng.categorical(probs);
    return {
      x,
      strategy: s,
      oldLogp: logp[s],
      refLogp: ref[s],
      correct: world.correct[x * world.strategies + s] === 1,
    };
  });
}

/** One sampled rollout: prompt x, chosen strategy, its log-probs at sampling time and under the reference. */
export type Rollout = ReturnType<typeof sampleGroup>[number];

/** A group of tabular rollouts as the loop sees it. */
export interface TabularGroup extends RolloutGroup {
  rollouts: Rollout[];
}

/** k values of the exact pass@k log: the eval ks plus powers of two up to 256 (large k is cheap when exact). */
export function exactKs(evalKs: readonly number[]): number[] {
  const powers = Array.from({ length: 9 }, (_, i) => 2 ** i);
  return [...new Set([...evalKs, ...powers])].sort((a, b) => a - b);
}

/** What a checkpoint holds: enough to continue bit-for-bit (the world is rebuilt from the seed). */
interface Checkpoint {
  step: number;
  shared: number[];
  perPrompt: number[];
  rng: number[];
}

/** The tabular backend of a run in `runDir`, starting from the reference policy (zero parameters). */
export function tabularBackend(
  world: TabularWorld,
  run: RunConfig<TabularSettings>,
  runDir: string,
): RunBackend<TabularGroup, Rollout[]> & { params: TabularParams } {
  const settings = run.settings;
  if (run.algo.oracle) {
    throw new Error(
      `run ${run.runId}: the oracle control needs solution traces; the tabular engine has none (use tfjs)`,
    );
  }
  const ckptPath = join(runDir, "checkpoints", "state.json");
  let params = zeroParams(world);
  let rng = runStream(run).derive("tabular-train");
  return {
    get params() {
      return params;
    },
    groupsPerStep: Math.min(settings.rl.promptsPerStep, world.prompts),
    maxResponseLength: 1,
    miniBatches: settings.rl.miniBatches,
    ppoEpochs: settings.rl.ppoEpochs,
    extraLogs: ["exact.jsonl"],
    sampleGroups() {
      const order = rng.shuffle(Array.from({ length: world.prompts }, (_, x) => x));
      return Promise.resolve(
        order.slice(0, this.groupsPerStep).map((x) => {
          const rollouts = sampleGroup(world, params, x, settings.rl.groupSize, rng);
          return { rollouts, correct: rollouts.map((r) => r.correct), lengths: null };
        }),
      );
    },
    toBatch(groups) {
      const rows = groups.flatMap((g) => g.rollouts);
      const B = rows.length;
      return {
        rows,
        B,
        T: 1,
        oldLogp: Float64Array.from(rows, (r) => r.oldLogp),
        mask: new Float64Array(B).fill(1),
      };
    },
    selectRows: (rows, indices) => indices.map((i) => rows[i]),
    refLogp: (batch) => Promise.resolve(Float64Array.from(batch.rows, (r) => r.refLogp)),
    update(mb, request) {
      applyUpdate(world, params, settings, mb, request);
      return Promise.resolve(null);
    },
    evaluate(step) {
      return Promise.resolve(evaluate(world, params, run, step));
    },
    save(step) {
      const ckpt: Checkpoint = {
        step,
        shared: [...params.shared],
        perPrompt: [...params.perPrompt],
        rng: rng.state(),
      };
      atomicWrite(ckptPath, JSON.stringify(ckpt) + "\n");
      return Promise.resolve();
    },
    load() {
      if (!exists(ckptPath)) return Promise.resolve(null);
      const ckpt = readJson<Checkpoint>(ckptPath);
      const expected = world.prompts * world.strategies;
      if (ckpt.perPrompt.length !== expected) {
        throw new Error(
          `${ckptPath}: perPrompt has ${ckpt.perPrompt.length} entries; the world needs ${expected}`,
        );
      }
      params = { shared: Float64Array.from(ckpt.shared), perPrompt: Float64Array.from(ckpt.perPrompt) };
      rng = Rng.fromState(ckpt.rng);
      return Promise.resolve(ckpt.step);
    },
  };
}

/**
 * One SGD step on the logits: log π and entropy per rollout → the core's loss → for each prompt, the exact
 * gradient of Σ dLogp·log π(s) − entropyCoef·Σ w·H wrt its logits (`logitGradient`), applied to the per-prompt
 * logits and, summed over prompts, to the shared ones.
 */
function applyUpdate(
  world: TabularWorld,
  params: TabularParams,
  settings: TabularSettings,
  mb: MiniBatch<Rollout[]>,
  request: UpdateRequest,
): void {
  const S = world.strategies;
  const cache = new Map<number, Float64Array>();
  const logpOf = (x: number) => cache.get(x) ?? cache.set(x, logProbs(world, params, x)).get(x)!;
  const result = request.lossAt(
    mb.rows.map((r) => logpOf(r.x)[r.strategy]),
    mb.rows.map((r) => entropyOf(logpOf(r.x))),
  );
  const byPrompt = new Map<number, { strategy: number; dLogp: number; weight: number }[]>();
  mb.rows.forEach((r, i) => {
    const list = byPrompt.get(r.x) ?? byPrompt.set(r.x, []).get(r.x)!;
    list.push({ strategy: r.strategy, dLogp: result.dLogp[i], weight: request.weights[i] });
  });
  const sharedGrad = new Float64Array(S);
  const lr = settings.rl.lr;
  for (const [x, samples] of byPrompt) {
    const g = logitGradient(logpOf(x), samples, request.entropyCoef);
    for (let s = 0; s < S; s++) {
      sharedGrad[s] += g[s];
      params.perPrompt[x * S + s] -= lr * settings.perPromptLrScale * g[s];
    }
  }
  for (let s = 0; s < S; s++) params.shared[s] -= lr * settings.sharedLrScale * sharedGrad[s];
}

/** Sampled and exact evaluation at `step`: n graded samples per prompt for eval.jsonl, exact pass@k records. */
function evaluate(world: TabularWorld, params: TabularParams, run: RunConfig<TabularSettings>, step: number) {
  const rng = runStream(run).derive(`tabular-eval/${step}`);
  const samples: EvalSample[] = [];
  for (let x = 0; x < world.prompts; x++) {
    const probs = logProbs(world, params, x).map(Math.exp);
    for (let sample = 0; sample < run.eval.n; sample++) {
      const s = rng.categorical(probs);
      const correct = world.correct[x * world.strategies + s] === 1;
      samples.push({
        step,
        dataset: "tabular",
        problemId: `tabular/${x}`,
        sample,
        correct,
        status: correct ? "correct" : "wrong",
        extracted: `s${s}`,
      });
    }
  }
  const ks = exactKs(run.eval.ks);
  const pass = exactPassAtK(world, params, ks);
  return { samples, logs: { "exact.jsonl": ks.map((k, i) => ({ step, k, passAtK: pass[i] })) } };
}
