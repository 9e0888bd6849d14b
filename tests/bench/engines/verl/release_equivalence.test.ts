// ACE across VERL releases on identical batches: fixtures/release_equivalence.py puts the same batches (seeded, every
// value a multiple of 1/256, exact in VERL's float32) through each release's real advantage code with ace_verl
// installed (0.7.0: ray_trainer.compute_advantage and the DAPO recipe's, the verdict as `acc` in the batch; 0.9.0:
// the V1 trainer's own PPOTrainer._compute_advantage → compute_advantage_for_multi_trajectories, the verdict read by
// ace_verl's wrapper from TransferQueue's extra_fields, no `acc` in the batch), once per release in its own
// interpreter, for ACE over GRPO with and without std normalisation on the main_ppo and DAPO call sites. Per
// rollout: the same incorrect mask (the verdict, never the score's sign: a correct answer that DAPO's overlong
// penalty cut to 0 is not penalised), the same advantage within 1e-6, both equal to recomputeAce. What it does not
// show: that the two full loops produce the same rollouts or steps (docs/verl.md).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Rng } from "../../../../common/prng.ts";
import { assertEquals, ok } from "../../../assert.ts";
import { tempDir } from "../../../temp.ts";
import { maxRelativeDiff, recomputeAce } from "./trainer_loop_common.ts";
import { VENV_PYTHON, verl090Missing, VERL_SHARED, verlVenvMissing } from "./verl_venv.ts";
import { skipping } from "../../../external_inputs.ts";

const aceVerlDir = fileURLToPath(new URL("../../../../bench/engines/verl/", import.meta.url));
const script = fileURLToPath(new URL("./fixtures/release_equivalence.py", import.meta.url));
const RELEASES = ["0.7.0", "0.9.0"] as const;
const ALPHA = 1.5;
const PATHS = [
  { path: "main", normByStd: true },
  { path: "main", normByStd: false },
  { path: "dapo", normByStd: true },
  { path: "dapo", normByStd: false },
];

interface Rollout {
  uid: string;
  length: number;
  score: number;
  acc: boolean;
  old: number[];
  ref: number[];
}
interface Batch {
  name: string;
  rollouts: Rollout[];
}
interface Result {
  batch: string;
  path: string;
  normByStd: boolean;
  advantages: number[];
  incorrect: boolean[];
  c: number[];
  calls: string[];
}
interface Output {
  release: string;
  options: { alpha: number; phi: string; aggregation: string; clip: number | null };
  results: Result[];
}

/** A multiple of 1/256: exact in float32, so both releases and the recomputation see the same numbers. */
const q = (x: number) => Math.round(x * 256) / 256;

/**
 * The batches. Scores as acebench's reward schemes give them: binary 1/0, ±1, and DAPO's ±1 plus an overlong
 * penalty in [−1, 0] (a correct answer scores in [0, 1], a wrong one in [−2, −1]). Each rollout's confidence shift
 * c = Σ (old − ref) comes from a per-token drift `shift` (negative: less confident than the reference).
 */
