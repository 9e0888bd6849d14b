// Run `cli.ts` as a subprocess, the way `deno task` does, for tests of the real command-line path.

/** Exit code and decoded output of one `deno run <permissions> cli.ts …` (CI=true, so no progress bars). */
export async function runCli(
  args: string[],
  permissions: string[] = ["-A"],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, new URL("../cli.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { CI: "true" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
