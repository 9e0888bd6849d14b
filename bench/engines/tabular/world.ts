// The tabular world: prompts × strategies, which strategies solve which prompt, and the reference model's noise.
import { loadSchema, validate } from "../../../common/config.ts";
import { Rng } from "../../../common/prng.ts";

/** Validated tabular settings (see settings.schema.json for meanings and defaults). */
export interface TabularSettings {
  prompts: number;
  strategies: number;
  broadCorrectProb: number;
  nicheCorrectProb: number;
  refNoiseStd: number;
  sharedLrScale: number;
  perPromptLrScale: number;
  worldSeed: number | null;
  checkpointEvery: number;
  rl: {
    steps: number;
    groupSize: number;
    promptsPerStep: number;
    lr: number;
    ppoEpochs: number;
    miniBatches: number;
  };
}

/** The fixed world: correct[x·S + s] is 1 when strategy s solves prompt x; refNoise is the reference's logits. */
export interface TabularWorld {
  prompts: number;
  strategies: number;
  correct: Uint8Array;
  refNoise: Float64Array;
}

const schemaUrl = new URL("./settings.schema.json", import.meta.url);

/** Settings with schema defaults filled in; a bad field throws a one-line error naming `source` and the field. */
export function resolveSettings(settings: Record<string, unknown>, source = "settings"): TabularSettings {
  return validate<TabularSettings>(loadSchema(schemaUrl), structuredClone(settings), source);
}

/** Seed of the world of base `base`: worldSeed + base (worldSeed null = 0); the world is the run's base model. */
export function worldSeedOf(settings: TabularSettings, base: number): number {
  return (settings.worldSeed ?? 0) + base;
}

/**
 * Draw the world of base `base` from its own stream (`worldSeedOf`): strategy 0 is broad (right with
 * broadCorrectProb), the others niche (each right with nicheCorrectProb); refNoise[x][s] ~ N(0, refNoiseStd²)
 * fixes the reference's preferences.
 */
export function buildWorld(settings: TabularSettings, base: number): TabularWorld {
  const rng = Rng.seeded(worldSeedOf(settings, base)).derive("tabular-world");
  const { prompts: P, strategies: S } = settings;
  const correct = new Uint8Array(P * S);
  const refNoise = new Float64Array(P * S);
  for (let x = 0; x < P; x++) {
    for (let s = 0; s < S; s++) {
      const p = s === 0 ? settings.broadCorrectProb : settings.nicheCorrectProb;
      correct[x * S + s] = rng.float() < p ? 1 : 0;
      refNoise[x * S + s] = settings.refNoiseStd * rng.normal();
    }
  }
  return { prompts: P, strategies: S, correct, refNoise };
}
