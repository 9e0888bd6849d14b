// `bench model`: which Pythons its PyTorch reference runs under.
import { join } from "node:path";
import { assert, assertEquals, throws } from "../../assert.ts";
import { runCli } from "../../run_cli.ts";
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

Deno.test("bench model: prints achieved GFLOP/s and % of measured peak for tfjs and each torch (tiny config)", async () => {
  // PyTorch is optional: the tfjs columns are checked without it, the torch ones where Debian's torch imports.
  const probe = await new Deno.Command("/usr/bin/python3", { args: ["-c", "import torch"], stderr: "null" })
    .output().catch(() => null);
  const torch = probe?.success === true;
  if (!torch) {
    console.log("torch columns not checked: /usr/bin/python3 has no torch (apt-get install python3-torch)");
  }
  const args = ["bench", "model", "--config", "tiny", "--runs", "1", "--steps", "1", "--reps", "1"];
  const { code, stdout, stderr } = await runCli([
    ...args,
    "--peak-n",
    "128",
    "--train-workers",
    "1",
    ...(torch ? ["--python", "/usr/bin/python3"] : ["--no-torch"]),
  ]);
  assertEquals(code, 0, stderr);
  const lines = stdout.trim().split("\n");
  // The existing figures stay: the per-run line with the load average, and the medians.
  assert(
    /^run 1: load .* tfjs train \d+ \([\d.]+ GFLOP\/s, \d+% of peak\), sample \d+ /m.test(stdout),
    stdout,
  );
  assert(
    // One train worker: training and sampling run on the process's BLAS threads (default one per core on blas).
    /peak [\d.]+ GFLOP\/s per thread \(128² tf\.matMul\) × (\d+) train, \1 sample thread/.test(stdout),
    stdout,
  );
  assert(/^median \(range\) over 1 run\(s\); 1-min load/m.test(stdout), stdout);
  const header = lines.findIndex((l) =>
    /^\s+engine\s+train tok\/s\s+GFLOP\/s\s+% peak\s+sample tok\/s/.test(l)
  );
  assert(header > 0, stdout);
  assert(
    /^\s+tfjs \w+\s+\d+\s+[\d.]+\s+[\d.]+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+, [\d.]+$/.test(lines[header + 1]),
  );
  const json = lines.at(-1)!, result = JSON.parse(json);
  assertEquals(result.config, "tiny");
  assertEquals(result.peak_n, 128);
  assert(result.median_tfjs_train_gflops > 0 && result.median_tfjs_sample_gflops > 0, json);
  assert(result.runs[0].tfjs_peak_gflops_per_thread > 0, json);
  if (torch) {
    assert(/^\s+torch [\d.a-z+]+ cpu\s+\d+\s+[\d.]+\s+[\d.]+\s+\d+/.test(lines[header + 2]), stdout);
    assert(/ratio tfjs\/torch \(per run\)/.test(stdout), stdout);
    const t = result.torch[0];
    assert(
      t.median_train_gflops > 0 && t.median_sample_pct_peak > 0 && t.median_ratio_train > 0,
      json,
    );
    assert(Object.keys(result.runs[0].torch[0].peak_gflops).length > 0, json);
  }
});
