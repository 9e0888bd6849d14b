// Choosing and starting a tfjs backend: wasm (SIMD, the CPU default), cpu, webgpu, or tfjs-node if installed.
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
// tfjs-core alone registers no gradients; the umbrella package registers them all (into the shared registry).
import "@tensorflow/tfjs";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { loadKernels } from "./ops/attention.ts";
import { loadAdamKernel } from "./model/adam.ts";
import { loadLayerNormKernels } from "./model/ops.ts";
import { blasActive, blasInfo, registerBlasKernels, useBlas } from "./ops/blas.ts";
import { shareIdentityData } from "./ops/wasm.ts";
import { loadNative, useNative } from "./ops/native.ts";

/** Backend names accepted by `initBackend` and by `--backend`. */
export const BACKENDS = ["auto", "blas", "wasm", "cpu", "webgpu", "tensorflow"] as const;
/** One of `BACKENDS`. */
export type BackendName = typeof BACKENDS[number];

let wasmPathsSet = false;

async function startWasm(): Promise<void> {
  if (!wasmPathsSet) {
    // The wasm binaries inside node_modules (deno.json sets nodeModulesDir "auto"), relative to this file so it
    // works from any working directory inside the repo.
    const dir = fileURLToPath(
      new URL("../../../node_modules/@tensorflow/tfjs-backend-wasm/dist/", import.meta.url),
    );
    if (!existsSync(dir + "tfjs-backend-wasm-simd.wasm")) {
      throw new Error(`wasm backend: ${dir}tfjs-backend-wasm-simd.wasm not found; run 'deno install' first`);
    }
    // Full file paths (not a prefix) so emscripten reads them with fs under Deno's Node compat layer.
    setWasmPaths({
      "tfjs-backend-wasm.wasm": dir + "tfjs-backend-wasm.wasm",
      "tfjs-backend-wasm-simd.wasm": dir + "tfjs-backend-wasm-simd.wasm",
      "tfjs-backend-wasm-threaded-simd.wasm": dir + "tfjs-backend-wasm-threaded-simd.wasm",
    });
    wasmPathsSet = true;
  }
  if (!(await tf.setBackend("wasm"))) throw new Error("wasm backend failed to initialise");
  await loadKernels();
  await loadAdamKernel();
  await loadLayerNormKernels();
  shareIdentityData();
  registerBlasKernels();
  useBlas(false);
}

/**
 * tfjs-wasm with its dense products on the system BLAS (ops/blas.ts) and, where a C compiler builds them, the
 * native kernels (ops/native.ts; else one line says so and tfjs-wasm's run); throws a one-line reason if the
 * BLAS is unavailable. The wasm backend never uses native code, so its numbers do not depend on the machine's tools.
 */
async function startBlas(): Promise<void> {
  await startWasm();
  useBlas(true);
  await loadNative(blasInfo()!.library);
  useNative(true);
}

/** The backend in use, in `BACKENDS` terms: "blas" when tfjs-wasm runs its products on the BLAS, else tfjs's name. */
export function backendInUse(): string {
  return blasActive() ? "blas" : tf.getBackend();
}

/** Whether a WebGPU adapter (a GPU, or Mesa's lavapipe) is available; false unprobed if ACEBENCH_WEBGPU_ADAPTER=0. */
export async function hasWebgpuAdapter(): Promise<boolean> {
  if (Deno.env.get("ACEBENCH_WEBGPU_ADAPTER") === "0") return false;
  const gpu = (globalThis.navigator as { gpu?: { requestAdapter(): Promise<unknown> } } | undefined)?.gpu;
  try {
    if (gpu) ensureRuntimeDir();
    return gpu ? (await gpu.requestAdapter()) !== null : false;
  } catch {
    return false;
  }
}

// Mesa's Vulkan loader prints "error: XDG_RUNTIME_DIR is invalid or not set" on every adapter request when the
// variable is missing (containers, CI, cron), though nothing is wrong; a private 0700 folder silences it.
function ensureRuntimeDir(): void {
  if (Deno.env.get("XDG_RUNTIME_DIR")) return;
  try {
    const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/acebench-runtime-${Deno.uid() ?? "user"}`;
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    Deno.env.set("XDG_RUNTIME_DIR", dir);
  } catch {
    // Without write or env permission the probe still works; it is only noisier.
  }
}

async function startWebgpu(): Promise<void> {
  if (!(await hasWebgpuAdapter())) {
    throw new Error(
      "webgpu backend: no WebGPU adapter (on a CPU machine: apt-get install -y mesa-vulkan-drivers; on NVIDIA: the Vulkan driver)",
    );
  }
  await import("@tensorflow/tfjs-backend-webgpu");
  if (!(await tf.setBackend("webgpu"))) throw new Error("webgpu backend failed to initialise");
}

async function startTensorflow(): Promise<void> {
  try {
    // Node-style resolution from node_modules: finds tfjs-node only if installed, and never installs it
    // (a dynamic `npm:` import would fetch it, and its install step needs Google's servers).
    createRequire(import.meta.url)("@tensorflow/tfjs-node");
  } catch {
    throw new Error(
      "tensorflow backend: @tensorflow/tfjs-node is not installed; install it on a machine with internet (its install step downloads libtensorflow)",
    );
  }
  if (!(await tf.setBackend("tensorflow"))) throw new Error("tensorflow backend failed to initialise");
}

/** Whether the active backend can read a tensor synchronously (`dataSync`): all but webgpu, whose reads are async. */
export function readsSync(): boolean {
  return tf.getBackend() !== "webgpu";
}

/**
 * Whether a row's results never depend on the other rows of its batch, which pooled sampling's bit-identity
 * needs (parallel.ts): true on wasm and cpu; not on blas, where a row can be summed differently with the
 * row count (measured), nor on GPU backends.
 */
export function rowInvariant(): boolean {
  return ["wasm", "cpu"].includes(backendInUse());
}

/** Whether the active backend is a CPU one, where training may be data-parallel over Deno Workers (parallel.ts). */
export function trainsDataParallel(): boolean {
  return ["wasm", "cpu"].includes(tf.getBackend());
}

/** How each backend starts. */
const STARTERS: Record<BackendName, () => Promise<unknown>> = {
  auto: async () => {
    try {
      await (blasInfo() ? startBlas() : startWasm());
    } catch (e) {
      console.error(`backend auto: wasm unavailable (${(e as Error).message}); using the slow cpu backend`);
      await tf.setBackend("cpu");
    }
  },
  blas: startBlas,
  wasm: startWasm,
  cpu: () => tf.setBackend("cpu"),
  webgpu: startWebgpu,
  tensorflow: startTensorflow,
};

/**
 * Start the named backend and return the one in use; "auto" here picks blas, else wasm, else cpu (the engine's
 * "auto" also calibrates against webgpu where there is a GPU: auto.ts).
 */
export async function initBackend(name: BackendName | string): Promise<string> {
  if (backendInUse() === name) return name;
  if (!(BACKENDS as readonly string[]).includes(name)) {
    throw new Error(`unknown backend '${name}' (expected one of ${BACKENDS.join(", ")})`);
  }
  useNative(false); // only the blas starter turns them on: no other backend's tensors live in tfjs-wasm's heap
  await STARTERS[name as BackendName]();
  await tf.ready();
  return backendInUse();
}
