// Subprocess for webgpu_quiet.test.ts: probes the WebGPU adapter once and prints the answer.
import { hasWebgpuAdapter } from "../../../../bench/engines/tfjs/backend.ts";
console.log(`adapter ${await hasWebgpuAdapter()}`);
