// DAPO dynamic sampling (arXiv 2503.14476): keep only groups whose rewards differ, regenerate until the batch
// is full.
import { groupMembers } from "./advantages.ts";
import { assertFinite, assertLength, type Num } from "./check.ts";

/**
 * Indices of the rollouts in informative groups: groups whose rewards are not all equal (population std > 0),
 * plus singleton groups, as DAPO keeps them. Also returns the number of groups seen and kept.
 */
export function filterGroups(
  rewards: Num,
  groupIds: Num,
): { keep: number[]; groups: number; keptGroups: number } {
  assertFinite("rewards", rewards);
  assertLength("groupIds", groupIds, rewards.length);
  const keep: number[] = [];
  let groups = 0, keptGroups = 0;
  for (const idx of groupMembers(groupIds).values()) {
    groups++;
    if (idx.length > 1 && idx.every((i) => rewards[i] === rewards[idx[0]])) continue;
    keptGroups++;
    keep.push(...idx);
  }
  keep.sort((a, b) => a - b);
  return { keep, groups, keptGroups };
}

/** What `dynamicSample` returns: exactly `batchGroups` groups unless the round cap was hit first. */
export interface DynamicSampleResult<G> {
  groups: G[];
  rounds: number;
  generatedGroups: number;
  keptGroups: number;
  /** True when the round cap stopped sampling before the batch was full. */
  exhausted: boolean;
}

/**
 * Generate rounds of groups with `generate(round)`, keep the informative ones, and stop once `batchGroups` are
 * kept (the surplus is truncated, as DAPO). `maxRounds ≤ 0` means unlimited. When the cap is hit first, `onExhausted`
 * "error" throws (DAPO's behaviour) and "partial" returns what was kept with `exhausted: true`.
 */
export function dynamicSample<G>(
  generate: (round: number) => G[],
  informative: (group: G) => boolean,
  batchGroups: number,
  maxRounds: number,
  onExhausted: "error" | "partial" = "error",
): DynamicSampleResult<G> {
  const rounds = samplingRounds(informative, batchGroups, maxRounds, onExhausted);
  let next = rounds.next([]);
  while (!next.done) next = rounds.next(generate(next.value));
  return next.value;
}

/** `dynamicSample` for a `generate` that returns a promise (an engine whose sampling reads the GPU asynchronously). */
export async function dynamicSampleAsync<G>(
  generate: (round: number) => Promise<G[]>,
  informative: (group: G) => boolean,
  batchGroups: number,
  maxRounds: number,
  onExhausted: "error" | "partial" = "error",
): Promise<DynamicSampleResult<G>> {
  const rounds = samplingRounds(informative, batchGroups, maxRounds, onExhausted);
  let next = rounds.next([]);
  while (!next.done) next = rounds.next(await generate(next.value));
  return next.value;
}

/** The logic of both: yields the round number to generate, receives that round's groups. */
function* samplingRounds<G>(
  informative: (group: G) => boolean,
  batchGroups: number,
  maxRounds: number,
  onExhausted: "error" | "partial",
): Generator<number, DynamicSampleResult<G>, G[]> {
  const kept: G[] = [];
  let rounds = 0, generated = 0, keptCount = 0;
  while (kept.length < batchGroups) {
    if (maxRounds > 0 && rounds >= maxRounds) {
      if (onExhausted === "error") {
        throw new Error(
          `dynamic sampling: only ${kept.length}/${batchGroups} informative groups after ${rounds} rounds (maxRounds)`,
        );
      }
      return { groups: kept, rounds, generatedGroups: generated, keptGroups: keptCount, exhausted: true };
    }
    const batch = yield rounds++;
    if (batch.length === 0) throw new Error(`dynamic sampling: generate(${rounds - 1}) returned no groups`);
    generated += batch.length;
    for (const g of batch) {
      if (informative(g)) {
        keptCount++;
        kept.push(g);
      }
    }
  }
  return {
    groups: kept.slice(0, batchGroups),
    rounds,
    generatedGroups: generated,
    keptGroups: keptCount,
    exhausted: false,
  };
}
