// Time per op class of a tfjs computation, from tfjs's kernel profiler: the table of `bench model --profile`.
import * as tf from "@tensorflow/tfjs-core";

/** A profile: wall time of one call and ms per op class (what is not in a kernel is "tensor bookkeeping"). */
export interface OpClassTable {
  title: string;
  wallMs: number;
  classes: Record<string, number>;
}

/** Op class of a tfjs kernel name (the classes PyTorch's profile is sorted into too, torch_reference.py). */
const CLASS_OF: [string, string[]][] = [
  ["matmul", ["BatchMatMul", "_FusedMatMul"]],
  ["attention", [
    "AceBmm",
    "AceBmmNT",
    "AceSplitHeads",
    "AceMergeHeads",
    "AceDecodeAttention",
    "AceCausalSoftmax",
    "AceCausalSoftmaxGrad",
    "Softmax",
  ]],
  ["layer norm", ["AceLayerNorm", "AceLayerNormGrad"]],
  // A whole decode step in one native call (ops/kernels.c): its products, attention and element-wise work
  // cannot be told apart there.
  ["decode step (native: embedding, layers, head)", ["AceDecodeStep"]],
  // A whole sampling run in one native call: prefill, decode steps and draws.
  ["sampling run (native: prefill, decode steps, draws)", ["AceGenerate"]],
  ["softmax/cross-entropy", [
    "AceTokenScores",
    "AceTokenScoresGrad",
    "LogSoftmax",
    "Max",
    "Exp",
    "Log",
    "Sub",
  ]],
  ["Adam", ["AceAdam", "Square", "Sqrt"]],
  ["gather/one-hot", ["OneHot", "Cast", "GatherV2"]],
  ["data movement", ["AceTranspose", "Transpose", "Slice", "Reshape", "Identity", "Concat", "Pad", "Tile"]],
];

/**
 * Run `f` under tf.profile and sum kernel time by op class. Entries that are not registered kernels of the
 * backend (customGrad and tidy scopes, which wrap the kernels they run and would count them twice) are
 * skipped; wall time minus kernel time is reported as "tensor bookkeeping (alloc/dispose, tape, JS)".
 */
export async function kernelClasses(f: () => Promise<unknown>): Promise<Omit<OpClassTable, "title">> {
  const backend = tf.getBackend();
  let wallMs = 0;
  const info = await tf.profile(async () => {
    const t0 = performance.now();
    await f();
    wallMs = performance.now() - t0;
    return [];
  });
  const classes: Record<string, number> = {};
  let inKernels = 0;
  for (const k of info.kernels) {
    if (!tf.getKernel(k.name, backend)) continue;
    const ms = typeof k.kernelTimeMs === "number" ? k.kernelTimeMs : 0;
    const cls = CLASS_OF.find(([, names]) => names.includes(k.name))?.[0] ?? "element-wise/other";
    classes[cls] = (classes[cls] ?? 0) + ms;
    inKernels += ms;
  }
  classes[BOOKKEEPING] = Math.max(0, wallMs - inKernels);
  return { wallMs, classes };
}

/** Label of the time no kernel accounts for, in `splitStep`'s table. */
export const OVERHEAD = "framework overhead (wall - kernel times)";
/** What `kernelClasses` calls the same remainder in its fine table (not a kernel class: `splitStep` skips it). */
const BOOKKEEPING = "tensor bookkeeping (alloc/dispose, tape, JS)";
/** The five parts of a training step `splitStep` reports, from the fine classes of either engine's table. */
const SPLIT_OF: Record<string, string> = { matmul: "matmul", attention: "attention", Adam: "optimizer" };

/**
 * A train-step table cut into matmul / attention / element-wise / optimizer / framework overhead, for tfjs and
 * PyTorch alike: every other kernel class (layer norm, softmax/cross-entropy, gather, data movement,
 * allocation ops, other element-wise) is element-wise, and framework overhead is the wall time minus the sum
 * of kernel times (tfjs: tape, tensor bookkeeping and JS between kernels; PyTorch: Python, autograd and dispatch
 * outside the aten ops' self time), so the five add up to the wall. Where the profiler's kernel times exceed
 * the wall (PyTorch counts ops on several threads), overhead is 0.
 */
export function splitStep(t: OpClassTable): OpClassTable {
  const classes: Record<string, number> = { matmul: 0, attention: 0, "element-wise": 0, optimizer: 0 };
  let inKernels = 0;
  for (const [cls, ms] of Object.entries(t.classes)) {
    if (cls === BOOKKEEPING || cls === OVERHEAD) continue;
    const part = SPLIT_OF[cls] ?? "element-wise";
    classes[part] += ms;
    inKernels += ms;
  }
  classes[OVERHEAD] = Math.max(0, t.wallMs - inKernels);
  return { title: `${t.title}, split`, wallMs: t.wallMs, classes };
}

/** Print a profile as a two-column table, largest class first, with shares of the wall time. */
export function printProfileTable(t: OpClassTable): void {
  console.log(`\n${t.title}: ${t.wallMs.toFixed(0)} ms`);
  for (const [cls, ms] of Object.entries(t.classes).sort((a, b) => b[1] - a[1])) {
    const share = t.wallMs > 0 ? ` ${(100 * ms / t.wallMs).toFixed(0).padStart(3)}%` : "";
    console.log(`  ${cls.padEnd(46)} ${ms.toFixed(1).padStart(8)} ms${share}`);
  }
}
