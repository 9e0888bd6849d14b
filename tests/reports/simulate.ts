// A known-truth sweep simulator for the report statistics: grpo and ace-grpo runs on B base models × S seeds per
// base × P problems with n samples each, where a sample is correct with probability sigmoid(logit), and
//   logit = μ + g[b] + s[b][s] + π[p] + (gπ)[b][p] + (sπ)[b][s][p]   (grpo)
//   ACE adds δ + its own base, seed, problem and base × problem effects (so the difference varies too),
// every effect an independent normal draw from the seeded Rng. The population Pass@k of each method (over
// bases, seeds and problems) is a one-dimensional normal integral, so coverage can be checked against it.
import { join } from "node:path";
import { Rng } from "../../common/prng.ts";
import { RUN_FILES, runDir } from "../../common/run_folder.ts";
import type { EvalSample, RunData } from "../../reports/mod.ts";

/** Standard deviations (logit scale) of the effects. */
export interface Effects {
  base: number;
  seed: number;
  problem: number;
  baseProblem: number;
  seedProblem: number;
}

/** A simulated design and its truth. */
export interface SimSpec {
  bases: number;
  seedsPerBase: number;
  problems: number;
  n: number;
  /** grpo's logit at zero effects. */
  mu: number;
  effects: Effects;
  /** ACE's shift of the logit and its own effects (added to grpo's). */
  ace: { shift: number; effects: Effects };
  /** Evaluation step recorded in the samples. */
  step?: number;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** Total logit variance of a set of effects. */
function total(e: Effects): number {
  return e.base ** 2 + e.seed ** 2 + e.problem ** 2 + e.baseProblem ** 2 + e.seedProblem ** 2;
}

/** E[1 − (1 − sigmoid(X))^k] for X ~ N(m, v): the trapezoid rule over ±9 sd (error far below 1e-6). */
function expectedPassAtK(m: number, v: number, k: number): number {
  const sd = Math.sqrt(v), steps = 4000;
  let acc = 0, wsum = 0;
  for (let i = 0; i <= steps; i++) {
    const z = -9 + (18 * i) / steps;
    const w = Math.exp(-z * z / 2) * (i === 0 || i === steps ? 0.5 : 1);
    acc += w * (1 - (1 - sigmoid(m + sd * z)) ** k);
    wsum += w;
  }
  return acc / wsum;
}

/** The population Pass@k of grpo, ace-grpo and their difference (over bases, seeds and problems). */
export function truth(spec: SimSpec, k: number): { grpo: number; ace: number; diff: number } {
  const v = total(spec.effects);
  const grpo = expectedPassAtK(spec.mu, v, k);
  const ace = expectedPassAtK(spec.mu + spec.ace.shift, v + total(spec.ace.effects), k);
  return { grpo, ace, diff: ace - grpo };
}

/** Binomial(n, p) by n Bernoulli draws (n is small here). */
function binomial(rng: Rng, n: number, p: number): number {
  let c = 0;
  for (let i = 0; i < n; i++) if (rng.float() < p) c++;
  return c;
}

const draw = (rng: Rng, count: number, sd: number) =>
  Float64Array.from({ length: count }, () => sd * rng.normal());

/**
 * One simulated sweep: RunData of grpo and ace-grpo for every base and seed (seeds numbered 0 … B·S − 1, run
 * `<method>_b<b>_s<s>`). `problemEffects` fixes the problems' effects (re-runs on the same problems); otherwise
 * they are drawn too.
 */
export function simulateRuns(
  spec: SimSpec,
  rng: Rng,
  problemEffects?: { grpo: Float64Array; ace: Float64Array },
): RunData[] {
  const { bases: B, seedsPerBase: S, problems: P, n } = spec;
  const e = spec.effects, a = spec.ace.effects;
  const probs = problemEffects ?? { grpo: draw(rng, P, e.problem), ace: draw(rng, P, a.problem) };
  const runs: RunData[] = [];
  const step = spec.step ?? 1;
  const ids = Array.from({ length: P }, (_, p) => `sim/${p}`);
  const statuses = ["wrong", "correct"];
  for (let b = 0; b < B; b++) {
    const g = e.base * rng.normal(), gA = a.base * rng.normal();
    const gp = draw(rng, P, e.baseProblem), gpA = draw(rng, P, a.baseProblem);
    for (let s = 0; s < S; s++) {
      const seed = b * S + s;
      const sd = e.seed * rng.normal(), sdA = a.seed * rng.normal();
      for (const method of ["grpo", "ace-grpo"]) {
        const ace = method === "ace-grpo";
        const samples: EvalSample[] = [];
        for (let p = 0; p < P; p++) {
          let logit = spec.mu + g + sd + probs.grpo[p] + gp[p] + e.seedProblem * rng.normal();
          if (ace) logit += spec.ace.shift + gA + sdA + probs.ace[p] + gpA[p] + a.seedProblem * rng.normal();
          const c = binomial(rng, n, sigmoid(logit));
          for (let i = 0; i < n; i++) {
            const correct = i < c;
            samples.push({
              step,
              dataset: "sim",
              problemId: ids[p],
              sample: i,
              correct,
              status: statuses[+correct],
              extracted: null,
            });
          }
        }
        runs.push({
          runId: `${method}_b${b}_s${seed}`,
          method,
          preset: method,
          seed,
          base: b,
          engine: "sim",
          state: "done",
          ks: [],
          metrics: [],
          samples,
          expected: { n, steps: step },
          evalFile: "ok",
        });
      }
    }
  }
  return runs;
}

/** Write runs as a sweep folder (runs/<id>/{config,status}.json, eval.jsonl) that `loadSweep` reads. */
export function writeSweep(dir: string, runs: readonly RunData[]): void {
  for (const r of runs) {
    const folder = runDir(dir, r.runId);
    Deno.mkdirSync(folder, { recursive: true });
    const config = {
      runId: r.runId,
      engine: r.engine,
      method: r.method,
      preset: r.preset,
      seed: r.seed,
      base: r.base,
      eval: { n: r.expected.n, ks: r.ks },
      rl: { steps: r.expected.steps },
    };
    Deno.writeTextFileSync(join(folder, RUN_FILES.config), JSON.stringify(config));
    Deno.writeTextFileSync(
      join(folder, RUN_FILES.status),
      JSON.stringify({ state: "done", startedAt: "2026-01-01T00:00:00Z" }),
    );
    Deno.writeTextFileSync(
      join(folder, RUN_FILES.eval),
      r.samples.map((s) => JSON.stringify(s)).join("\n") + "\n",
    );
  }
}
