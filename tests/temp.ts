// Temporary folders for tests, removed when the test module ends (Deno dispatches `unload` after each test
// module, whether its tests passed or failed), so a test run leaves nothing in $TMPDIR.
const made: string[] = [];

globalThis.addEventListener("unload", () => {
  for (const dir of made.splice(0)) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already removed by the test itself
    }
  }
});

/** A fresh folder under $TMPDIR (prefix default "acebench-test-"), removed when the test module finishes. */
export function tempDir(prefix = "acebench-test-"): string {
  const dir = Deno.makeTempDirSync({ prefix });
  made.push(dir);
  return dir;
}