function batches(): Batch[] {
  const rng = Rng.seeded("verl-release-equivalence");
  const rollout = (uid: string, score: number, acc: boolean, shift: number, length?: number): Rollout => {
    const n = length ?? 1 + rng.int(40);
    const old = Array.from({ length: n }, () => q(-3 * rng.float()));
    const ref = old.map((o) => q(o - shift + 0.25 * (rng.float() - 0.5)));
    return { uid, length: n, score, acc, old, ref };
  };
  const shift = () => q(1.2 * rng.float() - 0.4);
  const group = (uid: string, members: [number, boolean][]) =>
    members.map(([s, a]) => rollout(uid, s, a, shift()));
  const random: Rollout[] = [];
  for (let g = 0; g < 8; g++) {
    const size = 1 + rng.int(6);
    for (let k = 0; k < size; k++) {
      const acc = rng.float() < 0.4;
      const penalty = rng.float() < 0.3 ? -q(rng.float()) : 0;
      random.push(rollout(`r${g}`, (acc ? 1 : -1) + penalty, acc, shift()));
    }
  }
  return [
    {
      name: "mixed",
      rollouts: [
        ...group("m0", [[1, true], [0, false], [0, false], [1, true]]),
        ...group("m1", [[1, true], [-1, false], [-1, false], [-1, false], [1, true]]),
        ...group("m2", [[0, false], [1, true], [0, false]]),
      ],
    },
    {
      name: "uniform",
      rollouts: [
        ...group("u0", [[1, true], [1, true], [1, true], [1, true]]),
        ...group("u1", [[-1, false], [-1, false], [-1, false]]),
        ...group("u2", [[0, false], [0, false], [0, false], [0, false]]),
        ...group("u3", [[1, true], [-1, false]]),
      ],
    },
    {
      name: "singletons",
      rollouts: [
        ...group("s0", [[-1, false]]),
        ...group("s1", [[1, true]]),
        ...group("s2", [[0, false]]),
        ...group("s3", [[-1.5, false]]),
        ...group("s4", [[1, true], [-1, false]]),
      ],
    },
    {
      // DAPO's overlong penalty: correct answers cut at the cap score 0 (or 0.25, 0.5) and sit below the group
      // mean: A < 0, but correct, so never penalised; wrong ones go below −1
      name: "overlong",
      rollouts: [
        ...group("o0", [[1, true], [1, true], [0, true], [-1, false], [1, true]]),
        ...group("o1", [[1, true], [0.5, true], [0, true], [-1.25, false]]),
        ...group("o2", [[1, true], [1, true], [0, true], [0.25, true], [-1.5, false]]),
        ...group("o3", [[0.5, true], [0, true], [-1.25, false], [-2, false]]),
      ],
    },
    {
      // confidence shifts from strongly under- to strongly over-confident, at lengths 1 to 48
      name: "confidence",
      rollouts: [
        rollout("c0", 1, true, 0.5, 12),
        rollout("c0", -1, false, -0.75, 48),
        rollout("c0", -1, false, 0, 1),
        rollout("c0", -1, false, 0.75, 48),
        rollout("c0", -1.5, false, 0.0625, 7),
        rollout("c1", 0, true, 1, 30),
        rollout("c1", -1, false, 1, 1),
        rollout("c1", 1, true, -1, 40),
        rollout("c1", -2, false, -0.25, 20),
      ],
    },
    { name: "random", rollouts: random },
  ];
}

const reason = verlVenvMissing() ?? verl090Missing();
skipping("ACE's release equivalence", reason);

