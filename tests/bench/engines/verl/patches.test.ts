// ace_verl's patch registry against each release's real modules: every patch declares the VERL releases it
// applies to; on each release the declared patches land (the attributes they wrap are marked) and the others do
// not. The file logger: 0.7.0's patch writes numpy scalars as numbers; on 0.9.0, whose FileLogger writes orjson
// bytes to a file opened "wb", that patch (str) crashed every plan at its first step, so it must not apply there;
// both write the same JSON lines. Also DAPO's step budget (0.9.0 has no round cap of its own) and the V1
// verdict reading, without Ray.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, ok } from "../../../assert.ts";
import { exists } from "../../../../common/fs.ts";
import { tempDir } from "../../../temp.ts";
import { VENV_PYTHON, VERL_SHARED } from "./verl_venv.ts";
import { missing, skipping } from "../../../external_inputs.ts";

const aceVerlDir = fileURLToPath(new URL("../../../../bench/engines/verl/", import.meta.url));
const script = fileURLToPath(new URL("./fixtures/check_patches.py", import.meta.url));

interface ModuleReport {
  releases: string[];
  imports: true | string;
  patched?: string[];
}

/** Per release: the patched attributes of each module that imports there (absent: the module does not import). */
const EXPECTED: Record<string, Record<string, string[]>> = {
  "0.7.0": {
    "verl.trainer.ppo.core_algos": ["ace", "w_reinforce"],
    "verl.trainer.ppo.ray_trainer": ["compute_advantage", "RayPPOTrainer.fit"],
    "recipe.dapo.dapo_ray_trainer": ["compute_advantage", "RayDAPOTrainer.fit"],
    "verl.utils.tracking": ["FileLogger.log"],
    "transfer_queue.interface": ["ray", "TransferQueueController"], // in the venv; 0.7.0 does not use it
  },
  "0.9.0": {
    "verl.trainer.ppo.core_algos": ["ace", "w_reinforce"],
    "verl.trainer.ppo.ray_trainer": ["compute_advantage", "RayPPOTrainer.fit"],
    "verl.trainer.ppo.v1.trainer_base": [
      "PPOTrainer.fit",
      "PPOTrainer._compute_advantage",
      "PPOTrainer._add_batch_to_generate",
      "PPOTrainer._add_prompts_to_generate",
    ],
    "verl.trainer.ppo.v1.replay_buffer": ["ReplayBuffer._wait_for_next_poll", "ReplayBuffer.sample"],
    "verl.utils.tracking": [], // 0.9.0's FileLogger writes numpy scalars itself
    // TransferQueue's controller in a namespace of the Ray job, not the cluster-wide "transfer_queue"
    "transfer_queue.interface": ["ray", "TransferQueueController"],
  },
};

for (const release of Object.keys(EXPECTED)) {
  const src = join(VERL_SHARED, `verl-${release}`);
  const reason = !exists(join(src, "verl", "trainer", "main_ppo.py"))
    ? missing("verlSrc", `${src} not found`)
    : !exists(VENV_PYTHON)
    ? missing("verlVenv", `${VENV_PYTHON} not found`)
    : null;
  const name = `ace_verl on VERL ${release}: each patch lands on the releases it declares, and only there`;
  Deno.test({ name, ignore: skipping(`the patch check on VERL ${release}`, reason) }, async () => {
    const log = join(tempDir(), "steps.jsonl");
    const out = await new Deno.Command(VENV_PYTHON, {
      args: [script],
      env: {
        PYTHONPATH: `${src}:${aceVerlDir}:${join(VERL_SHARED, "hydra-1.3.2")}`,
        PYTHONDONTWRITEBYTECODE: "1",
        VERL_FILE_LOGGER_PATH: log,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    ok(out.success, `${stdout.slice(-1000)}\n${new TextDecoder().decode(out.stderr).slice(-2000)}`);
    const report = JSON.parse(stdout.split("\n").at(-1)!);
    assertEquals(report.release, release);
    const modules = report.modules as Record<string, ModuleReport>;
    for (const [name, m] of Object.entries(modules)) {
      const want = EXPECTED[release][name];
      if (want === undefined) {
        ok(m.imports !== true, `${name} imports on ${release}, which the test does not expect`);
        ok(!m.releases.includes(release), `${name} declares ${release} but does not import there`);
        continue;
      }
      assertEquals(m.imports, true, `${name} on ${release}`);
      assertEquals(m.patched, want, `${name} on ${release}: patched attributes`);
      // a module with patches on this release declares it; one without declares it not (or patches nothing)
      assertEquals(m.releases.includes(release), want.length > 0, `${name}: declared releases ${m.releases}`);
    }
    assertEquals(report.fileLogger, "written");
    const lines = Deno.readTextFileSync(log).trim().split("\n").map((l) => JSON.parse(l));
    assertEquals(lines, [
      { step: 1, data: { count: 3, score: 1.5 } },
      { step: 2, data: { count: 4 } },
    ]);
    // DAPO's budget: 2 rounds x 3 prompts; 2, then 3, then 1 of 4 granted; unset = no cap; bad values named
    const b = report.budget;
    assertEquals(b.grants, [2, 3, 1]);
    assertEquals(b.refused, 3);
    ok(
      /only 1\/2 informative groups at step 5 after 6 prompts \(2 rounds x 3 prompts/.test(b.message),
      b.message,
    );
    assertEquals(b.unset, true);
    ok(/set both ACE_VERL_DAPO_MAX_ROUNDS and ACE_VERL_DAPO_GEN_BATCH/.test(b.errors[0]), b.errors[0]);
    ok(/ACE_VERL_DAPO_MAX_ROUNDS is '0'/.test(b.errors[1]), b.errors[1]);
    // the verdict of each trajectory as 0.9.0's agent loop stores it; none where reward_extra_info has no acc
    assertEquals(b.verdicts, [true, false, null]);
  });
}
