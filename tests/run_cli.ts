// Run `cli.ts` as a subprocess, the way `deno task` does, for tests of the real command-line path.

/**
 * The permission flags `deno task NAME` runs with, as deno.json declares them (e.g. ["--allow-read", …]); a name
 * with no task (an unknown command, `--help`) gets read and env only.
 */
export function taskPermissions(name: string): string[] {
  const tasks = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url))).tasks;
  const command = tasks[name];
  if (typeof command !== "string") return ["--allow-read", "--allow-env"];
  return command.split(/\s+/).filter((word: string) => word.startsWith("--allow-"));
}

/**
 * Exit code and decoded output of one `deno run <permissions> cli.ts …` (CI=true, so no progress bars); the
 * permissions default to those of `deno task <args[0]>`.
 */
export async function runCli(
  args: string[],
  permissions: string[] = taskPermissions(args[0] ?? ""),
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
