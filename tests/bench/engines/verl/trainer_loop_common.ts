// What VERL's real-loop tests (trainer_loop.test.ts for 0.7.0, trainer_loop_v090.test.ts for 0.9.0) share: the
// stand-in actor's log of each update_actor batch, ACE recomputed from it, running a launch script, and what a
// sweep records with a plan.
import { join } from "node:path";
import { exists } from "../../../../common/fs.ts";
import { writeRunConfig } from "../../../../common/run_folder.ts";
import type { RunConfig } from "../../../../bench/engines/engine.ts";
import { validateVerlSettings } from "../../../../bench/engines/verl/mod.ts";
import {
  countPromptTokens,
  PROMPT_TOKENS_FILE,
  writeValFilter,
} from "../../../../bench/engines/verl/prompt_filter.ts";

/**
 * What the sweep runner and the engine record beside a plan, so ingest checks the dumps' completeness as in a
 * sweep: the validation prompts' token counts (once per sweep; exact with the run's model folder and python),
 * the run's config.json (eval.n, rl.steps) and its validation filter at the plan's prompt limit.
 */
export async function recordPlan(
  sweepDir: string,
  runDir: string,
  run: RunConfig,
  maxPromptLength: number,
): Promise<void> {
  if (!exists(join(sweepDir, PROMPT_TOKENS_FILE))) {
    await countPromptTokens(sweepDir, validateVerlSettings(run.settings));
  }
  writeRunConfig(runDir, { ...run, record: null });
  writeValFilter(sweepDir, runDir, maxPromptLength);
}

/** One update_actor batch as the stand-in workers log it (per rollout, in the batch's order). */
export interface ActorLog {
  event: string;
  length: number[];
  uid: string[];
  /** The verifier's verdict as VERL carried it (0.7.0: the batch; 0.9.0: TransferQueue's reward_extra_info). */
  acc: (boolean | null)[] | null;
  score: number[];
  advantage: number[];
  old_log_prob: number[][];
  ref_log_prob: number[][] | null;
  response: string[];
  gold: string[];
}

/**
 * ACE over GRPO, recomputed: A from the group's scores (Bessel std + 1e-6; a singleton keeps its score), then
 * A·(1 + α·softplus(c)) where `wrong(i)` and A < 0, with c = Σ (old − ref) over the response. `normByStd` false
 * (Dr. GRPO): A = r − mean, no division.
 */
export function recomputeAce(
  log: Pick<ActorLog, "uid" | "score" | "old_log_prob" | "ref_log_prob">,
  alpha: number,
  wrong: (i: number) => boolean,
  normByStd = true,
): number[] {
  const groups = new Map<string, number[]>();
  log.uid.forEach((u, i) => groups.set(u, [...(groups.get(u) ?? []), i]));
  const out = new Array<number>(log.uid.length);
  for (const members of groups.values()) {
    const r = members.map((i) => log.score[i]);
    const mean = r.reduce((a, b) => a + b, 0) / r.length;
    const std = r.length > 1 ? Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / (r.length - 1)) : 1;
    const uniform = r.every((x) => x === r[0]);
    members.forEach((i, k) => {
      const a = r.length === 1 ? r[k] : uniform ? 0 : (r[k] - mean) / (normByStd ? std + 1e-6 : 1);
      const c = log.old_log_prob[i].reduce((s, x, t) => s + x - log.ref_log_prob![i][t], 0);
      out[i] = wrong(i) && a < 0 ? a * (1 + alpha * Math.log1p(Math.exp(c))) : a;
    });
  }
  return out;
}

/** Largest |a − b| / max(1, |b|) over two equal-length lists. */
export function maxRelativeDiff(a: number[], b: number[]): number {
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]) / Math.max(1, Math.abs(b[i]))), 0);
}

/** Runs a command to completion and returns its stdout + stderr; throws naming `what` when it fails. */
export function runCommand(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  what: string,
): string {
  const { code, text } = runAllowingFailure(cmd, args, env);
  if (code !== 0) throw new Error(`${what} failed (exit ${code}):\n${text.slice(-6000)}`);
  return text;
}

/** Runs a command to completion and returns its exit code with its stdout + stderr. */
export function runAllowingFailure(
  cmd: string,
  args: string[],
  env: Record<string, string>,
): { code: number; text: string } {
  const out = new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).outputSync();
  return {
    code: out.code,
    text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
  };
}
