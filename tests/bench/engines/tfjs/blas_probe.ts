// Started by blas.test.ts in a fresh process (the BLAS loads once per process): prints the backend that
// initBackend(Deno.args[0]) starts, or its error message.
import { initBackend } from "../../../../bench/engines/tfjs/backend.ts";

try {
  console.log(`backend ${await initBackend(Deno.args[0])}`);
} catch (e) {
  console.log(`error ${(e as Error).message}`);
}
