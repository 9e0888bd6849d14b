// A sweep's `record` (common/protocol.ts): its design, each method's family and baseline from the resolved
// algorithm (never from a preset's or method's name), and the evaluation protocol its engine applies.
import { canonicalJson } from "../../common/hash.ts";
import type { Design, EvalProtocol, MethodRecord, SweepRecord } from "../../common/protocol.ts";
import { GRADE_TIMEOUT_MS, graderVersion } from "../../evaluators/mod.ts";
import type { AlgoConfig } from "../core/mod.ts";
import type { RunConfig } from "../engines/engine.ts";
import type { SweepConfig } from "./config.ts";

/** The design of a sweep config as the record's discriminated union. */
function designOf(sweep: SweepConfig): Design {
  return sweep.bases === undefined
    ? { kind: "seeds", seeds: [...(sweep.seeds ?? [])] }
    : { kind: "bases", bases: sweep.bases, seedsPerBase: sweep.seedsPerBase ?? 1 };
}

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
  const first = new Map<string, RunConfig>();
  for (const r of runs) if (!first.has(r.method)) first.set(r.method, r);
  const all = [...first.values()];
  return all.map((r) => {
    const ace = r.algo.ace.enabled;
    const base = ace
      ? all.find((o) => !o.algo.ace.enabled && withoutAce(o.algo) === withoutAce(r.algo))
      : undefined;
    return {
      name: r.method,
      preset: r.preset,
      family: ace ? "ace" : "standard",
      baseline: base?.method ?? null,
    };
  });
}

/** Split sampling settings into those sent (non-null) and those left to the sampler's defaults (null). */
function sampling(values: Record<string, unknown>): EvalProtocol["sampling"] {
  const entries = Object.entries(values);
  return {
    sent: Object.fromEntries(entries.filter(([, v]) => v !== null && v !== undefined)),
    serverDefaults: entries.filter(([, v]) => v === null || v === undefined).map(([k]) => k),
  };
}

/**
 * The evaluation protocol each engine applies: tfjs grades its synthetic test tasks strictly in-process (no
 * timeout) with its own compact prompts; VERL's dumps are graded strictly by the worker pool; the tabular world
 * grades no text.
 */
function engineProtocol(sweep: SweepConfig): EvalProtocol {
  const s = sweep.settings as Record<string, unknown>;
  const common = { split: "test", n: sweep.eval.n, ks: [...sweep.eval.ks] };
  const strict = (timeoutMs: number | null) => ({
    mode: "strict" as const,
    version: graderVersion(),
    timeoutMs,
  });
  if (sweep.engine === "tfjs") {
    const e = (s.eval ?? {}) as { temperature?: number; topP?: number };
    const t = (s.tasks ?? {}) as { families?: string[]; testSize?: number; seed?: number };
    return {
      ...common,
      datasets: ["synthetic"],
      // The engine generates its own test tasks: which ones is part of the protocol.
      split: `test: ${t.testSize} generated (families ${(t.families ?? []).join(", ")}; seed ${t.seed})`,
      template: "compact",
      sampling: sampling({
        temperature: e.temperature ?? 1,
        top_p: e.topP ?? 1,
        max_tokens: (s.rl as { maxNewTokens?: number } | undefined)?.maxNewTokens ?? null,
      }),
      grader: strict(null),
    };
  }
  if (sweep.engine === "verl") {
    return {
      ...common,
      datasets: [...((s.valDatasets as string[] | undefined) ?? [])].sort(),
      template: String(s.template ?? "boxed"),
      sampling: sampling({ temperature: s.valTemperature ?? null, top_p: s.valTopP ?? null }),
      grader: strict(GRADE_TIMEOUT_MS),
    };
  }
  return {
    ...common,
    datasets: ["tabular"],
    template: "none",
    sampling: { sent: {}, serverDefaults: [] },
    grader: { mode: "none", version: null, timeoutMs: null },
  };
}

/** sweep.json's `record` for a sweep and all its expanded runs. */
export function sweepRecord(sweep: SweepConfig, runs: readonly RunConfig[]): SweepRecord {
  return {
    version: 1,
    design: designOf(sweep),
    methods: methodRecords(runs),
    protocol: engineProtocol(sweep),
  };
}
