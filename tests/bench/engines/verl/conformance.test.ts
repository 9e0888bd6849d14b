// Conformance against real VERL, for every supported release (VERL_RELEASES: v0.7.0 and v0.9.0): every run of
// every shipped bench/configs/verl-*.json is planned for the release, and one Python process per release
// (fixtures/verl_conformance.py) composes that release's own Hydra config with the run's overrides from the
// directory launch.sh runs in, runs the entry's run_ppo up to ray.init, VERL's validate_config, builds its config
// dataclasses and reward managers, proves that every setting acebench relies on is read where the release reads
// it (not only composed), and checks ACE through the release's real compute_advantage against the TypeScript
// vectors. A second test runs verl-smoke's generated launch.sh through the real `python3 -m <entry>` (@hydra.main
// parses the script's arguments).
// Needs ../shared/verl (VERL + Hydra source), Debian's python3 packages (PY_MODULES) and antlr4 (Hydra's override
// parser is generated from its grammar into a temporary folder); skips with a message otherwise.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists, writeJson } from "../../../../common/fs.ts";
import { expandRuns, readSweepConfig } from "../../../../bench/sweep/mod.ts";
import type { AlgoConfig } from "../../../../bench/core/mod.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import {
  advEstimator,
  resolveRecipe,
  validateVerlSettings,
  VERL_DIR,
  VERL_RELEASES,
  verlRelease,
  verlRunPlan,
  type VerlVersion,
  workerPythonPath,
  writeRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { assert, assertEquals, ok } from "../../../assert.ts";
import { graderCommand } from "./verl_venv.ts";
import { missing as inputMissing, skipping, VERL_SRC } from "../../../external_inputs.ts";

const PYTHON = "/usr/bin/python3";
const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const verlShared = VERL_SRC;
/** A release's source as ../shared/verl holds it (verl-<version>/verl and verl-<version>/recipe). */
const sourceOf = (version: string) => join(verlShared, `verl-${version}`);
const VERSIONS = Object.keys(VERL_RELEASES) as VerlVersion[];
const hydraSrc = join(verlShared, "hydra-1.3.2");
const configsDir = here("../../../../bench/configs/");
/** Debian's python3-<name> packages VERL's config, reward and trainer modules import (the rest are stubbed). */
const PY_MODULES = ["torch", "numpy", "omegaconf", "packaging", "tqdm", "aiohttp", "pydantic"];

