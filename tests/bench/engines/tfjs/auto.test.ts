import { assert, assertEquals } from "../../../assert.ts";
import { initEngineBackend } from "../../../../bench/engines/tfjs/auto.ts";
import { hasWebgpuAdapter } from "../../../../bench/engines/tfjs/backend.ts";
import { blasError, blasInfo } from "../../../../bench/engines/tfjs/ops/blas.ts";
import { modelConfig, presetSettings, settingsTokenizer } from "../../../../bench/engines/tfjs/settings.ts";

Deno.test("auto backend: an explicit backend is taken as requested", async () => {
  const s = presetSettings("tiny");
  const d = await initEngineBackend("wasm", modelConfig(s, settingsTokenizer(s)));
  assertEquals(d, { requested: "wasm", backend: "wasm", reason: "requested" });
});

Deno.test("auto backend: blas (else wasm) without a WebGPU adapter; with one, the faster of the calibration", async () => {
  const s = presetSettings("tiny"), cfg = modelConfig(s, settingsTokenizer(s));
  const d = await initEngineBackend("auto", cfg), cpu = blasInfo() ? "blas" : "wasm";
  if (!(await hasWebgpuAdapter())) {
    const blas = cpu === "blas" ? { blas: blasInfo()! } : {};
    const reason = cpu === "blas" ? "no WebGPU adapter" : `no WebGPU adapter; not blas: ${blasError()}`;
    assertEquals(d, { requested: "auto", backend: cpu, reason, ...blas });
  } else {
    const m = d.measured!;
    assert(m[cpu] > 0, `${cpu} calibration ${m[cpu]}`);
    assertEquals(d.backend, m.webgpu !== undefined && m.webgpu < m[cpu] ? "webgpu" : cpu);
    if (d.backend === "blas") assertEquals(d.blas, blasInfo()!, "the decision names the BLAS it runs on");
  }
  assertEquals(await initEngineBackend("auto", cfg), d); // cached per model shape
  await initEngineBackend("wasm", cfg);
});

Deno.test("settings presets: gpu is width 512, 8 layers, context 256; a bad name is a one-line error", () => {
  const s = presetSettings("gpu"), cfg = modelConfig(s, settingsTokenizer(s));
  assertEquals([cfg.dModel, cfg.heads, cfg.layers, cfg.context], [512, 8, 8, 256]);
  let msg = "";
  try {
    presetSettings("huge");
  } catch (e) {
    msg = (e as Error).message;
  }
  assertEquals(msg, "settings preset 'huge': expected one of default, tiny, gpu");
});
