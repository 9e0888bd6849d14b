// A sweep's `record` (common/protocol.ts): its design, each method's family and baseline from the resolved
// algorithm (never from a preset's or method's name), and the evaluation protocol its engine applies (the
// engine's registry entry says which).
import { canonicalJson } from "../../common/hash.ts";
import { designOf, type MethodRecord, RECORD_VERSION, type SweepRecord } from "../../common/protocol.ts";
import type { AlgoConfig } from "../core/mod.ts";
import type { RunConfig } from "../engines/engine.ts";
import { engineSpec } from "../engines/registry.ts";
import type { SweepConfig } from "./config.ts";

/** The algorithm minus its ACE options, as canonical JSON: equal for an ACE method and its baseline. */
function withoutAce(algo: AlgoConfig): string {
  const { ace: _ace, ...rest } = algo;
  return canonicalJson(rest);
}

/**
 * One record per method label (grid points included), in run order: family "ace" when the resolved algorithm
 * has ACE on; an ACE method's baseline is the first standard method whose resolved algorithm is the same apart
 * from ACE (null when the sweep has none).
 */
function methodRecords(runs: readonly RunConfig[]): MethodRecord[] {
  const all = runs.filter((r, i) => runs.findIndex((o) => o.method === r.method) === i);
  return all.map((r) => {
    const ace = r.algo.ace.enabled;
    const base = all.find((o) => ace && !o.algo.ace.enabled && withoutAce(o.algo) === withoutAce(r.algo));
    return {
      name: r.method,
      preset: r.preset,
      family: ace ? "ace" : "standard",
      baseline: base?.method ?? null,
    };
  });
}

/** sweep.json's `record` for a sweep and all its expanded runs. */
export function sweepRecord(sweep: SweepConfig, runs: readonly RunConfig[]): SweepRecord {
  return {
    version: RECORD_VERSION,
    design: designOf(sweep),
    methods: methodRecords(runs),
    protocol: engineSpec(sweep.engine).protocol(sweep.settings, sweep.eval),
  };
}
