// VERL 0.9.0's real trainer loop on CPU, the twin of trainer_loop.test.ts (0.7.0): the generated launch.sh of an
// ACE-GRPO and an ACE-DAPO run (both verl.trainer.main_ppo: TaskRunnerV1 → PPOTrainerSync.fit(), DAPO as VERL's
// own Sync DAPO) runs for real, with real Ray, TransferQueue, the ReplayBuffer, the agent-loop and reward-loop
// workers, acebench's reward.py and grader, and the real Qwen2.5 BPE tokenizer; only what needs a GPU is replaced
// (fixtures/verl_standins_v090.py: the actor/reference worker group by a tiny random Qwen2 policy on CPU, vLLM by a
// server answering in the forms models write, the checkpoint engine). Checks: VERL's file logger writes every step;
// ACE's incorrect mask is the verifier's verdict (a correct answer cut at the length cap scores 0 under DAPO's
// overlong penalty and is not penalised); ACE's advantages against a recomputation; every verdict equals
// acebench's strict grade; DAPO evicts uniform groups and refills; a second launch of a finished run trains
// nothing; an all-uniform DAPO stream fails after maxRounds × genBatchSize prompts; a reward failure fails the run.
// Minutes of CPU: runs only with ACEBENCH_VERL_090_LOOP=1 (CI skips it, .ci/run says so).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists, readJsonl } from "../../../../common/fs.ts";
import type { MathRecord } from "../../../../datasets/mod.ts";
import { gradeMany } from "../../../../evaluators/mod.ts";
import { expandRuns } from "../../../../bench/sweep/mod.ts";
import type { SweepConfig } from "../../../../bench/sweep/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import {
  exportVerlData,
  ingestVerlDumps,
  verlRunPlan,
  writeRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { assert, assertEquals, ok } from "../../../assert.ts";
import { graderCommand, TOKENIZER_DIR, VENV_PYTHON, verl090Missing, VERL_SHARED } from "./verl_venv.ts";
import { skipping } from "../../../external_inputs.ts";
import {
  type ActorLog,
  maxRelativeDiff,
  recomputeAce,
  recordPlan,
  runAllowingFailure,
  runCommand,
} from "./trainer_loop_common.ts";

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const fixtures = here("./fixtures/");
const records: MathRecord[] = JSON.parse(readFileSync(join(fixtures, "records.json"), "utf8"));
const STEPS = 2;
const ALPHA = 1;
const MAX_RESPONSE = 48;
const TRAIN_BATCH = 2;
const GEN_BATCH = 2;
const MAX_ROUNDS = 4;

const GATE = "ACEBENCH_VERL_090_LOOP";
const reason = Deno.env.get(GATE) !== "1"
  ? `set ${GATE}=1 to run it (minutes of CPU; docs/measurements.md)`
  : verl090Missing();
skipping("VERL 0.9.0's real trainer loop", reason);

/** The two-run sweep (ACE-GRPO, ACE-DAPO) at toy scale; `env` goes to every Ray worker (the stand-ins read it). */
function sweepConfig(modelDir: string, env: Record<string, string>): SweepConfig {
  return {
    name: "verl-trainer-loop-090",
    engine: "verl",
    seeds: [0],
    methods: [
      { name: "ace-grpo", preset: "ace-grpo", overrides: { ace: { alpha: ALPHA } } },
      {
        name: "ace-dapo",
        preset: "ace-dapo",
        overrides: {
          ace: { alpha: ALPHA },
          overlong: { buffer: 16 },
          dynamicSampling: { enabled: true, maxRounds: MAX_ROUNDS, onExhausted: "error" },
        },
      },
    ],
    settings: {
      model: modelDir,
      python: VENV_PYTHON,
      verlVersion: "0.9.0",
      nodes: 1,
      gpusPerNode: 1,
      maxPromptLength: 512,
      maxResponseLength: MAX_RESPONSE,
      trainBatchSize: TRAIN_BATCH,
      genBatchSize: GEN_BATCH,
      ppoMiniBatchSize: TRAIN_BATCH,
      rolloutN: 4,
      tensorParallel: 1,
      trainDatasets: ["math500"],
      valDatasets: ["aime2025"],
      saveFreq: 1,
      projectName: "acebench-trainer-loop-090",
      extraOverrides: [
        // the stand-ins load acebench's own hook (ace_verl.install) first, then replace the GPU parts
        "++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=verl_standins_v090.install",
        ...Object.entries(env).map(([k, v]) =>
          `++ray_kwargs.ray_init.runtime_env.env_vars.${k}=${JSON.stringify(v)}`
        ),
        "++ray_kwargs.ray_init.num_cpus=2",
        "++ray_kwargs.ray_init.include_dashboard=False",
        "++ray_kwargs.ray_init.object_store_memory=200000000",
        "data.dataloader_num_workers=0",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "reward.num_workers=1",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
      ],
    },
    rl: { steps: STEPS },
    eval: { n: 2, ks: [1, 2], every: 1 },
  } as unknown as SweepConfig;
}

