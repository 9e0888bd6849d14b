// The reasoning-boundary table: counts by hand at k = n (exact) and k < n (expected), units paired by seed,
// the t interval over units, the CSV and the summary section on the fixture sweep.
import { buildReport } from "../../reports/mod.ts";
import {
  boundaryCounts,
  boundaryRecord,
  boundaryRows,
  boundarySection,
  type PassKRow,
} from "../../reports/mod.ts";
import { tQuantile } from "../../evaluators/mod.ts";
import { assertClose, assertEquals, ok, throws } from "../assert.ts";
import { fixture } from "./fixture.ts";

/** boundary.csv's columns, pinned: a renamed field shows as a format change. */
const COLUMNS = ["dataset", "method", "reference", "k", "problems", "units"].concat(
  ...["reference_only", "method_only", "both", "neither"].map((c) => [c, `${c}_lo`, `${c}_hi`]),
);

const counts = (list: [string, number, number][]) => new Map(list.map(([id, n, c]) => [id, { n, c }]));

Deno.test("boundaryCounts: at k = n a problem is solved iff one sample is correct (exact counts)", () => {
  const base = counts([["a", 4, 1], ["b", 4, 0], ["c", 4, 2], ["d", 4, 0], ["e", 4, 3]]);
  const rl = counts([["a", 4, 0], ["b", 4, 4], ["c", 4, 1], ["d", 4, 0], ["x", 4, 4]]);
  // a: base only; b: method only; c: both; d: neither; e and x: evaluated by one side only, left out
  assertEquals(boundaryCounts(base, rl, 4), { refOnly: 1, methodOnly: 1, both: 1, neither: 1, problems: 4 });
});

Deno.test("boundaryCounts: at k < n the expected counts from pass@k, summing to the problem count", () => {
  // pass@2 of (n=4, c=1) = 1 − C(3,2)/C(4,2) = 1/2; of (4, 2) = 1 − 1/6 = 5/6
  const r = boundaryCounts(counts([["a", 4, 1]]), counts([["a", 4, 2]]), 2);
  assertClose(r.refOnly, 0.5 * (1 / 6), 1e-12);
  assertClose(r.methodOnly, 0.5 * (5 / 6), 1e-12);
  assertClose(r.both, 0.5 * (5 / 6), 1e-12);
  assertClose(r.neither, 0.5 * (1 / 6), 1e-12);
  throws(() => boundaryCounts(counts([["a", 4, 1]]), counts([["a", 4, 2]]), 5), /k/);
});

/** A pass@k row of one run (only the fields the boundary reads matter). */
function row(method: string, seed: number, step: number, list: [string, number, number][]): PassKRow {
  const c = counts(list);
  return {
    method,
    base: 0,
    seed,
    dataset: "d",
    slice: "all",
    step,
    k: 1,
    passAtK: 0,
    lo: 0,
    hi: 0,
    n: Math.min(...list.map((x) => x[1])),
    problems: list.length,
    perProblem: new Map(),
    counts: c,
  };
}

Deno.test("boundaryRows: each seed's final step against its own step 0, ACE against its baseline by seed", () => {
  const rows = [
    // grpo seed 0: base solves a, b; final solves b, c → base only 1, method only 1, both 1, neither 0
    row("grpo", 0, 0, [["a", 2, 1], ["b", 2, 2], ["c", 2, 0]]),
    row("grpo", 0, 5, [["a", 2, 0], ["b", 2, 1], ["c", 2, 2]]),
    // grpo seed 1: base solves a; final solves a, b, c → 0, 2, 1, 0
    row("grpo", 1, 0, [["a", 2, 1], ["b", 2, 0], ["c", 2, 0]]),
    row("grpo", 1, 5, [["a", 2, 1], ["b", 2, 1], ["c", 2, 1]]),
    // ace seed 0 final solves a, b, c; seed 1 (no pair with step 0: only final) solves none
    row("ace", 0, 0, [["a", 2, 1], ["b", 2, 2], ["c", 2, 0]]),
    row("ace", 0, 5, [["a", 2, 2], ["b", 2, 2], ["c", 2, 2]]),
    row("ace", 1, 5, [["a", 2, 0], ["b", 2, 0], ["c", 2, 0]]),
    { ...row("grpo", 0, 5, [["a", 2, 2]]), slice: "level=1" }, // other slices are ignored
  ];
  const out = boundaryRows(rows, [{ dataset: "d", a: "grpo", b: "ace" }], "base");
  assertEquals(out.map((r) => [r.method, r.reference, r.units, r.k, r.problems]), [
    ["grpo", "base", 2, 2, 3],
    ["ace", "base", 1, 2, 3],
    ["ace", "grpo", 2, 2, 3],
  ]);
  const g = out[0];
  assertEquals(g.mean, { refOnly: 0.5, methodOnly: 1.5, both: 1, neither: 0 });
  const half = tQuantile(0.975, 1) * (Math.SQRT2 / 2) / Math.SQRT2; // sd of (1, 0) is √2/2, 2 units
  assertClose(g.lo.refOnly, 0.5 - half, 1e-12);
  assertClose(g.hi.methodOnly, 1.5 + half, 1e-12);
  assertEquals(g.lo.both, 1); // both units agree: zero width
  ok(Number.isNaN(out[1].lo.both), "one unit: no interval");
  // ace vs grpo: seed 0: grpo {b, c} vs ace {a, b, c} → 0, 1, 2, 0; seed 1: grpo {a, b, c} vs ace {} → 3, 0, 0, 0
  assertEquals(out[2].mean, { refOnly: 1.5, methodOnly: 0.5, both: 1, neither: 0 });
  const record = boundaryRecord(g);
  assertEquals(Object.keys(record), COLUMNS);
  assertEquals([record.reference_only, record.method_only, record.both_lo], [0.5, 1.5, 1]);
  assertEquals(boundaryRecord(out[1]).both_lo, "");
  const md = boundarySection(out, "d", "base", true).join("\n");
  ok(md.includes("| grpo | base | 2 | 0.5 [0.0, ") && md.includes("holds for that base only"), md);
  ok(md.includes("ACE against its baseline") && md.includes("| ace | grpo | 2 | 1.5 ["), md);
  assertEquals(boundarySection(out, "other", "base", true), []);
});

Deno.test("report: the fixture sweep's summary and boundary.csv carry the boundary table", async () => {
  const report = await buildReport(fixture, { iters: 200 });
  ok(report.boundary.length > 0, "boundary rows");
  ok(report.summary.includes("reasoning boundary at the largest k"), "summary section");
  const header = report.boundaryCsv.split("\n")[0];
  assertEquals(header, COLUMNS.join(","));
  for (const r of report.boundary) {
    const total = r.mean.refOnly + r.mean.methodOnly + r.mean.both + r.mean.neither;
    assertClose(total, r.problems, 1e-9, `${r.method} vs ${r.reference}`);
  }
});
