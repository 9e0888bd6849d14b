// Named algorithm presets (GRPO, DAPO, ACE variants) and the merge of sweep overrides into them.
import type { AceConfig } from "./ace.ts";
import { KL_TYPES, type KlType } from "./kl.ts";
import { LOSS_AGG_MODES, type LossAggMode, type PolicyLossConfig } from "./policy_loss.ts";

/** Every algorithm choice of a run; engines read only this, so all engines train the same algorithm. */
export interface AlgoConfig extends PolicyLossConfig {
  /** Divide group advantages by the group std (GRPO) or not (Dr. GRPO). */
  normByStd: boolean;
  stdEps: number;
  /** Reward of a correct/incorrect rollout: "binary" 1/0 (VERL MATH) or "pm1" +1/−1 (DAPO). */
  rewardScheme: "binary" | "pm1";
  dynamicSampling: { enabled: boolean; maxRounds: number; onExhausted: "error" | "partial" };
  overlong: { enabled: boolean; buffer: number; factor: number };
  ace: AceConfig;
}

const ACE_OFF: AceConfig = { enabled: false, alpha: 1, phi: "softplus", aggregation: "sum", clip: null };
const ACE_ON: AceConfig = { ...ACE_OFF, enabled: true };

// GRPO as VERL's GRPO examples run it: std-normalised, symmetric clip 0.2, low_var_kl loss 0.001, token-mean.
const GRPO: AlgoConfig = {
  normByStd: true,
  stdEps: 1e-6,
  rewardScheme: "binary",
  clipLow: 0.2,
  clipHigh: 0.2,
  clipC: 3,
  logRatioClamp: 20,
  lossAgg: "token-mean",
  klCoef: 0.001,
  klType: "low_var_kl",
  entropyCoef: 0,
  dynamicSampling: { enabled: false, maxRounds: 10, onExhausted: "error" },
  overlong: { enabled: false, buffer: 4096, factor: 1 },
  ace: ACE_OFF,
};

// DAPO's published recipe (arXiv 2503.14476): clip-higher 0.2/0.28, dual clip 10, token-mean, no KL, dynamic
// sampling.
const DAPO: AlgoConfig = {
  ...GRPO,
  rewardScheme: "pm1",
  clipHigh: 0.28,
  clipC: 10,
  klCoef: 0,
  dynamicSampling: { enabled: true, maxRounds: 10, onExhausted: "error" },
  overlong: { enabled: true, buffer: 4096, factor: 1 },
};

/** The named presets; ace-* add ACE (softplus, α = 1, c summed over tokens, no clip) to GRPO/DAPO. */
export const PRESETS: Readonly<Record<string, AlgoConfig>> = {
  grpo: GRPO,
  dapo: DAPO,
  "ace-grpo": { ...GRPO, ace: ACE_ON },
  "ace-dapo": { ...DAPO, ace: ACE_ON },
};

/**
 * The preset merged with overrides, validated. Overrides may be nested (`{ ace: { alpha: 2 } }`) or dotted
 * (`{ "ace.alpha": 2 }`, as sweep grids write them); an unknown key or a wrongly typed value throws naming it.
 */
export function resolveAlgo(preset: string, overrides: Record<string, unknown> = {}): AlgoConfig {
  const base = PRESETS[preset];
  if (!base) {
    throw new RangeError(`preset '${preset}' is unknown; expected ${Object.keys(PRESETS).join(", ")}`);
  }
  const algo = structuredClone(base) as unknown as Record<string, unknown>;
  for (const [path, value] of flatten(overrides)) setPath(algo, path, value);
  checkAlgo(algo as unknown as AlgoConfig);
  return algo as unknown as AlgoConfig;
}

function flatten(obj: Record<string, unknown>, prefix = ""): [string, unknown][] {
  return Object.entries(obj).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? flatten(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, v] as [string, unknown]]
  );
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!Object.hasOwn(node, key) || node[key] === null || typeof node[key] !== "object") {
      throw new RangeError(`algo override '${path}': unknown key`);
    }
    node = node[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (!Object.hasOwn(node, last)) throw new RangeError(`algo override '${path}': unknown key`);
  const old = node[last];
  const nullable = path === "clipC" || path === "ace.clip";
  if (!(nullable && value === null) && old !== null && typeof old !== typeof value) {
    throw new RangeError(`algo override '${path}': expected a ${typeof old}, got ${JSON.stringify(value)}`);
  }
  if (old === null && value !== null && typeof value !== "number") {
    throw new RangeError(`algo override '${path}': expected a number or null, got ${JSON.stringify(value)}`);
  }
  node[last] = value;
}

function checkAlgo(a: AlgoConfig): void {
  const fail = (field: string, want: string, got: unknown) => {
    throw new RangeError(`algo.${field} is ${JSON.stringify(got)}; expected ${want}`);
  };
  if (!(a.clipLow >= 0 && a.clipLow < 1)) fail("clipLow", "a number in [0, 1)", a.clipLow);
  if (!(a.clipHigh >= 0)) fail("clipHigh", "a number ≥ 0", a.clipHigh);
  if (a.clipC !== null && !(a.clipC > 1)) fail("clipC", "a number > 1 or null", a.clipC);
  if (!(a.logRatioClamp > 0)) fail("logRatioClamp", "a number > 0", a.logRatioClamp);
  if (!LOSS_AGG_MODES.includes(a.lossAgg as LossAggMode)) {
    fail("lossAgg", LOSS_AGG_MODES.join(" | "), a.lossAgg);
  }
  if (!KL_TYPES.includes(a.klType as KlType)) fail("klType", KL_TYPES.join(" | "), a.klType);
  if (!(a.klCoef >= 0)) fail("klCoef", "a number ≥ 0", a.klCoef);
  if (!Number.isFinite(a.entropyCoef)) fail("entropyCoef", "a finite number", a.entropyCoef);
  if (!(a.stdEps >= 0)) fail("stdEps", "a number ≥ 0", a.stdEps);
  if (!["binary", "pm1"].includes(a.rewardScheme)) fail("rewardScheme", "binary | pm1", a.rewardScheme);
  if (!["error", "partial"].includes(a.dynamicSampling.onExhausted)) {
    fail("dynamicSampling.onExhausted", "error | partial", a.dynamicSampling.onExhausted);
  }
  if (!Number.isInteger(a.dynamicSampling.maxRounds)) {
    fail("dynamicSampling.maxRounds", "an integer", a.dynamicSampling.maxRounds);
  }
  if (!(a.overlong.buffer > 0)) fail("overlong.buffer", "a number > 0", a.overlong.buffer);
  if (!(a.overlong.factor >= 0)) fail("overlong.factor", "a number ≥ 0", a.overlong.factor);
  if (!(a.ace.alpha >= 0)) fail("ace.alpha", "a number ≥ 0", a.ace.alpha);
  if (!["softplus", "relu", "uniform"].includes(a.ace.phi)) {
    fail("ace.phi", "softplus | relu | uniform", a.ace.phi);
  }
  if (!["sum", "mean"].includes(a.ace.aggregation)) fail("ace.aggregation", "sum | mean", a.ace.aggregation);
  if (a.ace.clip !== null && !(a.ace.clip > 0)) fail("ace.clip", "a number > 0 or null", a.ace.clip);
}