/** Plans every run of `sweep` into `sweepDir` (data exported once); the runs with their folders. */
async function planSweep(sweepDir: string, sweep: SweepConfig): Promise<{ run: RunConfig; dir: string }[]> {
  await exportVerlData(
    sweepDir,
    { trainDatasets: ["math500"], valDatasets: ["aime2025"], template: "boxed", dataSources: {} },
    (name) => Promise.resolve(records.filter((r) => r.dataset === name)),
  );
  const planned = [];
  for (const run of expandRuns(sweep)) {
    const plan = verlRunPlan(run, { name: sweep.name, rl: sweep.rl, dir: sweepDir }, {
      VERL_ROOT: join(VERL_SHARED, "verl-0.9.0"),
    });
    const dir = join(sweepDir, "runs", run.runId);
    writeRunPlan(plan, dir);
    // config.json and the validation filter, as a sweep writes them: ingest checks the dumps' completeness
    await recordPlan(sweepDir, dir, run, plan.maxPromptLength);
    planned.push({ run, dir });
  }
  return planned;
}

/** launch.sh's environment: the caller's PYTHONPATH entries (the stand-ins, Hydra), which the workers keep. */
function launchEnv(dir: string): Record<string, string> {
  const env = {
    PYTHONPATH: `${fixtures}:${join(VERL_SHARED, "hydra-1.3.2")}`,
    RAY_TMPDIR: join(dir, "ray"),
    RAY_DEDUP_LOGS: "0",
    CUDA_VISIBLE_DEVICES: "",
    TOKENIZERS_PARALLELISM: "false",
    HF_HUB_OFFLINE: "1",
  };
  mkdirSync(env.RAY_TMPDIR, { recursive: true });
  return env;
}

type Event = ActorLog & { step?: number; trainer?: string; gold?: string; form?: number; tokens?: number };

const trainGolds = new Set(records.filter((r) => r.dataset === "math500").map((r) => r.answer));

/** Prompts of the training set sent to the stand-in server (each prompt is `rolloutN` requests). */
function trainPrompts(events: Event[]): number {
  return events.filter((e) => e.event === "generate" && trainGolds.has(e.gold!)).length / 4;
}

/** VERL's own per-step metrics from its file logger (the run's verl_metrics/ folder, one file per start). */
function verlMetrics(runDir: string): { step: number; data: Record<string, unknown> }[] {
  const files = readdirSync(join(runDir, "verl_metrics"));
  return files.flatMap((f) =>
    readJsonl<{ step: number; data: Record<string, unknown> }>(join(runDir, "verl_metrics", f))
  );
}

