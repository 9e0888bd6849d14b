// An engine is one registry entry: a config naming a new engine runs through `deno task sweep` (its --dry-run,
// --smoke, the sweep, its record and report) with nothing but an entry in bench/engines/registry.ts.
import { join } from "node:path";
import { assertEquals, ok } from "../../assert.ts";
import { engines } from "../../../bench/engines/registry.ts";
import { presetPath, readSweepConfig, smokeConfig } from "../../../bench/sweep/mod.ts";
import { main } from "../../../commands/sweep.ts";
import { readFolderFile, readStatus } from "../../../common/run_folder.ts";
import { fakeSpec } from "../sweep/fixtures/fake_spec.ts";
import { tempDir } from "../../temp.ts";

/** Run `main` capturing stdout; the exit code and what was printed. */
async function captured(args: string[]): Promise<{ code: number; out: string }> {
  const log = console.log, lines: string[] = [];
  console.log = (...a: unknown[]) => lines.push(a.join(" "));
  try {
    return { code: await main(args), out: lines.join("\n") };
  } finally {
    console.log = log;
  }
}

Deno.test("registry: a toy engine with only its registry entry runs --dry-run, --smoke and a sweep", async () => {
  const protocol = fakeSpec.protocol;
  engines.toy = {
    ...fakeSpec,
    name: "toy",
    base: () => "; base b is toy world b",
    maxBases: 2,
    smoke: { settings: { problems: 1 } },
    protocol: (s, e) => ({ ...protocol(s, e), datasets: ["toy"] }),
  };
  try {
    const dir = tempDir();
    const config = join(dir, "toy.json");
    const sweep = {
      name: "toy",
      engine: "toy",
      bases: 2,
      seedsPerBase: 1,
      methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
      settings: { stepMs: 0, problems: 3 },
      rl: { steps: 2 },
      eval: { n: 2, ks: [1, 2], every: 1 },
    };
    Deno.writeTextFileSync(config, JSON.stringify(sweep));
    const dry = await captured(["--config", config, "--out", join(dir, "dry"), "--dry-run"]);
    assertEquals(dry.code, 0);
    ok(dry.out.includes("engine toy") && dry.out.includes("; base b is toy world b"), dry.out);
    const out = join(dir, "out");
    assertEquals(await main(["--config", config, "--out", out, "--smoke", "--no-report"]), 0);
    const written = readFolderFile<{ name: string; settings: { problems: number } }>(out)!;
    assertEquals(written.config.name, "toy-smoke");
    assertEquals(written.config.settings.problems, 1, "the entry's smoke settings were applied");
    assertEquals(written.record!.protocol.datasets, ["toy"], "the entry's protocol is the record's");
    for (const id of ["grpo_b0_s0", "ace-grpo_b1_s0"]) {
      assertEquals(readStatus(join(out, "runs", id))?.state, "done");
    }
    // The entry's config rules hold too: more bases than it allows are refused, naming the field.
    Deno.writeTextFileSync(config, JSON.stringify({ ...sweep, bases: 3 }));
    let refused = "";
    await main(["--config", config, "--dry-run"]).catch((e) => refused = (e as Error).message);
    ok(/bases: 3, but a toy sweep has at most 2 base model/.test(refused), refused);
  } finally {
    delete engines.toy;
  }
});

Deno.test("registry: a config naming an engine outside the registry is refused, naming the known ones", async () => {
  const config = join(tempDir(), "x.json");
  Deno.writeTextFileSync(
    config,
    JSON.stringify({
      name: "x",
      engine: "nope",
      seeds: [0],
      methods: [{ name: "grpo", preset: "grpo" }],
      settings: {},
      rl: { steps: 1 },
      eval: { n: 1, ks: [1], every: 1 },
    }),
  );
  let refused = "";
  await main(["--config", config, "--dry-run"]).catch((e) => refused = (e as Error).message);
  ok(refused.includes(`${config}: engine: unknown engine 'nope' (known: tabular, tfjs, verl)`), refused);
});

Deno.test("registry: --smoke on a VERL config that would launch (local, ray-job) only plans, and says so", () => {
  for (const launch of ["local", "ray-job"]) {
    const sweep = readSweepConfig(presetPath("verl-smoke"));
    sweep.settings.launch = launch;
    const smoke = smokeConfig(sweep, engines.verl);
    assertEquals(smoke.settings.launch, "none");
    ok(smoke.description!.includes("only plans") && smoke.description!.includes("nothing launched"));
    assertEquals(smoke.methods, sweep.methods, "a plan keeps the real methods");
  }
});
