// The VERL memory and cost plan: 7B at DAPO's lengths fits 8 × 80 GB only with the settings the plan picks,
// the plan's overrides reach VERL's keys, the counts match the arithmetic, and --dry-run prints a short
// table (the full overrides only with --verbose).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import { engineSpec } from "../../../../bench/engines/registry.ts";
import { describePlan, expandRuns, readSweepConfig } from "../../../../bench/sweep/mod.ts";
import {
  costTable,
  DAPO_RECIPE,
  estimateMemory,
  MODEL_SHAPES,
  planMemory,
  runCost,
  validateVerlSettings,
  verlRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { assert, assertEquals, ok } from "../../../assert.ts";

const Q7B = "Qwen/Qwen2.5-Math-7B";
const node8 = { model: Q7B, nodes: 1, gpusPerNode: 8 };

Deno.test("verl cost: 7B at DAPO's 2048 + 8192 tokens fits 8 × 80 GB with the planned offload / sequence parallelism", () => {
  const shape = MODEL_SHAPES[Q7B];
  const plain = estimateMemory(shape, DAPO_RECIPE, 8, {
    paramOffload: false,
    optimizerOffload: false,
    sequenceParallel: 1,
  });
  ok(!plain.fits, `no offload, no sp: ${plain.peak.toFixed(1)} GB per GPU should not fit`);
  ok(
    plain.rollout > 72,
    "rollout at 0.8 utilisation beside resident optimizer state is the problem the issue names",
  );
  // VERL's own recipe/dapo/test_dapo_7b_math.sh: param + optimizer offload, Ulysses sp 4, utilisation 0.8
  const verlScript = estimateMemory(shape, DAPO_RECIPE, 8, {
    paramOffload: true,
    optimizerOffload: true,
    sequenceParallel: 4,
  });
  ok(verlScript.fits, `VERL's 7B DAPO settings: ${verlScript.peak.toFixed(1)} GB`);
  const { memory, estimate } = planMemory(node8, DAPO_RECIPE);
  assert(estimate !== null && estimate.fits, "the plan fits");
  ok(memory.optimizerOffload || memory.paramOffload, "the plan offloads something at these lengths");
  ok(8 % memory.sequenceParallel === 0);
  ok(estimate.kvTokens > 10240, `KV cache holds ${estimate.kvTokens} tokens, at least one full sequence`);
  // a setting given in the sweep wins over the plan
  assertEquals(planMemory({ ...node8, sequenceParallel: 2 }, DAPO_RECIPE).memory.sequenceParallel, 2);
  // an unknown model gets VERL's defaults and no estimate
  assertEquals(planMemory({ ...node8, model: "/models/mine" }, DAPO_RECIPE).estimate, null);
});

Deno.test("verl cost: generations, validations and checkpoint storage as the issue counts them", () => {
  const settings = validateVerlSettings({ ...node8, valDatasets: ["math500", "aime2025"] });
  const cost = runCost({
    runId: "dapo_s0",
    settings,
    recipe: DAPO_RECIPE,
    steps: 200,
    eval: { n: 32, every: 20 },
    saveFreq: 20,
    dynamicSampling: true,
  });
  assertEquals(cost.generationsPerStep, 24_576); // 1536 prompts × 16, per generation round
  assertEquals(cost.validations, 11);
  assertEquals(cost.valGenerations, 11 * 16_960);
  ok(Math.abs(cost.checkpointBytes / 1e9 - 91.4) < 0.1, `${cost.checkpointBytes / 1e9} GB per checkpoint`);
  assertEquals(cost.checkpointPeakBytes, 2 * cost.checkpointBytes); // one kept + the one being written
  ok(cost.atLeast);
  const table = costTable([cost, { ...cost, runId: "dapo_s1" }]);
  ok(table.includes("total: 2 runs, 9.8M+ training and 373k validation generations"), table);
  ok(table.includes("generated tokens per GPU-second"));
});

Deno.test("verl cost: the planned memory settings reach VERL's FSDP and Ulysses keys", () => {
  const run: RunConfig = {
    runId: "ace-dapo_s0",
    method: "ace-dapo",
    preset: "ace-dapo",
    seed: 0,
    base: 0,
    algo: resolveAlgo("ace-dapo"),
    eval: { n: 4, ks: [1, 2, 4], every: 2 },
    settings: { ...node8, rl: { steps: 3 } },
  } as unknown as RunConfig;
  const plan = verlRunPlan(run, { name: "t", rl: { steps: 3 }, dir: "/tmp/acebench-cost" }, {});
  const m = plan.cost.memory;
  for (
    const o of [
      `actor_rollout_ref.actor.fsdp_config.param_offload=${m.paramOffload ? "True" : "False"}`,
      `actor_rollout_ref.actor.fsdp_config.optimizer_offload=${m.optimizerOffload ? "True" : "False"}`,
      `actor_rollout_ref.actor.ulysses_sequence_parallel_size=${m.sequenceParallel}`,
      `actor_rollout_ref.ref.ulysses_sequence_parallel_size=${m.sequenceParallel}`,
    ]
  ) ok(plan.overrides.includes(o), o);
});

Deno.test("verl cost: --dry-run prints the table; each run's overrides only with --verbose", async () => {
  const path = fileURLToPath(new URL("../../../../bench/configs/verl-qwen25-math-7b.json", import.meta.url));
  const sweep = readSweepConfig(path);
  const runs = expandRuns(sweep);
  const out = join("/tmp", "acebench-cost-dry-run-never-written");
  const short = await describePlan(sweep, runs, out, 2, engineSpec("verl"));
  const long = await describePlan(sweep, runs, out, 2, engineSpec("verl"), [], true);
  ok(short.includes("VERL cost and memory plan") && short.includes("GPU-hours"), short);
  ok(!short.includes("Hydra overrides:"));
  ok(long.includes("Hydra overrides:") && long.includes("launch script:"));
  const lines = short.split("\n").length;
  ok(lines < 4 * runs.length, `${lines} lines for ${runs.length} runs`);
  ok(long.split("\n").length > 20 * runs.length);
});
