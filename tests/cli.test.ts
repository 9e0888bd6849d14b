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
