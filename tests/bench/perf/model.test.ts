// `bench model`: which Pythons its PyTorch reference runs under.
import { join } from "node:path";
import { assertEquals, throws } from "../../assert.ts";
import { torchPythons } from "../../../bench/perf/model.ts";

Deno.test("bench model: --python lists interpreters (~ expanded); by default Debian's, plus the torch venv where present", () => {
  const home = Deno.makeTempDirSync({ prefix: "bench-model-home-" });
  try {
    assertEquals(torchPythons(undefined, home), ["/usr/bin/python3"]);
    const venv = join(home, ".cache", "acebench", "torch-venv", "bin");
    Deno.mkdirSync(venv, { recursive: true });
    Deno.writeTextFileSync(join(venv, "python"), "");
    assertEquals(torchPythons(undefined, home), ["/usr/bin/python3", join(venv, "python")]);
    assertEquals(torchPythons("~/py/bin/python, /opt/python3", home), [
      join(home, "py/bin/python"),
      "/opt/python3",
    ]);
    throws(() => torchPythons(" , ", home), /--python: expected interpreter paths/);
  } finally {
    Deno.removeSync(home, { recursive: true });
  }
});
