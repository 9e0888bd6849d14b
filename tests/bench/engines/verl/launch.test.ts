// Golden tests for the generated Hydra overrides, launch script and Ray job command, plus the script's quoting
// (run under bash with a stand-in python that echoes its argv) and the errors for options VERL cannot express.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { atomicWrite } from "../../../../common/fs.ts";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import {
  ACE_SETUP_HOOK,
  REWARD_FUNCTIONS,
  verlRunPlan,
  workerPythonPath,
  writeRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { assert, assertEquals, ok, throws } from "../../../assert.ts";

const golden = new URL("./fixtures/golden/", import.meta.url);
// Stands for python3: `-c` (launch.sh's version check) prints $VERSION; otherwise records argv, env and cwd.
const FAKE_PYTHON = `#!/usr/bin/env bash
if [ "$1" = -c ]; then echo "$VERSION"; exit 0; fi
printf '%s\\0' "$@" > "$OUT"
printf '%s\\n' "$PYTHONPATH" "$ACE_VERL_ALPHA" "$ACE_VERL_CLIP" "$PWD" > "$OUT.env"
`;
const UPDATE = Deno.env.get("UPDATE_GOLDEN") === "1";
const SWEEP = { name: "paper", rl: { steps: 200 }, dir: "/work/sweeps/paper" };
const SWEEP_CLUSTER = "/shared/acebench/paper";

/** A run as the sweep expands it (settings include the sweep's rl block); verl v0.7.0 unless settings say. */
function makeRun(preset: string, settings: Record<string, unknown> = {}, overrides = {}): RunConfig {
  return {
    runId: `${preset}_s1`,
    engine: "verl",
    method: preset,
    preset,
    seed: 1,
    base: 0,
    algo: { ...resolveAlgo(preset, overrides) },
    settings: {
      model: "Qwen/Qwen2.5-Math-7B",
      clusterSweepDir: "/shared/acebench/paper",
      verlVersion: "0.7.0",
      ...settings,
      rl: { steps: 200 },
    },
    eval: { n: 32, ks: [1, 2, 4, 8, 16, 32], every: 20 },
  };
}

function checkGolden(name: string, actual: string): void {
  const path = fileURLToPath(new URL(name, golden));
  if (UPDATE) atomicWrite(path, actual);
  assertEquals(
    actual,
    readFileSync(path, "utf8"),
    `${name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it)`,
  );
}

// v0.7.0's golden files keep their names from when it was the only release; later releases get a folder each.
const GOLDEN_DIRS: Record<string, string> = { "0.7.0": "", "0.9.0": "verl-0.9.0/" };
for (const [version, dir] of Object.entries(GOLDEN_DIRS)) {
  for (const preset of ["grpo", "dapo", "ace-grpo", "ace-dapo"]) {
    Deno.test(`verl launch: ${preset} for verl ${version}: script and ray job command match the golden files`, () => {
      const plan = verlRunPlan(makeRun(preset, { verlVersion: version }), SWEEP, {});
      assertEquals(plan.verlVersion, version);
      checkGolden(`${dir}${preset}.launch.sh`, plan.script);
      checkGolden(`${dir}${preset}.ray_job.sh`, plan.files["verl/ray_job.sh"]);
      assertEquals(plan.files["verl/overrides.txt"], plan.overrides.join("\n") + "\n");
      assertEquals(plan.command, plan.rayJobCommand);
    });
  }
}

