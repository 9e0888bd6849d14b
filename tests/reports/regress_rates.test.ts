// The regression gate on independent re-runs: simulated sweeps (tests/reports/simulate.ts) that differ only in
// their base models and seeds, on the same problems, through the report code that `regress` uses
// (passKRows → baselineCells → compareToBaseline). Two such re-runs must fail ≤ 5% of the time (the family of
// cells is Holm-adjusted), a uniform drop of 3 points (tabular-sized design) or 5 points (tfjs-sized design) must
// fail every time, and the uncorrected per-cell test must show the multiplicity problem Holm fixes.
import { assertEquals, ok } from "../assert.ts";
import { Rng } from "../../common/prng.ts";
import { type Baseline, baselineCells, compareToBaseline, passKRows } from "../../reports/mod.ts";
import { type SimSpec, simulateRuns } from "./simulate.ts";

/**
 * ci-tabular's design (8 units × 200 problems, n = 32, 12 cells) and ci-tfjs's (6 × 128, n = 16, 10 cells). The
 * run-to-run spread is set to the committed baselines' (tabular: about 2.5× it, tfjs: about equal; logit sd of
 * base + seed ≈ 0.09 at Pass@1 ≈ 0.15). A sweep whose bases spread more needs more bases for the same drop; the
 * committed-baseline tests in regress.test.ts check the drop against each regenerated baseline's own noise.
 */
const DESIGNS: [string, SimSpec, number][] = [
  ["tabular", {
    bases: 8,
    seedsPerBase: 1,
    problems: 200,
    n: 32,
    mu: -0.3,
    effects: { base: 0.1, seed: 0.05, problem: 1.5, baseProblem: 0.15, seedProblem: 0.1 },
    ace: {
      shift: 0.1,
      effects: { base: 0.05, seed: 0.03, problem: 0.2, baseProblem: 0.1, seedProblem: 0.05 },
    },
  }, 0.03],
  ["tfjs", {
    bases: 6,
    seedsPerBase: 1,
    problems: 128,
    n: 16,
    mu: -2,
    effects: { base: 0.08, seed: 0.04, problem: 1, baseProblem: 0.2, seedProblem: 0.15 },
    ace: {
      shift: 0.05,
      effects: { base: 0.05, seed: 0.03, problem: 0.2, baseProblem: 0.1, seedProblem: 0.05 },
    },
  }, 0.05],
];

// M independent sweeps give M(M − 1) ordered (baseline, current) pairs; the rate over all of them is an unbiased
// estimate of the false-failure probability whose sd is at most √(p(1 − p)/(M/2)) (as M/2 disjoint pairs) and
// in practice much smaller: about 2 points at p = 5% with M = 40.
const M = 40;

for (const [name, spec, drop] of DESIGNS) {
  Deno.test(`regress rates (${name}): re-runs differing in seeds fail ≤ 5%; a uniform ${drop} drop always fails`, () => {
    const rng = Rng.seeded(`regress ${name}`);
    const problems = {
      grpo: Float64Array.from({ length: spec.problems }, () => spec.effects.problem * rng.normal()),
      ace: Float64Array.from({ length: spec.problems }, () => spec.ace.effects.problem * rng.normal()),
    };
    const sweeps: Baseline[] = [...Array(M)].map(() => ({
      version: 2,
      sweep: name,
      configHash: null,
      cells: baselineCells(passKRows(simulateRuns(spec, rng, problems), 1)),
    }));
    let holmFails = 0, perCellFails = 0, dropCaught = 0, pairs = 0;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < M; j++) {
        if (i === j) continue;
        pairs++;
        const verdicts = compareToBaseline(sweeps[i], sweeps[j]);
        if (verdicts.some((v) => v.regressed)) holmFails++;
        if (verdicts.some((v) => v.p <= 0.05)) perCellFails++;
        const fell = { ...sweeps[j], cells: sweeps[j].cells.map((c) => ({ ...c, mean: c.mean - drop })) };
        if (compareToBaseline(sweeps[i], fell).some((v) => v.regressed)) dropCaught++;
      }
    }
    const cells = sweeps[0].cells.length;
    const rate = (x: number) => `${(100 * x / pairs).toFixed(1)}%`;
    console.log(
      `${name}: ${cells} cells, ${pairs} ordered pairs of ${M} re-runs: Holm fails ${rate(holmFails)}, ` +
        `uncorrected per-cell test fails ${rate(perCellFails)}, a uniform ${drop} drop is caught in ${
          rate(dropCaught)
        }`,
    );
    ok(cells >= 10, `${cells} cells`);
    ok(holmFails / pairs <= 0.05, `Holm false failures ${rate(holmFails)}`);
    ok(perCellFails > 2 * holmFails && perCellFails / pairs > 0.05, `uncorrected ${rate(perCellFails)}`);
    assertEquals(dropCaught, pairs, `a uniform ${drop} drop is caught in ${rate(dropCaught)} of pairs`);
  });
}
