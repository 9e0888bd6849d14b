// A sweep folder's sweep.json holding only a record with the given protocol: what the engines' grading reads.
import type { EvalProtocol } from "../common/protocol.ts";
import { writeFolderFile } from "../common/run_folder.ts";

/** Write `dir`/sweep.json (record v2, one seed, no methods) whose protocol is `protocol`. */
export function writeProtocolSweep(dir: string, protocol: EvalProtocol, config: unknown = {}): void {
  writeFolderFile(dir, {
    kind: "sweep",
    config,
    record: { version: 2, design: { kind: "seeds", seeds: [0] }, methods: [], protocol },
    configHash: "h",
    runIds: [],
    versions: {},
    machine: {},
    writtenAt: "2026-12-04T00:00:00Z",
  });
}