Deno.test("verl launch: overrides carry the preset's algorithm and the recipe's defaults", () => {
  const get = (overrides: string[], key: string) => {
    const hits = overrides.filter((o) => o.replace(/^\+*/, "").startsWith(`${key}=`));
    assertEquals(hits.length, 1, `${key} appears ${hits.length} times`);
    return hits[0].split("=").slice(1).join("=");
  };
  const dapo = verlRunPlan(makeRun("ace-dapo"), SWEEP, {});
  assertEquals(dapo.entrypoint, "recipe.dapo.main_dapo");
  assertEquals(get(dapo.overrides, "algorithm.adv_estimator"), "ace");
  assertEquals(get(dapo.overrides, "actor_rollout_ref.actor.clip_ratio_high"), "0.28");
  assertEquals(get(dapo.overrides, "actor_rollout_ref.actor.clip_ratio_c"), "10");
  assertEquals(get(dapo.overrides, "actor_rollout_ref.actor.use_kl_loss"), "True"); // ACE needs the reference
  assertEquals(get(dapo.overrides, "actor_rollout_ref.actor.kl_loss_coef"), "0");
  assertEquals(get(dapo.overrides, "actor_rollout_ref.rollout.n"), "16");
  assertEquals(get(dapo.overrides, "data.gen_batch_size"), "1536");
  assertEquals(get(dapo.overrides, "algorithm.filter_groups.max_num_gen_batches"), "10");
  assertEquals(get(dapo.overrides, "reward_model.reward_kwargs.overlong_buffer_cfg.len"), "4096");
  assertEquals(get(dapo.overrides, "actor_rollout_ref.rollout.val_kwargs.n"), "32");
  assertEquals(get(dapo.overrides, "actor_rollout_ref.rollout.val_kwargs.top_p"), "0.7");
  assertEquals(get(dapo.overrides, "trainer.total_training_steps"), "200");
  assertEquals(get(dapo.overrides, "trainer.test_freq"), "20");
  assertEquals(get(dapo.overrides, "ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_ALPHA"), '"1"');
  assertEquals(
    get(dapo.overrides, "trainer.validation_data_dir"),
    '"/shared/acebench/paper/runs/ace-dapo_s1/val_generations"',
  );
  const grpo = verlRunPlan(makeRun("grpo"), SWEEP, {});
  assertEquals(grpo.entrypoint, "verl.trainer.main_ppo");
  assertEquals(get(grpo.overrides, "algorithm.adv_estimator"), "grpo");
  assertEquals(get(grpo.overrides, "actor_rollout_ref.actor.kl_loss_coef"), "0.001");
  assertEquals(get(grpo.overrides, "actor_rollout_ref.actor.kl_loss_type"), "low_var_kl");
  ok(!grpo.overrides.some((o) => o.includes("filter_groups") || o.includes("ACE_VERL_ALPHA")));
  // baselines load ace_verl only to log the core's ACE diagnostics; turning that off drops the hook entirely
  assertEquals(
    get(grpo.overrides, "ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_METRICS_FILE"),
    '"/shared/acebench/paper/runs/grpo_s1/ace_metrics.jsonl"',
  );
  const quiet = verlRunPlan(makeRun("grpo", { aceDiagnostics: false }), SWEEP, {});
  // without diagnostics or ACE the hook still loads (ace_verl's fit() stops a finished run), with no ACE options
  ok(
    quiet.overrides.includes(`++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=${ACE_SETUP_HOOK}`),
  );
  ok(!quiet.overrides.some((o) => o.includes("env_vars.ACE_VERL")) && !quiet.script.includes("ACE_VERL"));
  // sweep grid values and settings reach the overrides
  const tuned = verlRunPlan(
    makeRun("ace-grpo", { rolloutN: 8, maxResponseLength: 3072 }, {
      "ace.alpha": 0.5,
      "ace.aggregation": "mean",
    }),
    SWEEP,
    {},
  );
  assertEquals(get(tuned.overrides, "actor_rollout_ref.rollout.n"), "8");
  assertEquals(get(tuned.overrides, "data.max_response_length"), "3072");
  assertEquals(get(tuned.overrides, "ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_ALPHA"), '"0.5"');
  assertEquals(
    get(tuned.overrides, "ray_kwargs.ray_init.runtime_env.env_vars.ACE_VERL_AGGREGATION"),
    '"mean"',
  );
  // extra overrides come last, so they win in Hydra
  const extra = verlRunPlan(makeRun("grpo", { extraOverrides: ["trainer.save_freq=7"] }), SWEEP, {});
  assertEquals(extra.overrides.at(-1), "trainer.save_freq=7");
});

Deno.test("verl launch: the Ray address comes from the config, else RAY_ADDRESS, else the shell's", () => {
  const fromConfig = verlRunPlan(makeRun("grpo", { rayAddress: "http://head:8265" }), SWEEP, {
    RAY_ADDRESS: "http://env:8265",
  });
  ok(fromConfig.rayJobCommand.includes("--address http://head:8265 "), fromConfig.rayJobCommand);
  const fromEnv = verlRunPlan(makeRun("grpo"), SWEEP, { RAY_ADDRESS: "http://env:8265" });
  ok(fromEnv.rayJobCommand.includes("--address http://env:8265 "), fromEnv.rayJobCommand);
  const deferred = verlRunPlan(makeRun("grpo"), SWEEP, {});
  ok(
    deferred.rayJobCommand.includes('--address "${RAY_ADDRESS:-http://127.0.0.1:8265}"'),
    deferred.rayJobCommand,
  );
  ok(
    deferred.rayJobCommand.includes(
      `--working-dir "$VERL_ROOT" --runtime-env-json "{\\"excludes\\": [\\".git\\"], \\"env_vars\\": {\\"VERL_ROOT\\": \\"$VERL_ROOT\\"}}" -- ` +
        "bash /shared/acebench/paper/runs/grpo_s1/verl/launch.sh",
    ),
    deferred.rayJobCommand,
  );
});

