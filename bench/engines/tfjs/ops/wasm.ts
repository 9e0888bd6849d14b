// Plumbing for our own WebAssembly SIMD kernels inside tfjs-wasm: compile a .wat file against tfjs-wasm's
// memory, so kernels read and write tensors where tfjs keeps them (no copies), and register tfjs kernels.
import * as tf from "@tensorflow/tfjs-core";
import initWabt from "wabt";
import { readFileSync } from "node:fs";

/** The slice of tfjs-wasm's backend object the kernels need (it has no public type for these). */
export interface WasmBackend {
  wasm: { asm?: { memory?: WebAssembly.Memory }; wasmMemory?: WebAssembly.Memory; HEAPF32: Float32Array };
  dataIdMap: { get(id: unknown): { memoryOffset: number } };
  makeOutput(shape: number[], dtype: "float32" | "int32"): tf.TensorInfo;
}

/** What tfjs passes a kernel function. */
export type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: unknown; attrs?: tf.NamedAttrMap };

/** An exported kernel: byte addresses and sizes in, results written to memory. */
export type Fn = (...args: number[]) => void;

/** Byte address of a tensor's data in the tfjs-wasm heap. */
export function addr(be: WasmBackend, t: tf.TensorInfo): number {
  return be.dataIdMap.get(t.dataId).memoryOffset;
}

let heapBuffer: ArrayBufferLike | null = null;
let heapBase = 0;

/**
 * Native address of the wasm heap's first byte, for native code called through FFI (the BLAS, ops/native.ts);
 * re-read when the heap grows and its buffer is replaced. Addresses stay below 2^53, so a number holds them.
 */
export function heapAddress(be: WasmBackend): number {
  const heap = be.wasm.HEAPF32;
  if (heap.buffer !== heapBuffer) {
    heapBuffer = heap.buffer;
    heapBase = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(heap)));
  }
  return heapBase;
}

/** Native address of a tensor's data, as Deno's FFI takes a `usize` (a plain number, although its types say bigint). */
export function nativeAddr(be: WasmBackend, t: tf.TensorInfo): bigint {
  return (heapAddress(be) + addr(be, t)) as unknown as bigint;
}

/** A numeric kernel attribute. */
export function attr(a: tf.NamedAttrMap | undefined, k: string): number {
  return (a as Record<string, number>)[k];
}

/**
 * Compile the .wat file at `url` against the running tfjs-wasm memory and register `kernels` (tfjs-wasm kernels
 * by name); the module's exports, or null (nothing registered) on other backends.
 */
export async function compileWat(
  url: URL,
  kernels: Record<string, (a: KernelArgs) => tf.TensorInfo | tf.TensorInfo[]>,
): Promise<Record<string, Fn> | null> {
  if (tf.getBackend() !== "wasm") return null;
  const be = tf.backend() as unknown as WasmBackend;
  const memory = be.wasm.asm?.memory ?? be.wasm.wasmMemory;
  if (!(memory instanceof WebAssembly.Memory)) {
    throw new Error(`${url.pathname}: cannot reach the tfjs-wasm memory`);
  }
  const wabt = await initWabt();
  const mod = wabt.parseWat(url.pathname, readFileSync(url, "utf8"), { simd: true });
  const { buffer } = mod.toBinary({});
  mod.destroy();
  const binary = new WebAssembly.Module(buffer as Uint8Array<ArrayBuffer>);
  for (const [kernelName, f] of Object.entries(kernels)) {
    tf.registerKernel({ kernelName, backendName: "wasm", kernelFunc: f as tf.KernelFunc });
  }
  return new WebAssembly.Instance(binary, { env: { memory } }).exports as unknown as Record<string, Fn>;
}

/**
 * Make tfjs-wasm's Identity share the input's data (a reference count) instead of copying it, as tfjs-cpu does.
 * tfjs clones every tensor a gradient saves; on wasm that was a copy each (136 per training step of the
 * reference model, ~10% of the step). Safe because no kernel here writes into an input: the only in-place
 * writes go to the key/value cache buffers, which are never saved or cloned.
 */
export function shareIdentityData(): void {
  const own = tf.getKernel("Identity", "wasm");
  if (!own || (own as { shared?: boolean }).shared) return;
  const kernelFunc = ({ inputs: { x }, backend }: KernelArgs) => {
    if (x.dtype === "string") {
      return (own.kernelFunc as (a: KernelArgs) => tf.TensorInfo)({ inputs: { x }, backend });
    }
    (backend as { incRef(id: unknown): void }).incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  };
  tf.unregisterKernel("Identity", "wasm");
  tf.registerKernel({ ...own, kernelFunc: kernelFunc as tf.KernelFunc, shared: true } as tf.KernelConfig);
}
