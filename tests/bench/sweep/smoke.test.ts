// `sweep --smoke`: a VERL config that asks to launch is only planned (settings.launch "none"), and says so.
import { assertEquals, ok } from "../../assert.ts";
import { checkSweepConfig, readSweepConfig, smokeConfig, smokeNote } from "../../../bench/sweep/mod.ts";

const verlSmoke = () => readSweepConfig("bench/configs/verl-smoke.json");

for (const launch of ["local", "ray-job"]) {
  Deno.test(`--smoke on a VERL config with launch "${launch}" plans only and says so`, () => {
    const read = verlSmoke();
    const asked = { ...read, settings: { ...read.settings, launch } as Record<string, unknown> };
    const smoke = checkSweepConfig(smokeConfig(asked), "verl-smoke.json (--smoke)");
    assertEquals(smoke.settings.launch, "none");
    // the rest of the plan is the real one (rl.steps is the smoke's 2 steps)
    const { launch: _l, rl: _r, ...kept } = smoke.settings;
    const { launch: _a, rl: _b, ...settings } = asked.settings;
    assertEquals(kept, settings);
    const note = smokeNote(asked);
    ok(note !== null && note.includes(`"${launch}"`) && note.includes("never launched"), String(note));
  });
}

Deno.test("--smoke says nothing for a VERL config that only plans, nor for a local engine", () => {
  assertEquals(smokeNote(verlSmoke()), null);
  assertEquals(smokeNote(readSweepConfig("bench/configs/ci-tabular.json")), null);
});
