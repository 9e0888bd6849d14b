// Started by blas.test.ts in a fresh process (the BLAS loads once per process): prints the backend that
// initBackend(Deno.args[0]) starts (on blas with the OpenBLAS kernels it runs), or its error message.
import { initBackend } from "../../../../bench/engines/tfjs/backend.ts";
import { blasInfo } from "../../../../bench/engines/tfjs/ops/blas.ts";

try {
  const backend = await initBackend(Deno.args[0]);
  const core = backend === "blas" ? ` core ${blasInfo()!.core}` : "";
  console.log(`backend ${backend}${core}`);
} catch (e) {
  console.log(`error ${(e as Error).message}`);
}
