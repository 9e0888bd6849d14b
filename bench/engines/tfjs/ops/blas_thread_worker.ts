// A helper thread of ops/blas_threads.ts: loads the BLAS, then runs the calls it claims, generation after
// generation, until told to quit.
import { parentPort } from "node:worker_threads";
import { openBlas } from "./blas_ffi.ts";
import { DONE, FAILED, GEN, QUIT, waitChange, work } from "./blas_threads.ts";

parentPort!.once("message", (m: { library: string; ctrl: SharedArrayBuffer; table: SharedArrayBuffer }) => {
  let lib;
  try {
    lib = openBlas(m.library);
  } catch (err) {
    parentPort!.postMessage(`${m.library}: ${(err as Error).message.split("\n")[0]}`);
    return;
  }
  const ctrl = new Int32Array(m.ctrl), table = new Float64Array(m.table);
  parentPort!.postMessage("ready");
  try {
    for (let gen = Atomics.load(ctrl, GEN);;) {
      gen = waitChange(ctrl, GEN, gen);
      if (Atomics.load(ctrl, QUIT)) break;
      work(lib, ctrl, table, gen);
    }
  } catch (err) {
    Atomics.store(ctrl, FAILED, 1); // the caller waits on DONE: wake it to see the flag
    Atomics.notify(ctrl, DONE);
    throw err;
  }
});
