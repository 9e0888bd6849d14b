import { assert, assertEquals } from "../../../assert.ts";
import { taskPermissions } from "../../../run_cli.ts";

// The adapter probe runs in every tfjs worker; without XDG_RUNTIME_DIR (containers, CI, cron) Mesa's Vulkan
// loader used to print "error: XDG_RUNTIME_DIR is invalid or not set" twice per probe though nothing was wrong.
async function probe(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const script = new URL("./webgpu_probe.ts", import.meta.url).pathname;
  const base = { ...Deno.env.toObject(), ...env };
  delete base.XDG_RUNTIME_DIR;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...taskPermissions("sweep"), script],
    env: base,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assertEquals(out.code, 0, dec.decode(out.stderr));
  return { stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("webgpu probe: no error lines without XDG_RUNTIME_DIR, with the sweep's permissions", async () => {
  const { stdout, stderr } = await probe({});
  assert(/adapter (true|false)/.test(stdout), stdout);
  assert(!/error/i.test(stderr), `the probe printed: ${stderr}`);
});

Deno.test("webgpu probe: ACEBENCH_WEBGPU_ADAPTER=0 answers no adapter without probing", async () => {
  const { stdout } = await probe({ ACEBENCH_WEBGPU_ADAPTER: "0" });
  assert(stdout.includes("adapter false"), stdout);
});