function succeeds(cmd: string, args: string[]): boolean {
  try {
    return new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

/** Why the test cannot run here, or null. */
function missing(): string | null {
  const absent = VERSIONS.filter((v) => !exists(join(sourceOf(v), "verl", "trainer", "main_ppo.py")));
  if (absent.length > 0 || !exists(join(hydraSrc, "hydra"))) {
    return inputMissing(
      "verlSrc",
      `${verlShared} (${VERSIONS.map((v) => `verl-${v}`).join(", ")} and hydra-1.3.2 source) not found`,
    );
  }
  if (!succeeds(PYTHON, ["-c", `import ${PY_MODULES.join(", ")}`])) {
    return `${PYTHON} lacks one of ${PY_MODULES.join(", ")} ` +
      `(apt-get install -y ${PY_MODULES.map((m) => `python3-${m}`).join(" ")})`;
  }
  if (!succeeds("antlr4", [])) {
    return "antlr4 not found (apt-get install -y antlr4), needed for Hydra's parser";
  }
  return null;
}
const reason = missing();
skipping("VERL conformance", reason);

/** Generate Hydra's override parser (as its setup.py does) under `dir`/hydra/grammar/gen. */
function generateHydraParser(dir: string): void {
  const gen = join(dir, "hydra", "grammar", "gen");
  Deno.mkdirSync(gen, { recursive: true });
  const out = new Deno.Command("antlr4", {
    args: [
      "-Dlanguage=Python3",
      "-o",
      gen,
      "-Xexact-output-dir",
      "-visitor",
      "OverrideLexer.g4",
      "OverrideParser.g4",
    ],
    cwd: join(hydraSrc, "hydra", "grammar"),
  }).outputSync();
  assert(out.success, `antlr4 failed: ${new TextDecoder().decode(out.stderr)}`);
}

/** What VERL's built config must hold for this run (from the run's algorithm and recipe). */
function expectations(run: RunConfig, entrypoint: string) {
  const algo = run.algo as unknown as AlgoConfig;
  const settings = validateVerlSettings(run.settings);
  const recipe = resolveRecipe(algo.dynamicSampling.enabled ? "dapo" : "grpo", settings);
  const dapoEntry = entrypoint === "recipe.dapo.main_dapo";
  return {
    advEstimator: advEstimator(algo),
    normByStd: algo.normByStd,
    valN: run.eval.n,
    clipC: algo.clipC,
    lossAgg: algo.lossAgg,
    rewardManager: algo.overlong.enabled || dapoEntry ? "dapo" : "naive",
    maxCkpt: settings.maxCheckpointsToKeep,
    steps: (run.settings.rl as { steps: number }).steps,
    aceModule: algo.ace.enabled || settings.aceDiagnostics,
    overlong: algo.overlong.enabled ? { len: algo.overlong.buffer, factor: algo.overlong.factor } : null,
    genBatchSize: recipe.genBatchSize,
    dynamicSampling: algo.dynamicSampling.enabled,
    maxInflightGenBatches: Math.ceil(recipe.genBatchSize / recipe.trainBatchSize),
    rewardScheme: algo.rewardScheme,
  };
}

/**
 * Every run of every shipped verl-* config, planned for `version` into `sweepsDir` as `deno task sweep` would
 * write it (the config's own verlVersion replaced by `version`).
 */
function plans(sweepsDir: string, version: VerlVersion) {
  const verlRoot = sourceOf(version);
  const files = [...Deno.readDirSync(configsDir)].map((e) => e.name).filter((n) => /^verl-.*\.json$/.test(n));
  const runs = [];
  for (const file of files.sort()) {
    const sweep = readSweepConfig(join(configsDir, file));
    const dir = join(sweepsDir, sweep.name);
    for (const run of expandRuns(sweep)) {
      run.settings = { ...run.settings, verlVersion: version };
      const plan = verlRunPlan(run, { name: sweep.name, rl: sweep.rl, dir }, { VERL_ROOT: verlRoot });
      assertEquals(plan.verlVersion, version);
      const runDir = join(dir, "runs", run.runId);
      writeRunPlan(plan, runDir);
      const aceDir = join(runDir, VERL_DIR);
      runs.push({
        name: `${file} ${run.runId}`,
        entrypoint: plan.entrypoint,
        cwd: plan.verlRoot,
        // what launch.sh passes: the planned overrides, then the workers' PYTHONPATH ($HERE:$VERL_ROOT)
        overrides: [...plan.overrides, workerPythonPath(`${aceDir}:${verlRoot}`)],
        env: { VERL_ROOT: verlRoot },
        seed: run.seed,
        aceDir,
        expect: expectations(run, plan.entrypoint),
      });
    }
  }
  return { verlRoot, version, legacy: verlRelease(version).legacy, runs };
}

for (const version of VERSIONS) {
  Deno.test({
    name:
      `verl conformance: every shipped verl-* run composes, is read and builds in VERL v${version}; ACE matches`,
    ignore: reason !== null,
    fn() {
      const dir = mkdtempSync(join(tmpdir(), "verl-conformance-"));
      const keep = Deno.env.get("VERL_CONFORMANCE_KEEP") === "1"; // leave the plans for a rerun by hand
      try {
        generateHydraParser(join(dir, "hydra-gen"));
        // every path in the overrides must survive Hydra
        const planned = plans(join(dir, "sweeps with spaces"), version);
        ok(planned.runs.length >= 40, `${planned.runs.length} runs`);
        const dapoEntry = verlRelease(version).dapoEntry;
        ok(planned.runs.some((r) => r.entrypoint === dapoEntry && r.expect.genBatchSize > 0), "no DAPO run");
        writeJson(join(dir, "plans.json"), planned);
        const out = new Deno.Command(PYTHON, {
          args: [
            here("fixtures/verl_conformance.py"),
            join(dir, "plans.json"),
            here("fixtures/ace_vectors.json"),
            here("../../../../bench/engines/verl/"),
            join(dir, "hydra-gen"),
          ],
          env: {
            PYTHONPATH: `${hydraSrc}:${planned.verlRoot}`,
            PYTHONDONTWRITEBYTECODE: "1",
            CUDA_VISIBLE_DEVICES: "",
            ACE_VERL_GRADER: graderCommand(), // reward.py's grader: this Deno (grader.sh names a `deno` on PATH)
          },
        }).outputSync();
        const stdout = new TextDecoder().decode(out.stdout).trim();
        const stderr = new TextDecoder().decode(out.stderr).trim();
        const last = stdout.split("\n").at(-1) ?? "";
        const fail = stdout.slice(stdout.lastIndexOf("FAIL: "));
        assert(out.success, `conformance failed: ${fail}\n${stderr.split("\n").slice(-15).join("\n")}`);
        const result = JSON.parse(last);
        assertEquals(result.version, version);
        assertEquals(result.runs, planned.runs.length);
        assertEquals(result.checks, [
          "install-lazy+patched",
          "configs",
          "rewards",
          "keys-read",
          "advantages",
        ]);
        console.log(
          `verl conformance v${version}: ${result.runs} runs, ${result.keysRead} override keys shown read; ` +
            `max relative |ΔA| ${JSON.stringify(result.maxRelDiff)}`,
        );
      } finally {
        if (keep) console.log(`verl conformance: kept ${dir}`);
        else rmSync(dir, { recursive: true, force: true });
      }
    },
  });
}

for (const version of VERSIONS) {
  Deno.test({
    name:
      `verl conformance: verl-smoke's launch.sh runs VERL v${version}'s real entry points (@hydra.main) up to ray.init`,
    ignore: reason !== null,
    fn() {
      const verlRoot = sourceOf(version);
      const dir = mkdtempSync(join(tmpdir(), "verl-smoke-"));
      try {
        const gen = join(dir, "hydra-gen");
        generateHydraParser(gen);
        // a view of the checkout (launch.sh's cd target, and where @hydra.main would write outputs/ by default)
        const checkout = join(dir, "verl checkout");
        mkdirSync(checkout);
        for (const sub of ["verl", "recipe"]) symlinkSync(join(verlRoot, sub), join(checkout, sub));
        const sweep = readSweepConfig(join(configsDir, "verl-smoke.json"));
        const sweepDir = join(dir, "sweep");
        const entries = new Set<string>();
        for (const run of expandRuns(sweep)) {
          run.settings = { ...run.settings, python: PYTHON, verlVersion: version };
          const plan = verlRunPlan(run, { name: sweep.name, rl: sweep.rl, dir: sweepDir }, {
            VERL_ROOT: checkout,
          });
          entries.add(plan.entrypoint);
          const runDir = join(sweepDir, "runs", run.runId);
          writeRunPlan(plan, runDir);
          const out = join(dir, `${run.runId}.json`);
          const res = new Deno.Command("bash", {
            args: [join(runDir, VERL_DIR, "launch.sh")],
            env: {
              PYTHONPATH: `${here("fixtures/smoke_boot/")}:${hydraSrc}`, // its sitecustomize.py first
              VERL_CONFORMANCE_FIXTURES: here("fixtures/"),
              VERL_CONFORMANCE_HYDRA_GEN: gen,
              VERL_CONFORMANCE_VERSION: version,
              OUT: out,
              PYTHONDONTWRITEBYTECODE: "1",
              CUDA_VISIBLE_DEVICES: "",
            },
          }).outputSync();
          const stderr = new TextDecoder().decode(res.stderr);
          assert(res.success, `${run.runId}: launch.sh failed:\n${stderr.split("\n").slice(-12).join("\n")}`);
          const seen = JSON.parse(readFileSync(out, "utf8"));
          assert(seen.ran, `${run.runId}: TaskRunner.run was not started`);
          const runtimeEnv = seen.init.runtime_env;
          assertEquals(runtimeEnv.worker_process_setup_hook, "ace_verl.install");
          // launch.sh's folder and the checkout first, then the caller's own entries (extended, not replaced)
          assertEquals(
            runtimeEnv.env_vars.PYTHONPATH,
            `${join(runDir, VERL_DIR)}:${checkout}:${here("fixtures/smoke_boot/")}:${hydraSrc}`,
          );
          assertEquals(runtimeEnv.env_vars.ACE_VERL_ALPHA, "1");
          assertEquals(seen.cwd, checkout, `${run.runId}: ran in ${seen.cwd}`);
          // @hydra.main recorded the config and overrides in the run folder (hydra.run.dir), not in the checkout
          const [stamp] = [...Deno.readDirSync(join(runDir, "hydra"))].map((e) => e.name);
          ok(/^\d{8}-\d{6}$/.test(stamp), stamp);
          ok(
            readFileSync(join(runDir, "hydra", stamp, ".hydra", "overrides.yaml"), "utf8").includes(
              version === "0.7.0" ? "engine_kwargs.vllm.seed" : "actor_rollout_ref.rollout.seed",
            ),
          );
          ok(!exists(join(checkout, "outputs")), "outputs/ written into the checkout");
        }
        assertEquals(
          [...entries].sort(),
          [...new Set([verlRelease(version).dapoEntry, "verl.trainer.main_ppo"])].sort(),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  });
}
