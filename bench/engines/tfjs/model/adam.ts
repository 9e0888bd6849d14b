// Adam with global-norm gradient clipping over a model's named variables; its state serialises bit-exactly.
import * as tf from "@tensorflow/tfjs-core";
import {
  addr,
  attr,
  compileWat,
  type Fn,
  type KernelArgs,
  nativeAddr,
  type WasmBackend,
} from "../ops/wasm.ts";
import { nativeKernels, nativeThreads } from "../ops/native.ts";

/** A named tensor as plain data (what checkpoints store). */
export interface TensorData {
  shape: number[];
  data: Float32Array;
}

/** Adam hyper-parameters: lr > 0, clipNorm >= 0 (0 = no clipping); the settings schema checks both. */
export interface AdamOptions {
  lr: number;
  clipNorm: number;
}

/** Adam state: `lr` (may be changed between steps: schedules), moments per parameter name, step count. */
export interface Optimizer extends AdamOptions {
  step: number;
  m: Map<string, tf.Variable>;
  v: Map<string, tf.Variable>;
}

/** Adam's betas and epsilon (torch's defaults). */
const BETA1 = 0.9, BETA2 = 0.999, EPS = 1e-8;

/** Free an optimizer's moment tensors. */
export function disposeOptimizer(opt: Optimizer): void {
  for (const map of [opt.m, opt.v]) map.forEach((t) => t.dispose());
}

/** What a training step returns: the loss and the pre-clipping gradient norm. */
export type StepResult = { loss: number; gradNorm: number };

/** Serialisable optimizer state for bit-for-bit resume. */
export interface OptimizerState {
  step: number;
  m: Record<string, TensorData>;
  v: Record<string, TensorData>;
}

/** Adam over `params` (moments start at zero); clipNorm 0 disables clipping. */
export function adam(params: Map<string, tf.Variable>, opts: AdamOptions): Optimizer {
  const zeros = () => new Map([...params].map(([n, p]) => [n, tf.variable(tf.zerosLike(p), false)]));
  return { lr: opts.lr, clipNorm: opts.clipNorm, step: 0, m: zeros(), v: zeros() };
}

/**
 * One optimisation step on `loss` as a generator that yields the tensors it must read (loss, squared gradient
 * norm), so one body serves the sync and async drivers. Returns the loss and the pre-clipping gradient norm.
 * A non-finite loss or norm skips the update (and is returned as is).
 */
export function* adamSteps(
  params: Map<string, tf.Variable>,
  opt: Optimizer,
  loss: () => tf.Scalar,
): Generator<tf.Tensor, StepResult, Float32Array> {
  const names = [...params.keys()];
  const { value, grads } = tf.variableGrads(loss, names.map((n) => params.get(n)!));
  try {
    const lossValue = (yield value)[0];
    return yield* adamApply(params, opt, names.map((n) => grads[params.get(n)!.name]), lossValue);
  } finally {
    tf.dispose([value, ...Object.values(grads)]);
  }
}

/**
 * The update half of `adamSteps`: clip the given gradients (one per parameter in `params` order, undefined =
 * untouched) by global norm and apply Adam; yields the squared norm to read. Returns `loss` and the norm.
 */
export function* adamApply(
  params: Map<string, tf.Variable>,
  opt: Optimizer,
  byName: (tf.Tensor | undefined)[],
  lossValue: number,
): Generator<tf.Tensor, StepResult, Float32Array> {
  const names = [...params.keys()];
  // Pairwise adds, not tf.addN: tfjs-webgpu's addN binds every input at once, and past the device's storage-buffer
  // limit (8 by default) its shader fails validation and the result is a stale buffer (measured: it read back
  // the loss), so clipping silently used a wrong norm.
  const sq = tf.tidy(() =>
    byName.filter((g) => g).map((g) => tf.sum(tf.square(g!))).reduce((a, b) => tf.add(a, b)) as tf.Scalar
  );
  try {
    const gradNorm = Math.sqrt((yield sq)[0]);
    if (!Number.isFinite(lossValue) || !Number.isFinite(gradNorm)) return { loss: lossValue, gradNorm };
    const scale = opt.clipNorm > 0 && gradNorm > opt.clipNorm ? opt.clipNorm / gradNorm : 1;
    opt.step++;
    const bc1 = 1 - BETA1 ** opt.step, bc2 = 1 - BETA2 ** opt.step;
    const h = { scale, b1: BETA1, c1: 1 - BETA1, b2: BETA2, c2: 1 - BETA2, lrc: opt.lr / bc1, bc2, eps: EPS };
    tf.tidy(() => {
      names.forEach((n, i) => {
        if (!byName[i]) return; // a parameter the loss does not touch gets no update (as in torch)
        const p = params.get(n)!, m = opt.m.get(n)!, v = opt.v.get(n)!;
        const [pn, mn, vn] = adamUpdate(p, m, v, byName[i]!, h);
        m.assign(mn);
        v.assign(vn);
        p.assign(pn);
      });
    });
    return { loss: lossValue, gradNorm };
  } finally {
    sq.dispose();
  }
}

/** Adam's step constants, kernel order: gradient scale (clipping), betas, 1 - betas, lr / bc1, bc2, eps. */
const CONSTANTS = ["scale", "b1", "c1", "b2", "c2", "lrc", "bc2", "eps"] as const;
type AdamConstants = Record<typeof CONSTANTS[number], number>;
type Consts = [number, number, number, number, number, number, number, number];

let adamKernel: Fn | null = null;
let fused = true;