Deno.test("verl launch: VERL v0.7.0 settings (seed, prompt filter, checkpoints, reward scheme, overlong keys)", () => {
  const keys = (overrides: string[]) => overrides.map((o) => o.split("=")[0]);
  const grpo = verlRunPlan(makeRun("grpo"), SWEEP, {}).overrides;
  ok(grpo.includes("++actor_rollout_ref.rollout.engine_kwargs.vllm.seed=1"));
  ok(!keys(grpo).some((k) => k.endsWith("rollout.seed")), "RolloutConfig has no seed field");
  ok(grpo.includes("data.filter_overlong_prompts=True") && !keys(grpo).includes("data.truncation"));
  ok(grpo.includes("trainer.max_actor_ckpt_to_keep=1"));
  // every arm's reward is acebench's strict grade (reward.py, loaded from the run's own copy): GRPO's 0/1, DAPO's ±1
  ok(grpo.includes('custom_reward_function.path="/shared/acebench/paper/runs/grpo_s1/verl/reward.py"'));
  ok(grpo.includes(`custom_reward_function.name=${REWARD_FUNCTIONS.binary}`));
  const dapo = verlRunPlan(makeRun("dapo"), SWEEP, {}).overrides;
  ok(dapo.includes('custom_reward_function.path="/shared/acebench/paper/runs/dapo_s1/verl/reward.py"'));
  ok(dapo.includes(`custom_reward_function.name=${REWARD_FUNCTIONS.pm1}`));
  const source = readFileSync(new URL("../../../../bench/engines/verl/reward.py", import.meta.url), "utf8");
  ok(Object.values(REWARD_FUNCTIONS).every((fn) => source.includes(`def ${fn}(`)));
  ok(dapo.includes("+reward_model.reward_kwargs.overlong_buffer_cfg.len=4096"));
  ok(dapo.includes("reward_model.overlong_buffer.len=4096"), "main_dapo's trainer-side manager");
  const keepAll = verlRunPlan(makeRun("grpo", { maxCheckpointsToKeep: null }), SWEEP, {}).overrides;
  ok(keepAll.includes("trainer.max_actor_ckpt_to_keep=null"));
  const plan = verlRunPlan(makeRun("grpo", { verlRoot: "/opt/verl" }), SWEEP, {});
  assertEquals(plan.verlRoot, "/opt/verl");
  ok(plan.script.includes("VERL_ROOT=/opt/verl\n") && plan.script.includes('cd "$VERL_ROOT"'));
  assertEquals(verlRunPlan(makeRun("grpo"), SWEEP, { VERL_ROOT: "/env/verl" }).verlRoot, "/env/verl");
  throws(() => verlRunPlan(makeRun("grpo", { verlRoot: "verl" }), SWEEP, {}), /verlRoot .*must be absolute/);
});

