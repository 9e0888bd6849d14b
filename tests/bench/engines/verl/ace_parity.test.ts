// ACE parity: vectors computed by the TypeScript RL core are written to a JSON fixture, then ace_verl.py (under
// Debian's python3-torch, with a stub `verl` package providing only the estimator registry and compute_advantage)
// must reproduce the advantages and c_i to 1e-6 through VERL's real call path (the patched compute_advantage).
import { fileURLToPath } from "node:url";
import { writeJson } from "../../../../common/fs.ts";
import { Rng } from "../../../../common/prng.ts";
import {
  aceAdvantages,
  type AceConfig,
  confidenceShift,
  groupAdvantages,
  type Num,
  trainingDiagnostics,
} from "../../../../bench/core/mod.ts";
import { assert, assertEquals, ok } from "../../../assert.ts";
import { skipping } from "../../../external_inputs.ts";

const PYTHON = "/usr/bin/python3";
const fixtures = new URL("./fixtures/", import.meta.url);
const vectorsPath = fileURLToPath(new URL("ace_vectors.json", fixtures));

function torchAvailable(): boolean {
  try {
    return new Deno.Command(PYTHON, { args: ["-c", "import torch, numpy"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const hasTorch = torchAvailable();
skipping(
  "ACE parity",
  hasTorch ? null : `${PYTHON} with torch+numpy not found (apt-get install -y python3-torch)`,
);

interface Case {
  name: string;
  B: number;
  T: number;
  groupIds: number[];
  rewards: number[];
  correct: number[];
  oldLogp: number[];
  refLogp: number[];
  mask: number[];
  normByStd: boolean;
  ace: Omit<AceConfig, "enabled">;
  c: number[];
  expected: number[];
  /** The core's diagnostics for this batch under ACE, and for plain GRPO advantages (c summed, unclipped). */
  diagnostics: Record<string, number | null>;
  plain: number[];
  plainDiagnostics: Record<string, number | null>;
}

const DIAGNOSTIC_FIELDS = [
  "reward_mean",
  "accuracy",
  "adv_abs_mean",
  "ace_overconf_frac",
  "ace_overconf_mean_c",
  "ace_multiplier",
] as const;

/** The advantage-time fields of the core's trainingDiagnostics (loss metrics are not known at that point). */
function advantageDiagnostics(
  k: { rewards: number[]; correct: number[] },
  before: Num,
  after: Num,
  c: Num,
): Record<string, number | null> {
  const metrics = { pg_loss: 0, clipfrac: 0, clipfrac_lower: 0, ppo_kl: 0, kl: null, entropy: null };
  const d = trainingDiagnostics({
    rewards: k.rewards,
    correct: k.correct,
    advantages: before,
    finalAdvantages: after,
    c,
    groupsKeptFrac: 1,
    loss: 0,
    metrics,
  });
  return Object.fromEntries(DIAGNOSTIC_FIELDS.map((f) => [f, d[f]]));
}

/** One random batch: `groups` prompts × `g` rollouts of up to T tokens, ragged masks, some degenerate groups. */
function makeCase(
  name: string,
  rng: Rng,
  opts: { groups: number; g: number; T: number; pm1: boolean; shaped: boolean },
): Omit<
  Case,
  "normByStd" | "ace" | "c" | "expected" | "diagnostics" | "plain" | "plainDiagnostics"
> {
  // `groups` groups of g rollouts, plus one singleton group at the end (VERL: mean 0, std 1, so A = r)
  const B = opts.groups * opts.g + 1, T = opts.T;
  const groupIds: number[] = [],
    correct: number[] = [],
    mask: number[] = [],
    oldLogp: number[] = [],
    refLogp: number[] = [];
  for (let b = 0; b < B; b++) {
    const group = Math.min(Math.floor(b / opts.g), opts.groups);
    groupIds.push(group);
    // group 0 all wrong and group 1 all right (degenerate); the rest random
    correct.push(group === 0 ? 0 : group === 1 ? 1 : rng.float() < 0.4 ? 1 : 0);
    const len = b === 2 ? 0 : 1 + rng.int(T); // one all-masked row
    for (let t = 0; t < T; t++) {
      mask.push(t < len ? 1 : 0);
      const ref = -Math.abs(rng.normal()) * 2;
      refLogp.push(ref);
      // rollouts drift from the reference by a row-specific amount, so c_i spans both signs
      oldLogp.push(Math.min(0, ref + 0.6 * rng.normal() + (b % 3 - 1) * 0.3));
    }
  }
  // `shaped`: DAPO-style overlong penalties make some correct rollouts score below their group mean (A < 0), the
  // case where ACE must still leave them alone; the first correct one scores exactly 0 (cut at the length cap,
  // penalty factor 1), which only the verdict, not the score's sign, says is correct.
  const first = correct.indexOf(1);
  const rewards = correct.map((c, i) =>
    c ? (opts.shaped ? (i === first ? 0 : 1 - 0.9 * rng.float()) : 1) : opts.pm1 ? -1 : 0
  );
  return { name, B, T, groupIds, rewards, correct, oldLogp, refLogp, mask };
}

function vectors(): Case[] {
  const rng = Rng.seeded("verl-ace-parity");
  const variants: {
    normByStd: boolean;
    ace: Omit<AceConfig, "enabled">;
    pm1: boolean;
    T: number;
    shaped?: boolean;
  }[] = [
    {
      normByStd: true,
      pm1: false,
      T: 12,
      ace: { alpha: 1, phi: "softplus", aggregation: "sum", clip: null },
    },
    {
      normByStd: true,
      pm1: true,
      T: 40,
      ace: { alpha: 0.5, phi: "softplus", aggregation: "mean", clip: null },
    },
    { normByStd: false, pm1: true, T: 24, ace: { alpha: 2, phi: "relu", aggregation: "sum", clip: null } },
    { normByStd: true, pm1: false, T: 64, ace: { alpha: 1, phi: "softplus", aggregation: "sum", clip: 3 } },
    {
      normByStd: false,
      pm1: false,
      T: 8,
      ace: { alpha: 0, phi: "softplus", aggregation: "sum", clip: null },
    },
    { normByStd: true, pm1: true, T: 200, ace: { alpha: 1.5, phi: "relu", aggregation: "mean", clip: 0.25 } },
    {
      normByStd: true,
      pm1: true,
      T: 32,
      shaped: true,
      ace: { alpha: 1, phi: "softplus", aggregation: "sum", clip: null },
    },
  ];
  return variants.map((v, i) => {
    const base = makeCase(
      `v${i}-${v.ace.phi}-${v.ace.aggregation}-${v.normByStd ? "std" : "nostd"}`,
      rng.derive(i),
      {
        groups: 5,
        g: 4 + i % 3,
        T: v.T,
        pm1: v.pm1,
        shaped: v.shaped ?? false,
      },
    );
    const c = confidenceShift(base.oldLogp, base.refLogp, base.mask, base.B, base.T, v.ace);
    const adv = groupAdvantages(base.rewards, base.groupIds, { normByStd: v.normByStd, stdEps: 1e-6 });
    const expected = aceAdvantages(adv, base.correct, c, { enabled: true, ...v.ace });
    const cSum = confidenceShift(base.oldLogp, base.refLogp, base.mask, base.B, base.T);
    return {
      ...base,
      normByStd: v.normByStd,
      ace: v.ace,
      c: [...c],
      expected: [...expected],
      diagnostics: advantageDiagnostics(base, adv, expected, c),
      plain: [...adv],
      plainDiagnostics: advantageDiagnostics(base, adv, adv, cSum),
    };
  });
}

Deno.test("verl ace: TypeScript vectors exercise every branch", () => {
  const cases = vectors();
  const penalised = cases.flatMap((k) =>
    k.expected.filter((e, i) => e !== 0 && Math.abs(e - 0) > 0 && !k.correct[i])
  );
  ok(penalised.length > 20, "too few incorrect rollouts with a non-zero advantage");
  ok(
    cases.some((k) => k.c.some((c) => c > 0)) && cases.some((k) => k.c.some((c) => c < 0)),
    "c_i of both signs",
  );
  ok(cases.some((k) => k.expected.some((e, i) => e < 0 && k.correct[i])), "a correct rollout with A < 0");
  ok(cases.every((k) => k.groupIds.filter((g) => g === k.groupIds.at(-1)).length === 1), "a singleton group");
  ok(cases.some((k) => k.ace.clip !== null && k.c.some((c) => Math.abs(c) === k.ace.clip)), "a clipped c_i");
  // the rescale changed something (otherwise parity would be vacuous)
  const changed = cases.some((k) => {
    const plain = groupAdvantages(k.rewards, k.groupIds, { normByStd: k.normByStd, stdEps: 1e-6 });
    return k.expected.some((e, i) => Math.abs(e - plain[i]) > 1e-3);
  });
  ok(changed, "ACE never changed an advantage");
});

Deno.test({
  name: "verl ace: ace_verl.py matches the TypeScript core to 1e-6 through the patched compute_advantage",
  ignore: !hasTorch,
  fn() {
    const cases = vectors();
    writeJson(vectorsPath, { generatedBy: "tests/bench/engines/verl/ace_parity.test.ts", cases });
    const out = new Deno.Command(PYTHON, {
      args: [
        fileURLToPath(new URL("check_ace_parity.py", fixtures)),
        vectorsPath,
        fileURLToPath(new URL("../../../../bench/engines/verl/", import.meta.url)),
        fileURLToPath(new URL("fake_verl/", fixtures)),
      ],
      env: { PYTHONDONTWRITEBYTECODE: "1" },
    }).outputSync();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    const stderr = new TextDecoder().decode(out.stderr).trim();
    assert(out.success, `python check failed: ${stdout} ${stderr}`);
    const result = JSON.parse(stdout.split("\n").at(-1)!);
    assertEquals(result.cases, cases.length);
    ok(result.maxAbsDiff <= 1e-6, `max |diff| ${result.maxAbsDiff}`);
    assertEquals(result.checks, [
      "registered+patched",
      "parity",
      "diagnostics",
      "float32",
      "passthrough",
      "no-verdict-error",
      "missing-ref-error",
      "unpatched-error",
      "env-validation",
    ]);
  },
});
