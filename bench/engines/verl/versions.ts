// The VERL releases acebench plans for, and what differs between them. overrides.ts writes one version-neutral
// override list under v0.7.0's key names; `forVersion` rewrites it for the target release with the release's
// key table, so an override added once reaches every release (or fails the plan naming the key).

/** A VERL release acebench generates plans for (settings.verlVersion). */
export type VerlVersion = "0.7.0" | "0.9.0";

/** The newest supported release: what a plan targets unless settings.verlVersion says otherwise. */
export const DEFAULT_VERL_VERSION: VerlVersion = "0.9.0";

/** What happens to a neutral (v0.7.0-named) key in a release: renamed, or dropped with the reason printed. */
export type KeyRule = { to: string } | { drop: string };

/** One supported release. */
export interface VerlRelease {
  version: VerlVersion;
  /** What `python3 -c 'import verl; print(verl.__version__)'` may print (a source checkout adds `.dev`). */
  reports: string[];
  /** The module run for dynamic sampling (DAPO's filter groups): MAIN_DAPO, or VERL's own trainer. */
  dapoEntry: string;
  /** Neutral key (or key prefix ending in ".") → this release's key; longest match wins, unmatched keys stay. */
  keys: Record<string, KeyRule>;
  /** Key prefixes the release still composes but its trainer does not read: an override there is an error. */
  legacy: string[];
}

/** VERL's standard PPO/GRPO entry (every release). */
export const MAIN_PPO = "verl.trainer.main_ppo";
/** DAPO's recipe entry (`recipe/dapo/main_dapo.py` in the checkout): v0.7.0's only trainer with dynamic sampling. */
export const MAIN_DAPO = "recipe.dapo.main_dapo";

/** The releases, oldest first. Adding one: a row here, its source in ../shared/verl, the conformance test. */
export const VERL_RELEASES: Record<VerlVersion, VerlRelease> = {
  "0.7.0": {
    version: "0.7.0",
    reports: ["0.7.0", "0.7.0.dev"],
    dapoEntry: MAIN_DAPO,
    keys: {},
    legacy: [],
  },
  "0.9.0": {
    version: "0.9.0",
    reports: ["0.9.0", "0.9.0.dev"],
    // The verl-recipe submodule pinned by v0.9.0 (e7f8895) imports TaskRunner from verl.trainer.main_ppo, which
    // v0.9.0 moved to main_ppo_v0; VERL's own V1 trainer runs DAPO's filter groups ("Sync DAPO") instead.
    dapoEntry: MAIN_PPO,
    keys: {
      // v0.9.0's main_ppo reads reward settings only under reward.*; the top-level legacy keys still compose
      // (legacy_reward_impl.yaml) but only main_dapo and fully_async migrate them: they would be ignored.
      "custom_reward_function.": { to: "reward.custom_reward_function." },
      "reward_model.reward_manager": { to: "reward.reward_manager.name" },
      "reward_model.reward_kwargs.": { to: "reward.reward_kwargs." },
      // RolloutConfig has a seed again; vLLM's engine gets replica_rank + seed (engine_kwargs would override it
      // with one seed for every replica).
      "actor_rollout_ref.rollout.engine_kwargs.vllm.seed": { to: "actor_rollout_ref.rollout.seed" },
      // V1's replay buffer dispatches one prompt at a time under filter groups and bounds what is in flight by
      // filter_groups.max_inflight_gen_batches (overrides.ts emits it); these two are not read there.
      "data.gen_batch_size": {
        drop: "V1 Sync DAPO ignores it; filter_groups.max_inflight_gen_batches bounds generation",
      },
      "algorithm.filter_groups.max_num_gen_batches": {
        drop:
          "V1 Sync DAPO has no round cap (VERL warns and ignores max_num_gen_batches); acebench enforces " +
          "algo.dynamicSampling.maxRounds itself (ACE_VERL_DAPO_MAX_ROUNDS × ACE_VERL_DAPO_GEN_BATCH prompts " +
          "per step, then the run fails)",
      },
    },
    // legacy_reward_impl.yaml's top-level nodes: only main_dapo and fully_async migrate them to reward.*
    legacy: ["custom_reward_function.", "reward_model.", "sandbox_fusion."],
  },
};

/** The release a settings value names (default: the newest); throws naming the field for an unknown one. */
export function verlRelease(version: string | undefined, field = "settings.verlVersion"): VerlRelease {
  const release = VERL_RELEASES[(version ?? DEFAULT_VERL_VERSION) as VerlVersion];
  if (!release) {
    throw new RangeError(`${field} is '${version}'; supported: ${Object.keys(VERL_RELEASES).join(", ")}`);
  }
  return release;
}

/** Split `[+~]*key=value` into its prefix, key and the rest ("=value"); null for a line without `=`. */
function splitOverride(override: string): { prefix: string; key: string; rest: string } | null {
  const m = /^([+~]*)([^=]+)(=.*)?$/s.exec(override);
  return m ? { prefix: m[1], key: m[2], rest: m[3] ?? "" } : null;
}

/** The table entry for a key: exact match, else the longest matching prefix ending in "."; null when none. */
function entryFor(key: string, keys: Record<string, KeyRule>): string | null {
  if (keys[key]) return key;
  const prefixes = Object.keys(keys).filter((k) => k.endsWith(".") && key.startsWith(k));
  return prefixes.sort((a, b) => b.length - a.length)[0] ?? null;
}

/** Throws naming `where` and the key when `override` sets a key `release` composes but does not read. */
export function checkNotLegacy(override: string, release: VerlRelease, where: string): void {
  const key = splitOverride(override)?.key ?? override;
  const prefix = release.legacy.find((p) => key.startsWith(p));
  if (prefix !== undefined) {
    throw new RangeError(
      `${where}: '${key}' is a legacy key in verl ${release.version} (${prefix}* is not read by its trainer); ` +
        `use its reward.* equivalent`,
    );
  }
}

/**
 * Rewrite neutral (v0.7.0-named) overrides for `release`: renamed keys keep their `+`/`++` prefix and value;
 * dropped ones go to `dropped` as "key=value: reason" (printed in the launch script), never silently.
 */
export function forVersion(overrides: string[], release: VerlRelease) {
  const out: string[] = [];
  const dropped: string[] = [];
  for (const override of overrides) {
    const parts = splitOverride(override);
    const entry = parts ? entryFor(parts.key, release.keys) : null;
    if (!parts || entry === null) {
      out.push(override);
      continue;
    }
    const rule = release.keys[entry];
    if ("drop" in rule) dropped.push(`${parts.key}${parts.rest}: ${rule.drop}`);
    else out.push(`${parts.prefix}${rule.to}${parts.key.slice(entry.length)}${parts.rest}`);
  }
  out.forEach((o) => checkNotLegacy(o, release, `the generated overrides for verl ${release.version}`));
  return { overrides: out, dropped };
}
