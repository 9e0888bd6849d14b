// The release table (bench/engines/verl/versions.ts): the neutral override list rewritten per release, legacy keys
// refused, the default release, and launch.sh's version check for each release.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { atomicWrite } from "../../../../common/fs.ts";
import { resolveAlgo } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import {
  checkNotLegacy,
  DEFAULT_VERL_VERSION,
  forVersion,
  VERL_RELEASES,
  verlRelease,
  verlRunPlan,
  writeRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { assert, assertEquals, ok, throws } from "../../../assert.ts";

const SWEEP = { name: "paper", rl: { steps: 200 }, dir: "/work/sweeps/paper" };

function makeRun(preset: string, settings: Record<string, unknown> = {}): RunConfig {
  return {
    runId: `${preset}_s1`,
    engine: "verl",
    method: preset,
    preset,
    seed: 1,
    base: 0,
    algo: { ...resolveAlgo(preset, {}) },
    settings: { clusterSweepDir: "/shared/acebench/paper", ...settings, rl: { steps: 200 } },
    eval: { n: 32, ks: [1, 32], every: 20 },
  };
}

const keys = (overrides: string[]) => overrides.map((o) => o.replace(/^[+~]*/, "").split("=")[0]);

Deno.test("verl versions: the schema's verlVersion enum and default are the release table's", () => {
  const schema = JSON.parse(
    readFileSync(new URL("../../../../bench/engines/verl/settings.schema.json", import.meta.url), "utf8"),
  );
  assertEquals(schema.properties.verlVersion.enum, Object.keys(VERL_RELEASES));
  assertEquals(schema.properties.verlVersion.default, DEFAULT_VERL_VERSION);
  assertEquals(DEFAULT_VERL_VERSION, Object.keys(VERL_RELEASES).at(-1), "the default is the newest release");
  throws(() => verlRelease("0.8.0"), /settings\.verlVersion is '0\.8\.0'; supported: 0\.7\.0, 0\.9\.0/);
  throws(
    () => verlRunPlan(makeRun("grpo", { verlVersion: "0.8.0" }), SWEEP, {}),
    /settings: verlVersion: must be equal to one of the allowed values/,
  );
});

Deno.test("verl versions: forVersion renames keys and prefixes (keeping + and values), drops with a reason", () => {
  const release = VERL_RELEASES["0.9.0"];
  const { overrides, dropped } = forVersion([
    'custom_reward_function.path="/a b/ace_verl.py"',
    "reward_model.reward_manager=dapo",
    "+reward_model.reward_kwargs.overlong_buffer_cfg.len=4096",
    "++actor_rollout_ref.rollout.engine_kwargs.vllm.seed=3",
    "data.gen_batch_size=1536",
    "actor_rollout_ref.rollout.n=16",
  ], release);
  assertEquals(overrides, [
    'reward.custom_reward_function.path="/a b/ace_verl.py"',
    "reward.reward_manager.name=dapo",
    "+reward.reward_kwargs.overlong_buffer_cfg.len=4096",
    "++actor_rollout_ref.rollout.seed=3",
    "actor_rollout_ref.rollout.n=16",
  ]);
  assertEquals(dropped.length, 1);
  ok(dropped[0].startsWith("data.gen_batch_size=1536: "), dropped[0]);
  // v0.7.0 is the neutral naming: nothing changes
  const same = ["reward_model.reward_manager=dapo", "data.gen_batch_size=1536"];
  assertEquals(forVersion(same, VERL_RELEASES["0.7.0"]), { overrides: same, dropped: [] });
  // a neutral key the table does not rename but the release only keeps for compatibility fails the plan
  throws(
    () => forVersion(["reward_model.overlong_buffer.len=4096"], release),
    /'reward_model\.overlong_buffer\.len' is a legacy key in verl 0\.9\.0/,
  );
  throws(
    () => checkNotLegacy("+sandbox_fusion.url=x", release, "here"),
    /^RangeError: here: 'sandbox_fusion\.url'/,
  );
});

Deno.test("verl versions: a plan without verlVersion targets the newest release; 0.9.0 plans use reward.*", () => {
  for (const preset of ["grpo", "dapo", "ace-grpo", "ace-dapo"]) {
    const plan = verlRunPlan(makeRun(preset), SWEEP, {});
    assertEquals(plan.verlVersion, DEFAULT_VERL_VERSION);
    ok(plan.script.includes(`# Runs verl v${DEFAULT_VERL_VERSION} (`), plan.script.slice(0, 300));
    const k = keys(plan.overrides);
    ok(
      !k.some((key) => /^(custom_reward_function|reward_model|sandbox_fusion)\./.test(key)),
      `${preset}: ${k}`,
    );
    assertEquals(plan.entrypoint, "verl.trainer.main_ppo", "0.9.0 runs DAPO on VERL's own V1 trainer");
  }
  const grpo = verlRunPlan(makeRun("grpo"), SWEEP, {}).overrides;
  ok(grpo.includes("reward.custom_reward_function.name=compute_score_binary"));
  ok(grpo.includes("++actor_rollout_ref.rollout.seed=1"));
  const dapo = verlRunPlan(makeRun("dapo"), SWEEP, {});
  ok(dapo.overrides.includes("reward.reward_manager.name=dapo"));
  ok(dapo.overrides.includes("+reward.reward_kwargs.overlong_buffer_cfg.len=4096"));
  ok(
    dapo.overrides.includes("algorithm.filter_groups.max_inflight_gen_batches=3"),
    "1536 / 512 prompts in flight",
  );
  ok(!keys(dapo.overrides).includes("data.gen_batch_size"));
  ok(!keys(dapo.overrides).includes("algorithm.filter_groups.max_num_gen_batches"));
  ok(
    dapo.script.includes("#   algorithm.filter_groups.max_num_gen_batches=10: "),
    "the dropped key is printed",
  );
  const old = verlRunPlan(makeRun("dapo", { verlVersion: "0.7.0" }), SWEEP, {});
  assertEquals(old.entrypoint, "recipe.dapo.main_dapo");
  ok(
    !old.overrides.some((o) => o.includes("max_inflight_gen_batches")),
    "v0.7.0's FilterGroupsConfig lacks it",
  );
  throws(
    () => verlRunPlan(makeRun("grpo", { extraOverrides: ["custom_reward_function.name=x"] }), SWEEP, {}),
    /settings\.extraOverrides\[0\]: 'custom_reward_function\.name' is a legacy key in verl 0\.9\.0/,
  );
});

Deno.test("verl versions: launch.sh accepts only its release and names both versions otherwise", () => {
  const dir = mkdtempSync(join(tmpdir(), "verl-versions-"));
  try {
    const python = join(dir, "python");
    atomicWrite(
      python,
      '#!/usr/bin/env bash\nif [ "$1" = -c ]; then echo "$VERSION"; exit 0; fi\necho ran\n',
    );
    chmodSync(python, 0o755);
    for (const version of Object.keys(VERL_RELEASES)) {
      const plan = verlRunPlan(
        makeRun("ace-dapo", { verlVersion: version, python, verlRoot: dir }),
        SWEEP,
        {},
      );
      atomicWrite(join(dir, "recipe", "dapo", "main_dapo.py"), "");
      const runDir = join(dir, `run-${version}`);
      writeRunPlan(plan, runDir);
      const launch = (found: string) =>
        new Deno.Command("bash", { args: [join(runDir, "verl", "launch.sh")], env: { VERSION: found } })
          .outputSync();
      for (const found of verlRelease(version).reports) {
        const res = launch(found);
        assert(res.success, `${version} refused ${found}: ${new TextDecoder().decode(res.stderr)}`);
      }
      for (const other of Object.keys(VERL_RELEASES).filter((v) => v !== version)) {
        const res = launch(other);
        assert(!res.success, `${version}'s launch.sh accepted ${other}`);
        const message = new TextDecoder().decode(res.stderr).trim();
        assertEquals(message.split("\n").length, 1, message);
        ok(message.includes(`verl ${other} in`) && message.includes(`for verl ${version}`), message);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
