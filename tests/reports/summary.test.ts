// The summary's honesty about its design: the inference scope first, the one-base and few-bases warnings, the
// variance components, and a k that drops out of the difference table named under it.
import { assertEquals, ok } from "../assert.ts";
import { Rng } from "../../common/prng.ts";
import { buildReport, type RunData } from "../../reports/mod.ts";
import { type SimSpec, simulateRuns, writeSweep } from "./simulate.ts";

function spec(bases: number, seedsPerBase: number): SimSpec {
  return {
    bases,
    seedsPerBase,
    problems: 20,
    n: 16,
    mu: -1,
    effects: { base: 0.3, seed: 0.1, problem: 1, baseProblem: 0.2, seedProblem: 0.1 },
    ace: {
      shift: 0.2,
      effects: { base: 0.1, seed: 0.05, problem: 0.2, baseProblem: 0.1, seedProblem: 0.05 },
    },
  };
}

/** The summary of simulated runs, written to and read back from a temp sweep folder. */
async function summaryOf(runs: RunData[]): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "summary-" });
  try {
    writeSweep(dir, runs);
    return (await buildReport(dir, { iters: 10 })).summary;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** The first paragraph after the title. */
const firstSentence = (summary: string) => summary.split("\n")[2];

Deno.test("summary: the first sentence states the scope; captions say over bases; components are printed", async () => {
  const text = await summaryOf(simulateRuns(spec(4, 1), Rng.seeded(1)));
  ok(
    firstSentence(text).startsWith(
      "Inference scope: over 4 independently trained base models, 1 seed(s) each, 20 problems",
    ),
    firstSentence(text),
  );
  ok(!firstSentence(text).includes("Warning") && !text.includes("for this base model only"), text);
  // Differences over 4 bases under-cover (91–93%): they are warned about, cells are not.
  ok(text.includes("Warning: these differences span 4 base models, so the base term has 3 degree(s)"), text);
  ok(text.includes("Mean over 4 base models × 1 seed(s) × 20 problems"), text);
  ok(text.includes("95% crossed bases × problems interval, seeds nested in bases"), text);
  for (const name of ["σ²_base", "σ²_seed(base)", "σ²_problem", "σ²_base×problem", "σ²_residual"]) {
    ok(text.includes(name), name);
  }
  ok(text.includes("One seed per base: σ²_base includes the seed variance"), text);
});

Deno.test("summary: fewer than 4 bases warns; one base says 'for this base model only' in every caption", async () => {
  const two = await summaryOf(simulateRuns(spec(2, 2), Rng.seeded(2)));
  ok(firstSentence(two).includes("Warning: with fewer than 4 base models"), firstSentence(two));
  const one = await summaryOf(simulateRuns(spec(1, 3), Rng.seeded(3)));
  ok(
    firstSentence(one).includes("ONE base model") && firstSentence(one).includes("for this base model only"),
  );
  const captions = one.split("\n").filter((l) =>
    l.startsWith("Mean over") || l.startsWith("ACE minus") || l.startsWith("Minimum detectable") ||
    l.startsWith("- **")
  );
  assertEquals(captions.length, 4);
  for (const line of captions) ok(line.includes("for this base model only"), line);
});

Deno.test("summary: a k that one run lacks (fewer samples) is named under the difference table", async () => {
  const runs = simulateRuns(spec(4, 1), Rng.seeded(4));
  const cut = runs.find((r) => r.method === "ace-grpo" && r.base === 2)!;
  cut.samples = cut.samples.filter((s) => s.sample < 8); // n = 8: no Pass@16 for this run
  cut.expected = { ...cut.expected, n: 8 };
  const text = await summaryOf(runs);
  ok(!text.includes("ΔPass@16 |"), "the column is gone");
  ok(
    text.includes(
      "- ΔPass@16 of ace-grpo − grpo is not shown: ace-grpo base 2 seed 2 (n = 8) has fewer than 16 samples per problem.",
    ),
    text,
  );
});
