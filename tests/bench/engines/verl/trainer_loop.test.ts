// VERL 0.7.0's real trainer loop on CPU: the generated launch.sh of an ACE-GRPO run (verl.trainer.main_ppo) and an
// ACE-DAPO run (recipe.dapo.main_dapo) runs for real, with real Ray, transformers, datasets, tensordict, VERL's
// RLHFDataset, TaskRunner.run and fit(), and the real Qwen2.5 BPE tokenizer; only what needs a GPU is replaced
// (fixtures/verl_standins.py: the worker groups, by a tiny random Qwen2 policy and reference on CPU, and the rollout
// server, by responses in the forms models write). Checks: ACE's advantages against a recomputation from the
// batch's own log-probs; every reward equals acebench's strict grade of the response; the step count; a second
// launch of the finished run trains nothing; VERL's per-step metrics reach metrics.jsonl; the workers' PYTHONPATH
// keeps the caller's entries. Needs the venv of .ci/setup_verl_venv.sh; skips with a message otherwise.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists, readJsonl } from "../../../../common/fs.ts";
import type { MathRecord } from "../../../../datasets/mod.ts";
import { gradeMany } from "../../../../evaluators/mod.ts";
import { expandRuns } from "../../../../bench/sweep/mod.ts";
import type { SweepConfig } from "../../../../bench/sweep/mod.ts";
import {
  exportVerlData,
  ingestVerlDumps,
  verlRunPlan,
  writeRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { assert, assertEquals, ok } from "../../../assert.ts";
import {
  graderCommand,
  TINY_VERL_BATCH,
  TOKENIZER_DIR,
  VENV_PYTHON,
  VERL_SHARED,
  verlVenvMissing,
} from "./verl_venv.ts";
import { skipping } from "../../../external_inputs.ts";
import {
  type ActorLog,
  maxRelativeDiff,
  recomputeAce,
  recordPlan,
  runCommand as run,
} from "./trainer_loop_common.ts";

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const fixtures = here("./fixtures/");
const records: MathRecord[] = JSON.parse(readFileSync(join(fixtures, "records.json"), "utf8"));
const STEPS = 2;
const ALPHA = 1;
const MAX_RESPONSE = 48;

// Four minutes on two cores: CI (CI=true) runs it only when asked (ACEBENCH_VERL_LOOP=1), to stay in its budget.
const reason = Deno.env.get("CI") === "true" && Deno.env.get("ACEBENCH_VERL_LOOP") !== "1"
  ? "CI=true without ACEBENCH_VERL_LOOP=1 (about 4 minutes on two cores)"
  : verlVenvMissing();
skipping("VERL's real trainer loop", reason);

/** A two-run sweep (ACE-GRPO, ACE-DAPO) at toy scale on one "GPU", the fixture problems as train and test data. */
function sweepConfig(modelDir: string, logFile: string): SweepConfig {
  return {
    name: "verl-trainer-loop",
    engine: "verl",
    seeds: [0],
    methods: [
      { name: "ace-grpo", preset: "ace-grpo", overrides: { ace: { alpha: ALPHA } } },
      {
        name: "ace-dapo",
        preset: "ace-dapo",
        overrides: { ace: { alpha: ALPHA }, overlong: { buffer: 16 } },
      },
    ],
    settings: {
      model: modelDir,
      python: VENV_PYTHON,
      verlVersion: "0.7.0", // the release whose dependencies install here (../shared/verl/verl-0.7.0)
      nodes: 1,
      gpusPerNode: 1,
      maxPromptLength: 512,
      maxResponseLength: MAX_RESPONSE,
      ...TINY_VERL_BATCH,
      projectName: "acebench-trainer-loop",
      extraOverrides: [
        // the stand-ins load acebench's own hook (ace_verl.install) first, then replace the GPU parts
        "++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=verl_standins.install",
        `++ray_kwargs.ray_init.runtime_env.env_vars.STANDIN_LOG=${JSON.stringify(logFile)}`,
        `++ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_GRADER=${JSON.stringify(graderCommand())}`,
        "++ray_kwargs.ray_init.num_cpus=2",
        "++ray_kwargs.ray_init.include_dashboard=False",
        "++ray_kwargs.ray_init.object_store_memory=200000000",
        "data.dataloader_num_workers=0",
        "trainer.val_before_train=True",
      ],
    },
    rl: { steps: STEPS },
    eval: { n: 2, ks: [1, 2], every: 1 },
  } as unknown as SweepConfig;
}

Deno.test({
  name: "verl trainer loop: launch.sh runs VERL 0.7.0's TaskRunner.run → fit() for GRPO and DAPO on CPU",
  ignore: reason !== null,
  sanitizeResources: false,
  fn: async () => {
    const dir = mkdtempSync(join(tmpdir(), "acebench-verl-loop-"));
    try {
      const modelDir = join(dir, "tiny-qwen2");
      run(VENV_PYTHON, [join(fixtures, "tiny_model.py"), TOKENIZER_DIR, modelDir], {}, "tiny model");
      const sweepDir = join(dir, "sweep");
      const sweep = sweepConfig(modelDir, join(dir, "standin.jsonl"));
      await exportVerlData(
        sweepDir,
        { trainDatasets: ["math500"], valDatasets: ["aime2025"], template: "boxed", dataSources: {} },
        (name) => Promise.resolve(records.filter((r) => r.dataset === name)),
      );
      const verlRoot = join(VERL_SHARED, "verl-0.7.0");
      for (const runConfig of expandRuns(sweep)) {
        const plan = verlRunPlan(runConfig, { name: sweep.name, rl: sweep.rl, dir: sweepDir }, {
          VERL_ROOT: verlRoot,
        });
        const runDir = join(sweepDir, "runs", runConfig.runId);
        writeRunPlan(plan, runDir);
        // config.json and the validation filter, as a sweep writes them: ingest checks the dumps' completeness
        await recordPlan(sweepDir, runDir, runConfig, plan.maxPromptLength);
        const logFile = join(dir, "standin.jsonl");
        rmSync(logFile, { force: true });
        const env = {
          // the caller's own entries, which the workers must keep: the stand-ins and Hydra
          PYTHONPATH: `${fixtures}:${join(VERL_SHARED, "hydra-1.3.2")}`,
          RAY_TMPDIR: join(dir, "ray"),
          RAY_DEDUP_LOGS: "0",
          CUDA_VISIBLE_DEVICES: "",
          TOKENIZERS_PARALLELISM: "false",
          HF_HUB_OFFLINE: "1",
        };
        mkdirSync(env.RAY_TMPDIR, { recursive: true });
        const launch = join(runDir, "verl", "launch.sh");
        run("bash", [launch], env, `${runConfig.runId} launch.sh`);
        const events = readJsonl<ActorLog & { step?: number; trainer?: string }>(logFile);
        const updates = events.filter((e) => e.event === "update_actor");
        assertEquals(updates.length, STEPS, `${runConfig.runId}: one actor update per step`);
        ok(
          events.some((e) => e.event === "init_workers"),
          "stand-in workers were installed in the TaskRunner",
        );
        assertEquals(
          events.filter((e) => e.event === "save_checkpoint").map((e) => e.step),
          [1, 2],
        );

        // reward = acebench's strict grade of the same response, on every rollout; ±1 (pm1) by VERL's manager
        const pairs = updates.flatMap((u) =>
          u.response.map((prediction, i) => ({ prediction, gold: u.gold[i] }))
        );
        const graded = await gradeMany(pairs.map((p) => ({ ...p, strict: true })), { workers: 0 });
        const accs = updates.flatMap((u) => u.acc!);
        assertEquals(accs, graded.map((g) => g.correct), "reward acc = grade --strict");
        // the score: 1 if correct, else 0 (binary) or −1 (pm1), plus DAPO's overlong penalty past max − buffer tokens
        const { rewardScheme, overlong } = runConfig.algo;
        const lengths = updates.flatMap((u) => u.length);
        const want = graded.map((g, i) => {
          const base = g.correct ? 1 : rewardScheme === "pm1" ? -1 : 0;
          if (!overlong.enabled) return base;
          const expected = MAX_RESPONSE - overlong.buffer;
          return base + Math.min(-((lengths[i] - expected) / overlong.buffer) * overlong.factor, 0);
        });
        const scores = updates.flatMap((u) => u.score);
        scores.forEach((s, i) => ok(Math.abs(s - want[i]) < 1e-5, `score ${s}, expected ${want[i]}`));
        ok(graded.some((g) => g.correct) && graded.some((g) => !g.correct), "both verdicts occur");

        // ACE's advantages against a recomputation from the batch's own old − ref log-probs
        let maxRel = 0;
        let amplified = 0;
        for (const u of updates) {
          assert(u.ref_log_prob !== null, "ACE runs have a reference policy");
          const want = recomputeAce(u, ALPHA, (i) => !u.acc![i]);
          maxRel = Math.max(maxRel, maxRelativeDiff(u.advantage, want));
          u.advantage.forEach((a, i) => {
            if (!u.acc![i] && a < 0) amplified++;
          });
        }
        ok(maxRel < 1e-4, `${runConfig.runId}: ACE advantages differ by ${maxRel} (relative)`);
        ok(amplified > 0, "some incorrect rollouts got a penalty");

        // the finished run, launched again, trains nothing (and validates nothing)
        rmSync(logFile, { force: true });
        const again = run("bash", [launch], env, `${runConfig.runId} second launch.sh`);
        // (ace_verl prints "nothing left to train" from the TaskRunner actor; Ray's log forwarding may drop the line
        // when the driver exits at once, so the test reads what the workers did instead)
        const second = readJsonl<{ event: string }>(logFile);
        ok(second.some((e) => e.event === "init_workers"), `the second start ran:\n${again.slice(-2000)}`);
        for (const event of ["generate", "update_actor", "save_checkpoint"]) {
          assertEquals(second.filter((e) => e.event === event).length, 0, `second launch: ${event}`);
        }

        // VERL's own metrics per step, from its file logger, reach metrics.jsonl; the dumps ingest
        const summary = await ingestVerlDumps(runDir);
        assertEquals(summary.steps, [0, 1, 2]);
        const metrics = readJsonl<Record<string, number>>(join(runDir, "metrics.jsonl"));
        assertEquals(metrics.map((m) => m.step), [1, 2]);
        for (const m of metrics) {
          for (const field of ["entropy", "clipfrac", "response_length", "ace_overconf_frac", "accuracy"]) {
            ok(typeof m[field] === "number", `${runConfig.runId} step ${m.step}: ${field} in metrics.jsonl`);
          }
        }
        // the first start's file; the second stopped before VERL's logger opened one
        assertEquals(readdirSync(join(runDir, "verl_metrics")).length, 1);
        ok(exists(join(runDir, "checkpoints", "global_step_2")));
        console.log(
          `${runConfig.runId}: ${STEPS} steps, ${pairs.length} rewards = grade, max relative ΔA ${
            maxRel.toExponential(1)
          }`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
