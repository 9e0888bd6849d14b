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
  ["attention", ["AceBmm", "AceBmmNT", "AceSplitHeads", "AceMergeHeads", "Softmax"]],
  ["layer norm", ["AceLayerNorm", "AceLayerNormGrad"]],
  ["softmax/cross-entropy", ["LogSoftmax", "Max", "Exp", "Log", "Sub"]],
  ["Adam", ["AceAdam", "Square", "Sqrt"]],
  ["gather/one-hot", ["OneHot", "Cast", "GatherV2"]],
  ["data movement", ["AceTranspose", "Transpose", "Slice", "Reshape", "Identity", "Concat", "Pad", "Tile"]],
];

function opClass(kernel: string): string {
  for (const [cls, names] of CLASS_OF) if (names.includes(kernel)) return cls;
  return "element-wise/other";
}

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
    const cls = opClass(k.name);
    classes[cls] = (classes[cls] ?? 0) + ms;
    inKernels += ms;
  }
  classes["tensor bookkeeping (alloc/dispose, tape, JS)"] = Math.max(0, wallMs - inKernels);
  return { wallMs, classes };
}

/** Print a profile as a two-column table, largest class first, with shares of the wall time. */
export function printProfileTable(t: OpClassTable): void {
  console.log(`\n${t.title}: ${t.wallMs.toFixed(0)} ms`);
  for (const [cls, ms] of Object.entries(t.classes).sort((a, b) => b[1] - a[1])) {
    const share = t.wallMs > 0 ? ` ${(100 * ms / t.wallMs).toFixed(0).padStart(3)}%` : "";
    console.log(`  ${cls.padEnd(46)} ${ms.toFixed(1).padStart(8)} ms${share}`);
  }
}
