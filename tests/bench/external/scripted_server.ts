// The fault server as a standalone process on 127.0.0.1, for demos and the measurements in
// docs/external-eval.md: answers synthetic problems right on every third sample, stops by itself.
// usage: deno run -A tests/bench/external/scripted_server.ts [--latency-ms 50] [--seconds 240] [--faults 429,500,drop]
import { parseArgs } from "node:util";
import { loadDataset } from "../../../datasets/mod.ts";
import { type Fault, startFaultServer } from "./fault_server.ts";

const { values } = parseArgs({
  options: {
    "latency-ms": { type: "string", default: "50" },
    seconds: { type: "string", default: "240" },
    faults: { type: "string", default: "" },
  },
});
const gold = new Map((await loadDataset("synthetic")).map((r) => [r.problem, r.answer]));
const srv = startFaultServer({
  latencyMs: Number(values["latency-ms"]),
  script: values.faults!.split(",").filter(Boolean) as Fault[],
  retryAfter: "1",
  // With the raw template the prompt is the problem text itself.
  answer: (prompt, _seed, i) => (i % 3 === 0 ? `\\boxed{${gold.get(prompt)}}` : "\\boxed{-1}"),
});
console.log(srv.url);
await new Promise((r) => setTimeout(r, Number(values.seconds) * 1000));
await srv.close();
