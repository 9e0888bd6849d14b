// The command a user types, through VERL's real trainer loop: `deno task sweep --config C` (launch "local", the
// permissions deno.json gives the task) exports the data, bundles the grader, plans, runs launch.sh — VERL's real
// loop on CPU with the GPU parts replaced by the loop tests' stand-ins — and ingests the validation dumps; then
// `deno task report` prints Pass@k. Once per release: 0.7.0 with ACEBENCH_VERL_LOOP=1 (or outside CI), 0.9.0 with
// ACEBENCH_VERL_090_LOOP=1. The reward is the bundled grader of the sweep folder (no ACE_VERL_GRADER override).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readJson } from "../../../../common/fs.ts";
import { assert, assertEquals, ok } from "../../../assert.ts";
import { taskPermissions } from "../../../run_cli.ts";
import { tempDir } from "../../../temp.ts";
import { DATASET_MIRROR, missing, skipping } from "../../../external_inputs.ts";
import { runCommand } from "./trainer_loop_common.ts";
import {
  TINY_VERL_BATCH,
  TOKENIZER_DIR,
  VENV_PYTHON,
  verl090Missing,
  VERL_SHARED,
  verlVenvMissing,
} from "./verl_venv.ts";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const mirrorMissing = (() => {
  try {
    Deno.statSync(join(DATASET_MIRROR, "aime2025"));
    return null;
  } catch {
    return missing("datasetMirror", `${DATASET_MIRROR}aime2025 not found`);
  }
})();

const releases = [
  {
    version: "0.7.0",
    hook: "verl_standins.install",
    skip: Deno.env.get("CI") === "true" && Deno.env.get("ACEBENCH_VERL_LOOP") !== "1"
      ? "CI=true without ACEBENCH_VERL_LOOP=1 (minutes on two cores)"
      : verlVenvMissing() ?? mirrorMissing,
  },
  {
    version: "0.9.0",
    hook: "verl_standins_v090.install",
    skip: Deno.env.get("ACEBENCH_VERL_090_LOOP") !== "1"
      ? "set ACEBENCH_VERL_090_LOOP=1 to run it (minutes of CPU)"
      : verl090Missing() ?? mirrorMissing,
  },
];

/** A one-run sweep (ACE-GRPO, 2 steps, AIME 2025 validated at 0, 1, 2 with n = 2) launched locally. */
function config(version: string, hook: string, modelDir: string, cacheDir: string, logFile: string) {
  const v090 = version === "0.9.0";
  return {
    name: `verl-local-${version}`,
    description: "VERL's real loop on CPU with the GPU parts stood in; the numbers are no result",
    engine: "verl",
    seeds: [0],
    methods: [{ name: "ace-grpo", preset: "ace-grpo" }],
    settings: {
      model: modelDir,
      python: VENV_PYTHON,
      verlVersion: version,
      verlRoot: join(VERL_SHARED, `verl-${version}`),
      launch: "local",
      datasetMirror: DATASET_MIRROR,
      datasetCacheDir: cacheDir,
      nodes: 1,
      gpusPerNode: 1,
      maxPromptLength: 1024,
      maxResponseLength: 48,
      ...TINY_VERL_BATCH,
      projectName: `acebench-local-${version}`,
      extraOverrides: [
        `++ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=${hook}`,
        `++ray_kwargs.ray_init.runtime_env.env_vars.STANDIN_LOG=${JSON.stringify(logFile)}`,
        "++ray_kwargs.ray_init.num_cpus=2",
        "++ray_kwargs.ray_init.include_dashboard=False",
        "++ray_kwargs.ray_init.object_store_memory=200000000",
        "data.dataloader_num_workers=0",
        ...(v090
          ? [
            "actor_rollout_ref.rollout.agent.num_workers=1",
            "reward.num_workers=1",
            "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
          ]
          : ["trainer.val_before_train=True"]),
      ],
    },
    rl: { steps: 2 },
    eval: { n: 2, ks: [1, 2], every: 1 },
  };
}

/** `deno task NAME …` with deno.json's permissions for it; throws with the output's tail when it fails. */
function task(name: string, args: string[], env: Record<string, string>): string {
  return runCommand(
    Deno.execPath(),
    ["run", ...taskPermissions(name), join(root, "cli.ts"), name, ...args],
    { CI: "true", ACEBENCH_WEBGPU_ADAPTER: "0", ...env },
    `deno task ${name}`,
  );
}

for (const { version, hook, skip } of releases) {
  skipping(`deno task sweep through VERL ${version}'s real loop`, skip);
  Deno.test({
    name:
      `deno task sweep (launch local) → VERL ${version}'s real loop on CPU → deno task report shows Pass@k`,
    ignore: skip !== null,
    sanitizeResources: false,
    fn: () => {
      const dir = tempDir("acebench-verl-local-");
      const modelDir = join(dir, "tiny-qwen2");
      runCommand(VENV_PYTHON, [join(fixtures, "tiny_model.py"), TOKENIZER_DIR, modelDir], {}, "tiny model");
      const configFile = join(dir, "config.json");
      Deno.writeTextFileSync(
        configFile,
        JSON.stringify(config(version, hook, modelDir, join(dir, "cache"), join(dir, "standin.jsonl"))),
      );
      // Ray's socket paths under it must stay within AF_UNIX's 107 bytes: a short folder of its own
      const rayTmp = tempDir("ray-");
      const out = join(dir, "sweep");
      const env = {
        // the stand-ins and Hydra; launch.sh keeps the caller's PYTHONPATH for the workers
        PYTHONPATH: `${fixtures}:${join(VERL_SHARED, "hydra-1.3.2")}`,
        RAY_TMPDIR: rayTmp,
        RAY_DEDUP_LOGS: "0",
        CUDA_VISIBLE_DEVICES: "",
        TOKENIZERS_PARALLELISM: "false",
        HF_HUB_OFFLINE: "1",
        HOME: Deno.env.get("HOME") ?? dir,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      };
      const sweepLog = task("sweep", ["--config", configFile, "--out", out], env);
      const runId = "ace-grpo_s0";
      const status = readJson<{ state: string }>(join(out, "runs", runId, "status.json"));
      assertEquals(status.state, "done", sweepLog.slice(-3000));
      ok(sweepLog.includes("bundled the reward grader"), "the sweep bundled its grader");

      task("report", [out], env);
      const summary = readJson<
        { cells: { method: string; dataset: string; k: number; step: number; mean: number }[] }
      >(
        join(out, "summary.json"),
      );
      const cells = summary.cells.filter((c) => c.method === "ace-grpo" && c.dataset === "aime2025");
      assertEquals([...new Set(cells.map((c) => c.k))].sort(), [1, 2], JSON.stringify(cells.slice(0, 4)));
      assert(cells.every((c) => c.mean >= 0 && c.mean <= 1), "Pass@k in [0, 1]");
      const md = Deno.readTextFileSync(join(out, "summary.md"));
      ok(/\| ace-grpo \|/.test(md) && md.includes("Pass@2"), md.slice(0, 2000));
      console.log(
        `VERL ${version} through deno task sweep: ${cells.length} aime2025 cells, Pass@1 ${
          cells.find((c) => c.k === 1)?.mean
        }`,
      );
    },
  });
}
