// The shipped VERL sweep configs validate, expand into runs, and plan without errors; plus the full offline
// datasets exported through the datasets area's loader and read back (skipped when ../shared/datasets is absent).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exists } from "../../../../common/fs.ts";
import { loadDataset, renderPrompt } from "../../../../datasets/mod.ts";
import { checkSweepConfig, expandRuns, readSweepConfig } from "../../../../bench/sweep/mod.ts";
import {
  DEFAULT_VERL_VERSION,
  exportVerlData,
  readVerlParquet,
  validateVerlSettings,
  verlRunPlan,
} from "../../../../bench/engines/verl/mod.ts";
import { main as sweepMain } from "../../../../commands/sweep.ts";
import { assertEquals, ok, throws } from "../../../assert.ts";
import { DATASET_MIRROR, missing, skipping } from "../../../external_inputs.ts";

const configsDir = fileURLToPath(new URL("../../../../bench/configs/", import.meta.url));
const configs = [...Deno.readDirSync(configsDir)].map((e) => e.name).filter((n) => /^verl-.*\.json$/.test(n))
  .sort();

Deno.test("verl configs: every bench/configs/verl-*.json validates and plans each run", () => {
  ok(configs.length >= 3, `found ${configs.join(", ")}`);
  for (const file of configs) {
    const sweep = readSweepConfig(join(configsDir, file));
    assertEquals(sweep.engine, "verl");
    const runs = expandRuns(sweep);
    ok(runs.length >= (file === "verl-smoke.json" ? 2 : 4), file);
    const lengths = new Set<string>();
    for (const run of runs) {
      const plan = verlRunPlan(run, { ...sweep, dir: join("runs", sweep.name) }, {});
      const length = (key: string) =>
        Number(plan.overrides.find((o) => o.startsWith(`${key}=`))!.split("=")[1]);
      const total = length("data.max_prompt_length") + length("data.max_response_length");
      lengths.add(`${length("data.max_prompt_length")}/${length("data.max_response_length")}`);
      // Qwen2.5-Math-7B has a 4096-token context window
      if (file.includes("qwen25-math")) ok(total <= 4096, `${file} ${run.runId}: ${total} tokens`);
      assertEquals(plan.overrides.includes("algorithm.adv_estimator=ace"), run.preset.startsWith("ace-"));
    }
    // GRPO and DAPO arms of one sweep see the same prompts (filter_overlong_prompts) and response budget
    assertEquals(lengths.size, 1, `${file}: arms with different lengths ${[...lengths]}`);
  }
});

Deno.test("verl configs: bad VERL settings in a sweep are rejected naming the field", () => {
  const sweep = {
    name: "bad",
    engine: "verl",
    seeds: [0],
    methods: [{ name: "grpo", preset: "grpo" }],
    settings: { rolloutN: 0 },
    rl: { steps: 1 },
    eval: { n: 1, ks: [1] },
  };
  throws(() => checkSweepConfig(sweep, "bad.json"), /bad\.json: settings: rolloutN: must be >= 1/);
});

const shared = DATASET_MIRROR;
const hasShared = exists(shared);
skipping("the full-data VERL export", hasShared ? null : missing("datasetMirror"));

Deno.test({
  name: "verl export: full DAPO-Math-17K, MATH-500 and AIME 2025 round-trip through parquet",
  ignore: !hasShared,
  async fn() {
    const dir = mkdtempSync(join(tmpdir(), "verl-full-"));
    try {
      const options = { cacheDir: join(dir, "cache"), mirror: shared };
      const settings = validateVerlSettings({
        trainDatasets: ["dapo-math-17k"],
        valDatasets: ["math500", "aime2025"],
      });
      const loaded = new Map<string, Awaited<ReturnType<typeof loadDataset>>>();
      const files = await exportVerlData(dir, settings, async (name) => {
        const records = await loadDataset(name, options);
        loaded.set(name, records);
        return records;
      });
      assertEquals(settings.template, "boxed"); // the form acebench's reward and Qwen2.5-Math's chat template ask for
      for (const file of files) {
        const rows = await readVerlParquet(file.path);
        const records = loaded.get(file.dataset)!;
        assertEquals(rows.length, records.length, file.dataset);
        for (const i of [0, Math.floor(rows.length / 2), rows.length - 1]) {
          assertEquals(rows[i].extra_info.id, records[i].id);
          assertEquals(rows[i].reward_model.ground_truth, records[i].answer);
          assertEquals(rows[i].prompt[0].content, renderPrompt(records[i], settings.template)); // boxed by default
        }
      }
      assertEquals(files.map((f) => f.rows).slice(1), [500, 30]);
      ok(files[0].rows > 17000, `dapo rows ${files[0].rows}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

Deno.test("verl configs: sweep --dry-run of every shipped config shows the VERL release each run targets", async () => {
  const log = console.log;
  for (const file of configs) {
    let out = "";
    console.log = (...args: unknown[]) => (out += args.join(" ") + "\n");
    try {
      assertEquals(await sweepMain(["--config", join(configsDir, file), "--dry-run"]), 0);
    } finally {
      console.log = log;
    }
    const runs = expandRuns(readSweepConfig(join(configsDir, file)));
    const targets = [...out.matchAll(/^target: verl v(\S+) \((\d+) runs\)$/gm)];
    assertEquals(targets.map((t) => t[1]), [DEFAULT_VERL_VERSION], `${file}: ${out}`);
    assertEquals(Number(targets[0][2]), runs.length, `${file}: every run targets it`);
    // what 0.9.0 cannot express (DAPO's round cap) is said, not silently dropped
    const dapo = runs.filter((r) => r.algo.dynamicSampling.enabled).length;
    const capNote = out.match(
      /^note: not expressible in verl v0\.9\.0, so not passed: .*max_num_gen_batches.* \((\d+) runs\)$/m,
    );
    assertEquals(capNote ? Number(capNote[1]) : 0, dapo, `${file}: ${out}`);
  }
});

Deno.test("verl settings: a Deno named without a checkout would be ignored (the grader is bundled), so it is an error", () => {
  throws(
    () => validateVerlSettings({ deno: "/opt/deno" }, "cfg.json: settings"),
    /cfg\.json: settings\.deno is '\/opt\/deno', but the grader is bundled .* set acebenchRoot/,
  );
  assertEquals(validateVerlSettings({ deno: "/opt/deno", acebenchRoot: "/srv/acebench" }).deno, "/opt/deno");
  assertEquals(validateVerlSettings({}).deno, "deno");
});
