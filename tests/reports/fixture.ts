// The fixture sweep shared by the report tests (written by the fake engine of tests/bench/sweep/fixtures).
import { join } from "node:path";

/** Path of the committed fixture sweep. */
export const fixture = new URL("./fixtures/sweep", import.meta.url).pathname;

/** A copy of the fixture sweep in a temp folder (reports write next to the sweep). */
export function copyFixture(): string {
  const dir = Deno.makeTempDirSync({ prefix: "report-" });
  for (const entry of Deno.readDirSync(join(fixture, "runs"))) {
    Deno.mkdirSync(join(dir, "runs", entry.name), { recursive: true });
    for (const f of Deno.readDirSync(join(fixture, "runs", entry.name))) {
      Deno.copyFileSync(join(fixture, "runs", entry.name, f.name), join(dir, "runs", entry.name, f.name));
    }
  }
  Deno.copyFileSync(join(fixture, "sweep.json"), join(dir, "sweep.json"));
  return dir;
}