Deno.test("verl launch: bash passes every override through unchanged (quoting round trip)", () => {
  const dir = mkdtempSync(join(tmpdir(), "verl-launch-"));
  try {
    const fakePython = join(dir, "fake-python");
    atomicWrite(fakePython, FAKE_PYTHON);
    chmodSync(fakePython, 0o755);
    const verlRoot = join(dir, "verl checkout");
    atomicWrite(join(verlRoot, "recipe", "dapo", "main_dapo.py"), "");
    const run = makeRun("ace-dapo", {
      python: fakePython,
      verlRoot,
      model: "/models/it's a model",
      extraOverrides: ["+trainer.note='a b'"],
    });
    const plan = verlRunPlan(run, SWEEP, {});
    const runDir = join(dir, "run");
    writeRunPlan(plan, runDir);
    const out = join(dir, "argv");
    const launch = (version: string) =>
      new Deno.Command("bash", {
        args: [join(runDir, "verl", "launch.sh")],
        env: { OUT: out, VERSION: version, PYTHONPATH: "/cluster/site" },
      })
        .outputSync();
    const res = launch("0.7.0.dev"); // what a checkout of tag v0.7.0 reports
    assert(res.success, new TextDecoder().decode(res.stderr));
    const argv = readFileSync(out, "utf8").split("\0").slice(0, -1);
    const here = join(runDir, "verl");
    // the workers' PYTHONPATH extends the caller's; VERL's file logger gets a new file per start in verl_metrics/
    assertEquals(argv.slice(0, -1), [
      "-m",
      plan.entrypoint,
      ...plan.overrides,
      workerPythonPath(`${here}:${verlRoot}:/cluster/site`),
    ]);
    const logger = argv.at(-1)!.match(
      /^\+\+ray_kwargs\.ray_init\.runtime_env\.env_vars\.VERL_FILE_LOGGER_PATH='(.*)'$/,
    );
    ok(
      logger && logger[1].startsWith(join(runDir, "verl_metrics") + "/") && logger[1].endsWith(".jsonl"),
      argv.at(-1)!,
    );
    const [pythonPath, alpha, clip, cwd] = readFileSync(`${out}.env`, "utf8").split("\n");
    assertEquals(pythonPath.split(":").slice(0, 2), [here, verlRoot]);
    assertEquals([alpha, clip, cwd], ["1", "none", verlRoot]);
    const wrong = launch("0.6.1");
    assert(!wrong.success);
    ok(new TextDecoder().decode(wrong.stderr).includes("verl 0.6.1 in"), "version refusal message");
    assertEquals(readFileSync(join(runDir, "verl", "ace_verl.py"), "utf8").includes("def install():"), true);
    // ray_job.sh under a stand-in `ray`: the job's runtime env is valid JSON carrying VERL_ROOT
    atomicWrite(join(dir, "bin", "ray"), '#!/usr/bin/env bash\nprintf \'%s\\0\' "$@" > "$OUT"\n');
    chmodSync(join(dir, "bin", "ray"), 0o755);
    const job = new Deno.Command("bash", {
      args: [join(runDir, "verl", "ray_job.sh")],
      env: { OUT: out, PATH: `${join(dir, "bin")}:${Deno.env.get("PATH")}` },
    }).outputSync();
    assert(job.success, new TextDecoder().decode(job.stderr));
    const jobArgv = readFileSync(out, "utf8").split("\0").slice(0, -1);
    const runtimeEnv = JSON.parse(jobArgv[jobArgv.indexOf("--runtime-env-json") + 1]);
    assertEquals(runtimeEnv, { excludes: [".git"], env_vars: { VERL_ROOT: verlRoot } });
    assertEquals(jobArgv.slice(-3), [
      "--",
      "bash",
      join(SWEEP_CLUSTER, "runs", run.runId, "verl", "launch.sh"),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("verl launch: options VERL cannot express are errors naming the field", () => {
  throws(() => verlRunPlan(makeRun("grpo", {}, { clipC: null }), SWEEP, {}), /algo\.clipC/);
  throws(() => verlRunPlan(makeRun("grpo", {}, { logRatioClamp: 10 }), SWEEP, {}), /logRatioClamp/);
  throws(() => verlRunPlan(makeRun("grpo", {}, { stdEps: 1e-8 }), SWEEP, {}), /stdEps/);
  throws(
    () => verlRunPlan(makeRun("dapo", {}, { "dynamicSampling.onExhausted": "partial" }), SWEEP, {}),
    /onExhausted/,
  );
  throws(() => verlRunPlan(makeRun("dapo", { maxResponseLength: 2048 }), SWEEP, {}), /overlong\.buffer/);
  throws(() => verlRunPlan(makeRun("grpo", { nodes: 0 }), SWEEP, {}), /settings: nodes: must be >= 1/);
  throws(
    () => verlRunPlan(makeRun("grpo", { gpus: 8 }), SWEEP, {}),
    /must NOT have additional properties 'gpus'/,
  );
  throws(() => verlRunPlan(makeRun("grpo", { clusterSweepDir: "rel/dir" }), SWEEP, {}), /must be absolute/);
  throws(() => verlRunPlan(makeRun("grpo", {}, { rewardScheme: "unit" }), SWEEP, {}), /rewardScheme/);
});