/** Switch the fused wasm Adam kernel off (plain tf ops) or back on: for side-by-side tests. */
export function useFusedAdam(on: boolean): void {
  fused = on;
}

/** New p, m, v after one Adam update (fused wasm kernel when available, else the same arithmetic in tf ops). */
function adamUpdate(p: tf.Tensor, m: tf.Tensor, v: tf.Tensor, g: tf.Tensor, h: AdamConstants): tf.Tensor[] {
  if (fused && adamKernel && tf.getBackend() === "wasm") {
    return tf.engine().runKernel("AceAdam", { p, m, v, g }, h) as tf.Tensor[];
  }
  const gs = tf.mul(g, h.scale);
  const mn = tf.add(tf.mul(m, h.b1), tf.mul(gs, h.c1));
  const vn = tf.add(tf.mul(v, h.b2), tf.mul(tf.mul(gs, gs), h.c2));
  return [tf.sub(p, tf.div(tf.mul(mn, h.lrc), tf.add(tf.sqrt(tf.div(vn, h.bc2)), h.eps))), mn, vn];
}

/** The fused update as a tfjs-wasm kernel: inputs p, m, v, g; outputs new p, m, v. */
function adamKernelFunc({ inputs: { p, m, v, g }, backend, attrs }: KernelArgs): tf.TensorInfo[] {
  const be = backend as WasmBackend, outs = [p, m, v].map((t) => be.makeOutput([...t.shape], "float32"));
  const consts = CONSTANTS.map((k) => attr(attrs, k));
  const size = p.shape.reduce((a, b) => a * b, 1), native = nativeKernels();
  if (native) {
    // The same operations in the same order (ops/kernels.c), on the native threads: the same bits.
    const at = (t: tf.TensorInfo) => nativeAddr(be, t), [po, mo, vo] = outs.map(at);
    native.ace_adam(at(p), at(m), at(v), at(g), po, mo, vo, size, ...consts as Consts, nativeThreads());
    return outs;
  }
  adamKernel!(...[p, m, v, g, ...outs].map((t) => addr(be, t)), size, ...consts);
  return outs;
}

/** Compile adam.wat and register the fused update on tfjs-wasm (idempotent; nothing on other backends). */
export async function loadAdamKernel(): Promise<void> {
  if (adamKernel) return;
  const exports = await compileWat(new URL("./adam.wat", import.meta.url), { AceAdam: adamKernelFunc });
  adamKernel = exports?.adam ?? null;
}

// Bodies that must read tensor data are generators yielding the tensor to read, so one body serves both a
// synchronous driver (wasm, cpu) and an asynchronous one (webgpu under Deno has no synchronous read).

/** Drive a generator that yields tensors to read, reading each synchronously. */
export function driveSync<R>(gen: Generator<tf.Tensor, R, Float32Array>): R {
  try {
    let step = gen.next(undefined as unknown as Float32Array);
    while (!step.done) step = gen.next(step.value.dataSync() as Float32Array);
    return step.value;
  } finally {
    gen.return(undefined as unknown as R); // runs the body's cleanup if a read threw
  }
}

/** Drive a generator that yields tensors to read, awaiting each read (works on every backend). */
export async function driveAsync<R>(gen: Generator<tf.Tensor, R, Float32Array>): Promise<R> {
  try {
    let step = gen.next(undefined as unknown as Float32Array);
    while (!step.done) step = gen.next(await step.value.data() as Float32Array);
    return step.value;
  } finally {
    gen.return(undefined as unknown as R);
  }
}

/** Copy a variable map out as plain data (an awaited read, so it works on every backend, webgpu included). */
export async function toDataAsync(vars: Map<string, tf.Variable>): Promise<Record<string, TensorData>> {
  const out: Record<string, TensorData> = {};
  for (const [n, v] of vars) {
    out[n] = { shape: [...v.shape], data: new Float32Array(await v.data() as Float32Array) };
  }
  return out;
}

/** Assign plain data to a variable map; the error names the missing or mis-shaped entry. */
export function fromData(vars: Map<string, tf.Variable>, data: Record<string, TensorData>, what: string) {
  for (const [n, v] of vars) {
    const d = data[n];
    if (!d) throw new Error(`${what}: missing '${n}'`);
    const size = v.shape.reduce((a, b) => a * b, 1);
    if (d.shape.join(",") !== v.shape.join(",") || d.data.length !== size) {
      throw new Error(
        `${what}: '${n}' has shape [${d.shape}] (${d.data.length} values), expected [${v.shape}]`,
      );
    }
  }
  tf.tidy(() => {
    for (const [n, v] of vars) v.assign(tf.tensor(data[n].data, v.shape, "float32"));
  });
}

/** Optimizer state as plain data (moments and step count), read asynchronously (works on webgpu too). */
export async function getOptimizerStateAsync(opt: Optimizer): Promise<OptimizerState> {
  return { step: opt.step, m: await toDataAsync(opt.m), v: await toDataAsync(opt.v) };
}

/** Restore `getOptimizerStateAsync` output; continuing then matches an uninterrupted run bit for bit. */
export function setOptimizerState(opt: Optimizer, s: OptimizerState): void {
  if (!Number.isInteger(s.step) || s.step < 0) {
    throw new Error(`optimizer state: step must be an integer >= 0, got ${s.step}`);
  }
  fromData(opt.m, s.m, "optimizer state m");
  fromData(opt.v, s.v, "optimizer state v");
  opt.step = s.step;
}
