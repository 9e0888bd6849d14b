// DAPO dynamic sampling (arXiv 2503.14476): keep only informative groups, regenerate until the batch is full.

/**
 * Generate rounds of groups with `generate(round)`, keep the informative ones, and stop once `batchGroups` are
 * kept (the surplus is truncated, as DAPO). `maxRounds ≤ 0` means unlimited. When the cap is hit first, `onExhausted`
 * "error" throws (DAPO's behaviour) and "partial" returns what was kept (fewer groups). Returns the kept groups,
 * the rounds run and the groups generated.
 */
export async function dynamicSample<G>(
  generate: (round: number) => Promise<G[]>,
  informative: (group: G) => boolean,
  batchGroups: number,
  maxRounds: number,
  onExhausted: "error" | "partial" = "error",
) {
  const kept: G[] = [];
  let rounds = 0, generated = 0;
  while (kept.length < batchGroups && !(maxRounds > 0 && rounds >= maxRounds)) {
    const batch = await generate(rounds++);
    if (batch.length === 0) throw new Error(`dynamic sampling: generate(${rounds - 1}) returned no groups`);
    generated += batch.length;
    kept.push(...batch.filter(informative));
  }
  if (kept.length < batchGroups && onExhausted === "error") {
    throw new Error(
      `dynamic sampling: only ${kept.length}/${batchGroups} informative groups after ${rounds} rounds (maxRounds)`,
    );
  }
  return { groups: kept.slice(0, batchGroups), rounds, generatedGroups: generated };
}
