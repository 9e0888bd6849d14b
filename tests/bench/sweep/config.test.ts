import { assertEquals, ok, throws } from "../../assert.ts";
import {
  baseSeed,
  checkSweepConfig,
  designUnits,
  expandRuns,
  filterRuns,
  presetPath,
  readSweepConfig,
} from "../../../bench/sweep/mod.ts";
import { fakeSpec } from "./fixtures/fake_spec.ts";
import { engines, type EngineSpec } from "../../../bench/engines/registry.ts";
import { UsageError } from "../../../common/args.ts";
import { PRESETS } from "../../../bench/core/mod.ts";
import { baseKey, resolveSettings } from "../../../bench/engines/tfjs/settings.ts";
import { BASE_SIDE, CLAIMS } from "../../../reports/controls.ts";
import { ValidationError } from "../../../common/config.ts";

const base = {
  name: "t",
  engine: "tabular",
  seeds: [0, 1],
  methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
  rl: { steps: 5 },
  eval: { n: 8, ks: [1, 2, 8] },
};

/** `spec` null: the engine is looked up in the registry. */
function rejectsWith(value: unknown, pattern: RegExp, spec: EngineSpec | null = fakeSpec) {
  throws(() => checkSweepConfig(value, "sweep.json", spec ?? undefined), (e: Error) => {
    ok(pattern.test(e.message), `message '${e.message}' does not match ${pattern}`);
    ok(!e.message.includes("\n"), "one-line error");
    return true;
  });
}

Deno.test("sweep config: schema failures name the file and the field", () => {
  rejectsWith(
    { ...base, engine: "torch" },
    /^sweep\.json: engine: unknown engine 'torch' \(known: tabular, tfjs, verl\)/,
    null,
  );
  rejectsWith({ ...base, seeds: [] }, /^sweep\.json: seeds: must NOT have fewer than 1 items/);
  rejectsWith(
    { ...base, methods: [{ name: "x", preset: "ppo" }] },
    /methods\[0\]\.preset: .*grpo, dapo, ace-grpo, ace-dapo/,
  );
  rejectsWith({ ...base, rl: {} }, /rl: must have required property 'steps'/);
  rejectsWith({ ...base, eval: { n: 4, ks: [1, 8] } }, /eval\.ks: k=8 exceeds eval\.n=4/);
  rejectsWith({ ...base, grid: { "ace.phi": ["tanh"] } }, /grid\.ace\.phi\[0\]: must be equal to one of/);
  rejectsWith({ ...base, colour: "red" }, /\(root\): must NOT have additional properties 'colour'/);
  rejectsWith(
    { ...base, methods: [base.methods[0], base.methods[0]] },
    /methods\[1\]\.name: duplicate method 'grpo'/,
  );
  rejectsWith(
    { ...base, methods: [base.methods[0]], grid: { "ace.alpha": [1] } },
    /grid: there is no ACE method/,
  );
});

Deno.test("sweep config: a bad algo override names the file and its JSON path, even where the grid would win", () => {
  const methods = (overrides: Record<string, unknown>) => [
    base.methods[0],
    { name: "ace-grpo", preset: "ace-grpo", overrides },
  ];
  const msg = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      ok(e instanceof ValidationError, String(e));
      return (e as Error).message;
    }
    throw new Error("accepted");
  };
  assertEquals(
    msg(() =>
      checkSweepConfig(
        { ...base, methods: [{ name: "g", preset: "grpo", overrides: { clipLo: 0.1 } }] },
        "s.json",
        fakeSpec,
      )
    ),
    "s.json: methods[0].overrides.clipLo: unknown field of preset grpo (see bench/core/algo.schema.json)",
  );
  assertEquals(
    msg(() => checkSweepConfig({ ...base, methods: methods({ ace: { alpha: "big" } }) }, "s.json", fakeSpec)),
    's.json: methods[1].overrides.ace.alpha: must be number (got "big")',
  );
  assertEquals(
    msg(() => checkSweepConfig({ ...base, methods: methods({ "ace.alpha": "big" }) }, "s.json", fakeSpec)),
    's.json: methods[1].overrides["ace.alpha"]: must be number (got "big")',
  );
  // Set on the method and by the grid: an error naming both places (the grid used to win silently).
  for (
    const [overrides, where] of [[{ ace: { alpha: "big" } }, ".ace.alpha"], [
      { "ace.alpha": 2 },
      '["ace.alpha"]',
    ]]
  ) {
    assertEquals(
      msg(() =>
        checkSweepConfig(
          { ...base, methods: methods(overrides as Record<string, unknown>), grid: { "ace.alpha": [1, 2] } },
          "bench/configs/x.json",
          fakeSpec,
        )
      ),
      `bench/configs/x.json: methods[1].overrides${where} is also set by grid["ace.alpha"]`,
    );
  }
  // A whole `ace` object overrides every grid axis under it.
  ok(
    msg(() =>
      checkSweepConfig(
        { ...base, methods: methods({ ace: { phi: "softplus" } }), grid: { "ace.phi": ["softplus"] } },
        "s.json",
        fakeSpec,
      )
    ).endsWith('methods[1].overrides.ace.phi is also set by grid["ace.phi"]'),
  );
  // Fields the grid does not set, and grid axes on non-ACE methods, are fine.
  const ok2 = checkSweepConfig(
    { ...base, methods: methods({ ace: { phi: "softplus" } }), grid: { "ace.alpha": [1, 2] } },
    "s.json",
    fakeSpec,
  );
  assertEquals(expandRuns(ok2).filter((r) => r.preset === "ace-grpo").length, 4);
});

