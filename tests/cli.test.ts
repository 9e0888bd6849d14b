import { assertEquals, ok } from "./assert.ts";
import { runCli } from "./run_cli.ts";

const commands = ["fetch", "sweep", "eval", "serve", "grade", "report", "power", "regress", "bench"];

const cli = (...args: string[]) => runCli(args);

Deno.test("cli: unknown command exits 2 with usage", async () => {
  const r = await cli("frobnicate");
  assertEquals(r.code, 2);
  ok(r.stderr.includes("unknown command 'frobnicate'"));
  ok(r.stderr.includes("usage:"));
});

for (const name of commands) {
  Deno.test(`cli: ${name} --help prints usage and exits 0; a bad flag exits 2`, async () => {
    const help = await cli(name, "--help");
    assertEquals(help.code, 0, help.stderr);
    ok(help.stdout.includes("usage:"), help.stdout);
    const bad = await cli(name, "--no-such-flag");
    assertEquals(bad.code, 2, bad.stderr);
    ok(bad.stderr.split("\n")[0].includes("no-such-flag"), bad.stderr);
  });
}

Deno.test("cli: usage and config errors exit 2 with one line under the tasks' permissions", async () => {
  const dir = Deno.makeTempDirSync();
  const rw = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys"];
  try {
    const preset = await runCli(["sweep", "--preset", "nosuch", "--dry-run"], [...rw, "--allow-ffi"]);
    assertEquals(preset.code, 2, preset.stderr);
    ok(preset.stderr.startsWith("acebench sweep: --preset: no sweep preset 'nosuch' in bench/configs/"));
    const config = `${dir}/x.json`;
    Deno.writeTextFileSync(
      config,
      JSON.stringify({
        name: "x",
        engine: "tabular",
        seeds: [0],
        methods: [{ name: "grpo", preset: "grpo" }, {
          name: "ace",
          preset: "ace-grpo",
          overrides: { ace: { alpha: "big" } },
        }],
        grid: { "ace.alpha": [1, 2] },
        rl: { steps: 2 },
        eval: { n: 2, ks: [1, 2], every: 1 },
      }),
    );
    const clash = await runCli(["sweep", "--config", config, "--dry-run"], [...rw, "--allow-ffi"]);
    assertEquals(clash.code, 2, clash.stderr);
    assertEquals(
      clash.stderr.trim(),
      `acebench sweep: ${config}: methods[1].overrides.ace.alpha is also set by grid["ace.alpha"]`,
    );
    const input = `${dir}/preds.jsonl`;
    Deno.writeTextFileSync(input, '{"prediction": "\\\\boxed{2}", "gold": "2"}\n');
    Deno.symlinkSync(input, `${dir}/link.jsonl`);
    const same = await runCli(["grade", "--input", input, "--output", `${dir}/link.jsonl`], rw);
    assertEquals(same.code, 2, same.stderr);
    ok(same.stderr.startsWith(`acebench grade: --output ${dir}/link.jsonl is the --input file`), same.stderr);
    assertEquals(
      Deno.readTextFileSync(input),
      '{"prediction": "\\\\boxed{2}", "gold": "2"}\n',
      "input untouched",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
