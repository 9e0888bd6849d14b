// The ranking section: methods ordered by mean at k = 1 and at the largest k, the base row left out.
import { type AggregateCell, rankingSection } from "../../reports/mod.ts";
import { assertEquals, ok } from "../assert.ts";

function cell(method: string, k: number, mean: number): AggregateCell {
  return { method, k, mean, lo: mean - 0.01, hi: mean + 0.01, dataset: "d", slice: "all" } as AggregateCell;
}

Deno.test("ranking: by mean Pass@1 and Pass@kmax, without the step-0 row; none for two methods", () => {
  const cells = [
    cell("base", 1, 0.9),
    cell("a", 1, 0.5),
    cell("b", 1, 0.7),
    cell("c", 1, 0.6),
    cell("a", 8, 0.9),
    cell("b", 8, 0.8),
    cell("c", 8, 0.85),
  ];
  const md = rankingSection(cells, "d", "base");
  const rows = md.filter((l) => /^\| \d/.test(l));
  assertEquals(rows, [
    "| 1 | b | 0.700 [0.690, 0.710] | a | 0.900 [0.890, 0.910] |",
    "| 2 | c | 0.600 [0.590, 0.610] | c | 0.850 [0.840, 0.860] |",
    "| 3 | a | 0.500 [0.490, 0.510] | b | 0.800 [0.790, 0.810] |",
  ]);
  ok(
    md[0] === "### d: methods ranked" &&
      md.some((l) => l.includes("| rank | method | Pass@1 | method | Pass@8 |")),
  );
  assertEquals(rankingSection(cells.filter((c) => c.method !== "c"), "d", "base"), []);
});