Deno.test({
  name:
    "verl 0.9.0 trainer loop: launch.sh runs TaskRunnerV1 → PPOTrainerSync.fit() for ACE-GRPO and ACE-DAPO on CPU",
  ignore: reason !== null,
  sanitizeResources: false,
  fn: async () => {
    const started = Date.now();
    const dir = mkdtempSync(join(tmpdir(), "acebench-verl090-loop-"));
    try {
      const modelDir = join(dir, "tiny-qwen2");
      runCommand(VENV_PYTHON, [join(fixtures, "tiny_model.py"), TOKENIZER_DIR, modelDir], {}, "tiny model");
      const logFile = join(dir, "standin.jsonl");
      const env = launchEnv(dir);
      const runs = await planSweep(
        join(dir, "sweep"),
        sweepConfig(modelDir, { STANDIN_LOG: logFile, ACE_VERL_GRADER: graderCommand() }),
      );
      for (const { run, dir: runDir } of runs) {
        const dapo = run.algo.dynamicSampling.enabled;
        rmSync(logFile, { force: true });
        const launch = join(runDir, "verl", "launch.sh");
        runCommand("bash", [launch], env, `${run.runId} launch.sh`);
        const events = readJsonl<Event>(logFile);
        const updates = events.filter((e) => e.event === "update_actor");
        assertEquals(updates.length, STEPS, `${run.runId}: one actor update per step`);
        assertEquals(events.find((e) => e.event === "init_workers")?.trainer, "PPOTrainerSync");
        assertEquals(events.filter((e) => e.event === "save_checkpoint").map((e) => e.step), [1, 2]);

        // the verdict VERL carried (TransferQueue's reward_extra_info.acc) = acebench's strict grade, every rollout
        const pairs = updates.flatMap((u) =>
          u.response.map((prediction, i) => ({ prediction, gold: u.gold[i] }))
        );
        const graded = await gradeMany(pairs.map((p) => ({ ...p, strict: true })), { workers: 0 });
        const accs = updates.flatMap((u) => u.acc!);
        assertEquals(accs, graded.map((g) => g.correct), "verdict in TransferQueue = grade --strict");
        // the score: 1 if correct, else 0 (binary) or −1 (pm1), plus DAPO's overlong penalty past max − buffer tokens
        const { overlong, rewardScheme } = run.algo;
        const lengths = updates.flatMap((u) => u.length);
        const want = graded.map((g, i) => {
          const base = g.correct ? 1 : rewardScheme === "pm1" ? -1 : 0;
          if (!overlong.enabled) return base;
          return base +
            Math.min(
              -((lengths[i] - (MAX_RESPONSE - overlong.buffer)) / overlong.buffer) * overlong.factor,
              0,
            );
        });
        updates.flatMap((u) => u.score).forEach((s, i) =>
          ok(Math.abs(s - want[i]) < 1e-5, `${run.runId} rollout ${i}: score ${s}, expected ${want[i]}`)
        );
        ok(graded.some((g) => g.correct) && graded.some((g) => !g.correct), "both verdicts occur");

        // ACE's advantages = a recomputation with the verdict as "incorrect"; with the score's sign instead they
        // would differ where a correct answer was cut at the cap (score 0 under DAPO's overlong penalty)
        let maxRel = 0, bySign = 0, truncatedCorrect = 0, amplified = 0;
        for (const u of updates) {
          assert(u.ref_log_prob !== null, "ACE runs have a reference policy");
          maxRel = Math.max(maxRel, maxRelativeDiff(u.advantage, recomputeAce(u, ALPHA, (i) => !u.acc![i])));
          bySign = Math.max(
            bySign,
            maxRelativeDiff(u.advantage, recomputeAce(u, ALPHA, (i) => u.score[i] <= 0)),
          );
          u.acc!.forEach((acc, i) => {
            if (acc && u.length[i] === MAX_RESPONSE && Math.abs(u.score[i]) < 1e-6) truncatedCorrect++;
            if (!acc && u.advantage[i] < 0) amplified++;
          });
        }
        ok(maxRel < 1e-4, `${run.runId}: ACE advantages differ by ${maxRel} (relative)`);
        ok(amplified > 0, "some incorrect rollouts got a penalty");
        if (dapo) {
          ok(truncatedCorrect > 0, "a correct rollout cut at the cap scored 0 (DAPO's overlong penalty)");
          ok(bySign > 1e-3, `the score's sign would have penalised it (max relative change ${bySign})`);
          // DAPO evicted the uniform groups and refilled: more prompts than the train batches, evictions logged
          ok(
            trainPrompts(events) > STEPS * TRAIN_BATCH,
            `${trainPrompts(events)} training prompts generated`,
          );
          const evicted = verlMetrics(runDir).filter((m) =>
            Number(m.data["training/filter_groups/evicted_samples"] ?? 0) > 0
          );
          ok(evicted.length > 0, "training/filter_groups/evicted_samples > 0 in VERL's metrics");
        }

        // the finished run, launched again, trains nothing (and validates nothing)
        rmSync(logFile, { force: true });
        const again = runCommand("bash", [launch], env, `${run.runId} second launch.sh`);
        const second = readJsonl<Event>(logFile);
        ok(second.some((e) => e.event === "init_workers"), `the second start ran:\n${again.slice(-2000)}`);
        for (const event of ["generate", "update_actor", "save_checkpoint"]) {
          assertEquals(second.filter((e) => e.event === event).length, 0, `second launch: ${event}`);
        }

        // VERL's file logger (orjson to a "wb" file) wrote every step; metrics and dumps ingest
        const logged = verlMetrics(runDir).map((m) => m.step);
        assertEquals(
          [...new Set(logged)].sort(),
          [0, 1, 2],
          "VERL's file logger: steps 0 (validation), 1, 2",
        );
        const summary = await ingestVerlDumps(runDir);
        assertEquals(summary.steps, [0, 1, 2]);
        const metrics = readJsonl<Record<string, number>>(join(runDir, "metrics.jsonl"));
        assertEquals(metrics.map((m) => m.step), [1, 2]);
        for (const m of metrics) {
          for (const field of ["entropy", "response_length", "ace_overconf_frac", "accuracy"]) {
            ok(typeof m[field] === "number", `${run.runId} step ${m.step}: ${field} in metrics.jsonl`);
          }
        }
        ok(exists(join(runDir, "checkpoints", "global_step_2")));
        console.log(
          `${run.runId}: ${STEPS} steps, ${pairs.length} verdicts = grade, max relative ΔA ${
            maxRel.toExponential(1)
          }` +
            (dapo
              ? `, ${trainPrompts(events)} training prompts, ${truncatedCorrect} correct at the cap`
              : ""),
        );
      }

      // an all-uniform DAPO stream: every group evicted; the run fails once maxRounds × genBatchSize prompts
      // of the step are spent (VERL alone would sample until killed)
      const uniformDir = join(dir, "uniform");
      const [, uniformDapo] = await planSweep(
        uniformDir,
        sweepConfig(modelDir, {
          STANDIN_LOG: logFile,
          ACE_VERL_GRADER: graderCommand(),
          STANDIN_MODE: "uniform",
        }),
      );
      rmSync(logFile, { force: true });
      const uniform = runAllowingFailure("bash", [join(uniformDapo.dir, "verl", "launch.sh")], env);
      ok(uniform.code !== 0, "the all-uniform DAPO run failed");
      const budget = MAX_ROUNDS * GEN_BATCH;
      ok(
        uniform.text.includes(
          `dynamic sampling: only 0/${TRAIN_BATCH} informative groups at step 1 after ${budget}`,
        ),
        `the budget message:\n${uniform.text.slice(-3000)}`,
      );
      assertEquals(trainPrompts(readJsonl<Event>(logFile)), budget, "prompts generated = the step's budget");

      // a reward that fails (the grader exits at once): the groups fail in VERL's agent loop, and the run fails
      // at the first validation instead of going on with what is left
      const brokenDir = join(dir, "broken");
      const [brokenGrpo] = await planSweep(
        brokenDir,
        sweepConfig(modelDir, {
          STANDIN_LOG: logFile,
          ACE_VERL_GRADER: JSON.stringify(["bash", "-c", "exit 3"]),
        }),
      );
      const broken = runAllowingFailure("bash", [join(brokenGrpo.dir, "verl", "launch.sh")], env);
      ok(broken.code !== 0, "the run with a failing reward failed");
      ok(
        /prompt group\(s\) of validation at step 0 failed in VERL's agent loop/.test(broken.text),
        `the failed-group message:\n${broken.text.slice(-3000)}`,
      );
      console.log(`VERL 0.9.0 loop test: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    } finally {
      if (Deno.env.get("ACEBENCH_KEEP_TMP") === "1") console.log(`kept ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    }
  },
});
