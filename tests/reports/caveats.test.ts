// The summary's caveats against known truth: Pass@k cells near the ceiling on few problems are flagged because
// their intervals under-cover there (and only there), differences over ≤ 4 bases are warned about, every MDD carries
// its χ² range, and the count of intervals that exclude 0 is set against chance.
import { ok } from "../assert.ts";
import { Rng } from "../../common/prng.ts";
import { aggregateSeeds, buildReport, finalRows, passKRows, type RunData } from "../../reports/mod.ts";
import { CEILING_MARK, chanceLine, nearCeiling } from "../../reports/caveats.ts";
import { type SimSpec, simulateRuns, truth, writeSweep } from "./simulate.ts";

/** 8 bases × 1 seed near the ceiling at k = 32 (population Pass@32 ≈ 0.95), on `problems` problems. */
function ceilingSpec(problems: number): SimSpec {
  return {
    bases: 8,
    seedsPerBase: 1,
    problems,
    n: 32,
    mu: -0.7,
    effects: { base: 0.35, seed: 0.15, problem: 1.6, baseProblem: 0.3, seedProblem: 0.2 },
    ace: { shift: 0.1, effects: { base: 0.2, seed: 0.1, problem: 0.3, baseProblem: 0.15, seedProblem: 0.1 } },
  };
}

/** Coverage of the k = 32 cells of both methods over R simulated sweeps, and how often they were flagged. */
function ceilingCoverage(spec: SimSpec, R: number, seed: string): { coverage: number; flagged: number } {
  const rng = Rng.seeded(seed);
  const t = truth(spec, 32);
  let hits = 0, flagged = 0, checks = 0;
  for (let r = 0; r < R; r++) {
    const cells = aggregateSeeds(finalRows(passKRows(simulateRuns(spec, rng), 1))).filter((c) => c.k === 32);
    for (const c of cells) {
      const target = c.method === "grpo" ? t.grpo : t.ace;
      checks++;
      if (c.lo <= target && target <= c.hi) hits++;
      if (nearCeiling(c)) flagged++;
    }
  }
  return { coverage: hits / checks, flagged: flagged / checks };
}

Deno.test("ceiling flag: Pass@k ≥ 0.93 on ≤ 60 problems under-covers and is flagged; 160 problems cover and are not", () => {
  const few = ceilingSpec(40), many = ceilingSpec(160);
  const t = truth(few, 32);
  ok(t.grpo > 0.93 && t.ace > 0.93, `population Pass@32 ${t.grpo}, ${t.ace}`);
  const a = ceilingCoverage(few, 200, "ceiling 40");
  const b = ceilingCoverage(many, 100, "ceiling 160");
  console.log(
    `  Pass@32 ≈ ${t.grpo.toFixed(3)}/${t.ace.toFixed(3)}: 40 problems cover ${
      (100 * a.coverage).toFixed(1)
    }% ` +
      `(flagged ${(100 * a.flagged).toFixed(0)}%), 160 problems ${(100 * b.coverage).toFixed(1)}% (flagged ` +
      `${(100 * b.flagged).toFixed(0)}%)`,
  );
  ok(a.coverage < 0.925, `40 problems near the ceiling: coverage ${a.coverage}`);
  // The flag reads the estimated mean, which falls below 0.93 in some sweeps whose truth is 0.95.
  ok(a.flagged > 0.7, `flagged in ${a.flagged}`);
  ok(b.coverage >= 0.92, `160 problems: coverage ${b.coverage}`);
  ok(b.flagged === 0, "more than 60 problems are not flagged");
});

/** A small simulated sweep's summary.md, written to and read back from a temp folder. */
async function summaryOf(runs: RunData[]): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "caveats-" });
  try {
    writeSweep(dir, runs);
    return (await buildReport(dir, { iters: 10 })).summary;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("summary caveats: ceiling mark and note, MDD range with its df, the chance count; 5 bases are not warned", async () => {
  const text = await summaryOf(simulateRuns({ ...ceilingSpec(40), bases: 5 }, Rng.seeded(4)));
  ok(text.includes(`${CEILING_MARK} |`) && text.includes("Pass@k ≥ 0.93 on ≤ 60 problems"), text);
  ok(/\| ace-grpo − grpo \| \d\.\d{3} \[\d\.\d{3}, (\d\.\d{3}|>1)\] \|/.test(text), text);
  ok(text.includes("95% chi-square interval (4 df)"), text);
  ok(
    /\d+ of \d+ difference intervals exclude 0; with no real difference anywhere about \d\.\d would/.test(
      text,
    ),
  );
  ok(!text.includes("Warning: these differences span"), "5 bases: no few-bases warning for differences");
});

Deno.test("chanceLine: counts intervals excluding 0 against 5% of them", () => {
  const cell = (lo: number, hi: number) => ({ lo, hi }) as never;
  const line = chanceLine(
    [{ cells: [cell(0.01, 0.02), cell(-0.1, 0.1), cell(-0.3, -0.2), cell(NaN, NaN)] }] as never,
  );
  ok(
    line.startsWith(
      "2 of 3 difference intervals exclude 0; with no real difference anywhere about 0.2 would",
    ),
    line,
  );
  ok(chanceLine([]) === "");
});
