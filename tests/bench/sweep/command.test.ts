// `deno task sweep` end to end (commands/sweep.ts): dry run, --only, a real tabular sweep and its report.
import { join } from "node:path";
import { assertEquals, ok, rejects } from "../../assert.ts";
import { main } from "../../../commands/sweep.ts";
import { exists, readJson, writeJson } from "../../../common/fs.ts";
import { tempDir } from "../../temp.ts";
import { readFolderFile, readRunConfig } from "../../../common/run_folder.ts";

async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string }> {
  const log = console.log;
  let out = "";
  console.log = (...args: unknown[]) => (out += args.join(" ") + "\n");
  try {
    return { code: await fn(), out };
  } finally {
    console.log = log;
  }
}

Deno.test("sweep command: --dry-run prints the matrix and runs nothing; --only filters", async () => {
  const out = join(tempDir(), "sweep");
  const costs = join(tempDir(), "costs.json");
  Deno.env.set("ACEBENCH_COST_MODEL", costs); // --calibrate stores here, not in the shipped cost model
  try {
    const { code, out: text } = await captured(() =>
      main(["--preset", "ci-tabular", "--out", out, "--dry-run"])
    );
    assertEquals(code, 0);
    for (const id of ["grpo_s0", "grpo_s1", "ace-grpo_s0", "ace-grpo_s7"]) ok(text.includes(id), id);
    ok(text.includes("design: seeds on one shared base model: seeds 0, 1, 2, 3, 4, 5, 6, 7"), text);
    const bases = await captured(() => main(["--preset", "tabular", "--out", out, "--dry-run"]));
    for (const id of ["grpo_b0_s0", "grpo_b4_s0", "ace-grpo_a1_softplus_sum_b4_s0"]) {
      ok(bases.out.includes(id), id);
    }
    ok(
      bases.out.includes(
        "design: bases × seeds per base: 5 base model(s) (bases 0–4) × 1 seed(s) per base (RL seeds 0–0 within " +
          "each base), 5 run(s) per method; base b is tabular world worldSeed + b",
      ),
      bases.out,
    );
    ok(text.includes("no timing measured yet") && text.includes("nor a calibration of these settings"), text);
    ok(!exists(out) && !exists(costs), "a dry run trains and writes nothing");
    const only = await captured(() =>
      main(["--preset", "ci-tabular", "--out", out, "--dry-run", "--only", "ace-*", "--calibrate"])
    );
    ok(
      only.out.includes(`(one calibration, so no spread known; from the stored cost model ${costs}`),
      only.out,
    );
    ok(!exists(out), "a calibrated dry run writes nothing in the sweep folder");
    ok(only.out.includes("8 runs") && !/^grpo_s0 /m.test(only.out), only.out);
    // The next dry run reads the stored calibration without training.
    const again = await captured(() => main(["--preset", "ci-tabular", "--out", out, "--dry-run"]));
    ok(again.out.includes("one calibration, so no spread known"), again.out);
    await rejects(
      () => main(["--preset", "ci-tabular", "--calibrate"]),
      /--calibrate goes with --dry-run/,
    );
    await rejects(
      () => main(["--preset", "ci-tabular", "--only", "nothing-matches", "--dry-run"]),
      /matches none of/,
    );
  } finally {
    Deno.env.delete("ACEBENCH_COST_MODEL");
  }
});

Deno.test("sweep command: --dry-run of a VERL sweep shows the cost table; --verbose the overrides and `ray job submit`", async () => {
  const presets = [...Deno.readDirSync(new URL("../../../bench/configs/", import.meta.url))]
    .map((e) => e.name).filter((n) => n.startsWith("verl-"));
  ok(presets.length > 0, "no verl-* preset in bench/configs");
  const name = presets.sort()[0].replace(/\.json$/, "");
  const short = await captured(() => main(["--preset", name, "--dry-run", "--only", "grpo_s0"]));
  assertEquals(short.code, 0);
  ok(short.out.includes("VERL cost and memory plan") && !short.out.includes("Hydra overrides:"), short.out);
  const { code, out } = await captured(() =>
    main(["--preset", name, "--dry-run", "--verbose", "--only", "grpo_s0"])
  );
  assertEquals(code, 0);
  ok(
    out.includes("Hydra overrides:") && out.includes("ray job submit") && out.includes("#!/usr/bin/env bash"),
    out,
  );
});

Deno.test("sweep command: a small tabular sweep runs, writes the report, and a re-run skips everything", async () => {
  const dir = tempDir();
  const config = join(dir, "tiny.json");
  writeJson(config, {
    name: "tiny",
    engine: "tabular",
    seeds: [0],
    methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
    settings: { prompts: 20, checkpointEvery: 5 },
    rl: { steps: 10, promptsPerStep: 8 },
    eval: { n: 8, ks: [1, 8], every: 5 },
  });
  const out = join(dir, "out");
  assertEquals(await main(["--config", config, "--out", out, "--workers", "2"]), 0);
  for (
    const f of ["sweep.json", "passk.csv", "summary.md", "plots/passk_tabular.svg", "plots/training.svg"]
  ) {
    ok(exists(join(out, f)), f);
  }
  const summary = Deno.readTextFileSync(join(out, "summary.md"));
  ok(summary.includes("| grpo |") && summary.includes("ace-grpo − grpo"), summary);
  ok(
    summary.includes("| step 0 (before RL) |"),
    "the tabular engine evaluates step 0: the table shows it first",
  );
  const status = readJson<{ state: string }>(join(out, "runs/grpo_s0/status.json"));
  assertEquals(status.state, "done");
  // The typed record: design, each method's family and baseline (from the resolved algorithm), the protocol.
  const record = readFolderFile(out)!.record!;
  assertEquals(record.design, { kind: "seeds", seeds: [0] });
  assertEquals(record.methods.map((m) => [m.name, m.family, m.baseline]), [
    ["grpo", "standard", null],
    ["ace-grpo", "ace", "grpo"],
  ]);
  assertEquals(record.protocol.grader, { mode: "none", version: null, timeoutMs: null });
  assertEquals([record.protocol.n, record.protocol.ks], [8, [1, 8]]);
  const run = readRunConfig(join(out, "runs/ace-grpo_s0"))!.record!;
  assertEquals([run.method.family, run.method.baseline, run.protocol], ["ace", "grpo", record.protocol]);
  ok(summary.includes("## Evaluation protocol\n\n- grader: none (correctness known exactly"), summary);
  const before = Deno.readTextFileSync(join(out, "runs/grpo_s0/metrics.jsonl"));
  assertEquals(await main(["--config", config, "--out", out, "--no-report"]), 0);
  assertEquals(Deno.readTextFileSync(join(out, "runs/grpo_s0/metrics.jsonl")), before);
  // The recorded sweep.json is itself a valid --config with the same hash.
  assertEquals(await main(["--config", join(out, "sweep.json"), "--out", out, "--no-report"]), 0);
  Deno.removeSync(dir, { recursive: true });
});