/** Runs the fixture under one release; its output. */
async function runRelease(release: string, input: string, dir: string): Promise<Output> {
  const output = join(dir, `out-${release}.json`);
  const out = await new Deno.Command(VENV_PYTHON, {
    args: [script, join(VERL_SHARED, `verl-${release}`), aceVerlDir, input, output],
    env: {
      PYTHONPATH: join(VERL_SHARED, "hydra-1.3.2"),
      PYTHONDONTWRITEBYTECODE: "1",
      ACE_VERL_ALPHA: String(ALPHA),
      ACE_VERL_PHI: "softplus",
      ACE_VERL_AGGREGATION: "sum",
      ACE_VERL_CLIP: "none",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  ok(out.success, `VERL ${release}: ${text.slice(-4000)}`);
  return JSON.parse(Deno.readTextFileSync(output));
}

Deno.test({
  name:
    "ACE on identical batches: VERL 0.7.0's and 0.9.0's real advantage paths agree, and with recomputeAce",
  ignore: reason !== null,
  fn: async () => {
    const dir = tempDir();
    const input = join(dir, "batches.json");
    const spec = batches();
    Deno.writeTextFileSync(input, JSON.stringify({ batches: spec }));
    const outputs = await Promise.all(RELEASES.map((r) => runRelease(r, input, dir)));
    for (const [k, out] of outputs.entries()) {
      assertEquals(out.release, RELEASES[k]);
      assertEquals(out.options, { alpha: ALPHA, phi: "softplus", aggregation: "sum", clip: null });
      assertEquals(out.results.length, spec.length * PATHS.length);
    }
    const [v070, v090] = outputs;
    let correctAtMostZeroBelowMean = 0, penalised = 0;
    for (const [j, r070] of v070.results.entries()) {
      const r090 = v090.results[j];
      const batch = spec[Math.floor(j / PATHS.length)];
      const { path, normByStd } = PATHS[j % PATHS.length];
      const label = `${batch.name} ${path} normByStd=${normByStd}`;
      for (const r of [r070, r090]) {
        assertEquals([r.batch, r.path, r.normByStd], [batch.name, path, normByStd], label);
      }
      // each release's own call site
      assertEquals(r070.calls, [
        `${
          path === "main" ? "verl.trainer.ppo.ray_trainer" : "recipe.dapo.dapo_ray_trainer"
        }.compute_advantage`,
      ]);
      assertEquals(r090.calls, [
        "verl.trainer.ppo.v1.trainer_base.PPOTrainer._compute_advantage",
        "verl.trainer.ppo.v1.utils.compute_advantage_for_multi_trajectories",
      ]);
      // the incorrect mask is the verdict, on both releases
      const wrong = batch.rollouts.map((r) => !r.acc);
      assertEquals(r070.incorrect, wrong, `${label}: 0.7.0's incorrect mask`);
      assertEquals(r090.incorrect, wrong, `${label}: 0.9.0's incorrect mask`);
      // the same advantages, and the recomputation's
      const diff = maxRelativeDiff(r090.advantages, r070.advantages);
      ok(diff <= 1e-6, `${label}: 0.9.0 and 0.7.0 differ by ${diff} (relative)`);
      const log = {
        uid: batch.rollouts.map((r) => r.uid),
        score: batch.rollouts.map((r) => r.score),
        old_log_prob: batch.rollouts.map((r) => r.old),
        ref_log_prob: batch.rollouts.map((r) => r.ref),
      };
      const expected = recomputeAce(log, ALPHA, (i) => wrong[i], normByStd);
      for (const [release, r] of [["0.7.0", r070], ["0.9.0", r090]] as const) {
        const d = maxRelativeDiff(r.advantages, expected);
        ok(
          d <= 1e-6,
          `${label}: VERL ${release} differs from recomputeAce by ${d}: ${r.advantages} vs ${expected}`,
        );
        const c = batch.rollouts.map((x) => x.old.reduce((s, o, t) => s + o - x.ref[t], 0));
        ok(maxRelativeDiff(r.c, c) <= 1e-9, `${label}: VERL ${release}'s c ${r.c} vs ${c}`);
      }
      // the batches reach the cases they are for: correct rollouts below their group's mean (score 0 among them),
      // left as they are; and incorrect ones rescaled
      const plain = recomputeAce(log, 0, () => false, normByStd);
      batch.rollouts.forEach((r, i) => {
        if (r.acc && plain[i] < 0) {
          correctAtMostZeroBelowMean += r.score <= 0 ? 1 : 0;
          for (const r of [r070, r090]) {
            const d = Math.abs(r.advantages[i] - plain[i]) / Math.max(1, Math.abs(plain[i]));
            ok(d <= 1e-6, `${label}: correct rollout ${i} (score ${batch.rollouts[i].score}) rescaled`);
          }
        }
        if (!r.acc && plain[i] < 0) penalised += 1;
      });
    }
    ok(
      correctAtMostZeroBelowMean >= PATHS.length * 3,
      `${correctAtMostZeroBelowMean} correct rollouts scoring ≤ 0`,
    );
    ok(penalised >= PATHS.length * 20, `${penalised} penalised rollouts`);
  },
});
