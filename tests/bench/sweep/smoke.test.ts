// `sweep --smoke`: a VERL config that asks to launch is only planned (settings.launch "none"); the rest of the
// plan is the real one. (The line the command prints is checked in tests/bench/engines/registry.test.ts.)
import { assertEquals, ok } from "../../assert.ts";
import { checkSweepConfig, readSweepConfig, smokeConfig } from "../../../bench/sweep/mod.ts";
import { engineSpec } from "../../../bench/engines/registry.ts";

const verlSmoke = () => readSweepConfig("bench/configs/verl-smoke.json");

for (const launch of ["local", "ray-job"]) {
  Deno.test(`--smoke on a VERL config with launch "${launch}" plans only`, () => {
    const read = verlSmoke();
    const asked = { ...read, settings: { ...read.settings, launch } as Record<string, unknown> };
    const spec = engineSpec("verl");
    ok(spec.smoke.plansOnly === true);
    const smoke = checkSweepConfig(smokeConfig(asked, spec), "verl-smoke.json (--smoke)");
    assertEquals(smoke.settings.launch, "none");
    const { launch: _l, rl: _r, ...kept } = smoke.settings;
    const { launch: _a, rl: _b, ...settings } = asked.settings;
    assertEquals(kept, settings);
  });
}