Deno.test("sweep config: the ACE grid expands ACE methods only, ids encode the grid values", () => {
  const sweep = checkSweepConfig(
    { ...base, grid: { "ace.alpha": [0.5, 2], "ace.aggregation": ["sum", "mean"] } },
    "s.json",
    fakeSpec,
  );
  const runs = expandRuns(sweep);
  assertEquals(runs.length, 2 + 4 * 2);
  assertEquals(runs.map((r) => r.runId).slice(0, 4), [
    "grpo_s0",
    "grpo_s1",
    "ace-grpo_a0.5_sum_s0",
    "ace-grpo_a0.5_sum_s1",
  ]);
  const r = runs.find((r) => r.runId === "ace-grpo_a2_mean_s1")!;
  assertEquals(r.method, "ace-grpo_a2_mean");
  assertEquals((r.algo.ace as { alpha: number }).alpha, 2);
  assertEquals((r.algo.ace as { aggregation: string }).aggregation, "mean");
  assertEquals((r.settings.rl as { steps: number }).steps, 5);
  assertEquals(r.eval, { n: 8, ks: [1, 2, 8], every: 1000000 });
  assertEquals(filterRuns(runs, "ace-grpo_a2*").length, 4);
  assertEquals(filterRuns(runs, "*_s1").length, 5);
  assertEquals(filterRuns(runs, "grpo_s1").map((r) => r.runId), ["grpo_s1"]);
  assertEquals(filterRuns(runs, "ace-grpo_a2_mean").map((r) => r.runId), [
    "ace-grpo_a2_mean_s0",
    "ace-grpo_a2_mean_s1",
  ]);
});

Deno.test("sweep config: every shipped preset in bench/configs validates", () => {
  for (const entry of Deno.readDirSync(new URL("../../../bench/configs/", import.meta.url))) {
    if (!entry.name.endsWith(".json")) continue;
    const path = presetPath(entry.name.replace(/\.json$/, ""));
    const sweep = readSweepConfig(path);
    ok(expandRuns(sweep).length > 0, entry.name);
  }
  throws(
    () => presetPath("no-such-preset"),
    (e: Error) => e instanceof UsageError && /no sweep preset 'no-such-preset'/.test(e.message),
  );
});

Deno.test("sweep config: compare names methods of the sweep, else the entry and field are named", () => {
  checkSweepConfig({ ...base, compare: [{ method: "ace-grpo", against: ["grpo"] }] }, "s.json", fakeSpec);
  rejectsWith(
    { ...base, compare: [{ method: "ace-grpo", against: ["rloo"] }] },
    /compare\[0\]\.against\[0\]: 'rloo' is not a method/,
  );
});

