// Started by native.test.ts in a fresh process (the native library loads once per process): prints the backend
// initBackend("blas") starts and where its native kernels came from ("built by <cc>", "cached" or "off").
import { initBackend } from "../../../../bench/engines/tfjs/backend.ts";
import { nativeInfo } from "../../../../bench/engines/tfjs/ops/native.ts";

const backend = await initBackend("blas");
const info = nativeInfo();
console.log(
  `backend ${backend} native ${
    info ? (info.built === "cached" ? "cached" : `built by ${info.built}`) : "off"
  }`,
);