Deno.test("sweep config: bases × seedsPerBase give every method the same (base, seed) units, ids _b<b>_s<s>", () => {
  const { seeds: _seeds, ...design } = base;
  const sweep = checkSweepConfig({ ...design, bases: 3, seedsPerBase: 2 }, "s.json", fakeSpec);
  const units = designUnits(sweep);
  assertEquals(units.map((u) => `${u.base}/${u.seed}`), ["0/0", "0/1", "1/0", "1/1", "2/0", "2/1"]);
  const runs = expandRuns(sweep);
  assertEquals(runs.length, 2 * 6);
  assertEquals(runs.slice(0, 3).map((r) => r.runId), ["grpo_b0_s0", "grpo_b0_s1", "grpo_b1_s0"]);
  const ace = runs.find((r) => r.runId === "ace-grpo_b2_s1")!;
  assertEquals([ace.base, ace.seed], [2, 1]);
  for (const method of ["grpo", "ace-grpo"]) {
    assertEquals(
      runs.filter((r) => r.method === method).map((r) => [r.base, r.seed]),
      units.map((u) => [u.base, u.seed]),
    );
  }
  assertEquals([baseSeed(sweep, 0), baseSeed(sweep, 2)], [0, 2]);
  assertEquals(filterRuns(runs, "*_b1_*").length, 4);
  // seedsPerBase defaults to 1; a seeds list is one base (base 0, trained with its first seed).
  assertEquals(
    expandRuns(checkSweepConfig({ ...design, bases: 2 }, "s.json", fakeSpec)).map((r) => r.runId),
    [
      "grpo_b0_s0",
      "grpo_b1_s0",
      "ace-grpo_b0_s0",
      "ace-grpo_b1_s0",
    ],
  );
  const legacy = checkSweepConfig({ ...base, seeds: [3, 5] }, "s.json", fakeSpec);
  assertEquals(expandRuns(legacy).map((r) => [r.runId, r.base, r.seed]), [
    ["grpo_s3", 0, 3],
    ["grpo_s5", 0, 5],
    ["ace-grpo_s3", 0, 3],
    ["ace-grpo_s5", 0, 5],
  ]);
  assertEquals(baseSeed(legacy, 0), 3);
});

Deno.test("sweep config: seeds and bases are exclusive, seedsPerBase needs bases, VERL has one base", () => {
  const { seeds: _seeds, ...design } = base;
  rejectsWith({ ...base, bases: 2 }, /^sweep\.json: seeds: give either 'seeds' .* or 'bases'/);
  rejectsWith(design, /must have 'bases' \(base models\) or 'seeds'/);
  rejectsWith({ ...base, seedsPerBase: 2 }, /seedsPerBase: only with 'bases'/);
  rejectsWith({ ...design, bases: 0 }, /bases: must be >= 1/);
  rejectsWith({ ...design, bases: 2, seedsPerBase: 0 }, /seedsPerBase: must be >= 1/);
  // VERL's registry entry allows one base (the pretrained model); its settings schema is not under test here.
  const verl = { ...fakeSpec, name: "verl", maxBases: engines.verl.maxBases };
  rejectsWith(
    { ...design, engine: "verl", bases: 4 },
    /bases: 4, but a verl sweep has at most 1 base model/,
    verl,
  );
  checkSweepConfig({ ...design, engine: "verl", bases: 1 }, "s.json", verl);
});

Deno.test("sweep config: baselines-tfjs runs every registered method from ≥ 8 bases; ace-dose from the same bases", () => {
  const baselines = readSweepConfig(presetPath("baselines-tfjs"));
  const dose = readSweepConfig(presetPath("ace-dose"));
  assertEquals(baselines.engine, "tfjs");
  ok((baselines.bases ?? 0) >= 8, "≥ 8 bases");
  assertEquals(baselines.methods.map((m) => m.preset).sort(), Object.keys(PRESETS).sort());
  // Every positive control's methods are in the sweep, so each claim can be checked.
  const presets = new Set(baselines.methods.map((m) => m.preset));
  for (const c of CLAIMS) for (const side of [c.a, c.b]) ok(side === BASE_SIDE || presets.has(side), side);
  // The α sweep: at least 0 (grpo itself), 0.5, 1, 2, 4, both confidence shifts, the same bases and settings.
  assertEquals(dose.grid?.["ace.alpha"], [0.5, 1, 2, 4]);
  assertEquals(dose.grid?.["ace.aggregation"], ["sum", "mean"]);
  ok(dose.methods.some((m) => m.preset === "grpo"), "grpo is α = 0");
  assertEquals([dose.engine, dose.bases, dose.seedsPerBase], [baselines.engine, baselines.bases, 1]);
  // The same base models (their key) and the same main evaluation; baselines-tfjs adds the papers' protocol.
  const { protocols: _protocols, ...evalOf } = (baselines.settings.eval ?? {}) as Record<string, unknown>;
  assertEquals(baseKey(resolveSettings(dose.settings)), baseKey(resolveSettings(baselines.settings)));
  assertEquals(dose.settings.eval, evalOf);
  assertEquals(dose.settings.rl, baselines.settings.rl);
});
