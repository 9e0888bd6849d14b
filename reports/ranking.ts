// The methods of a sweep ranked by mean Pass@1 and mean Pass@k at the largest k, each with its 95% interval (bases
// × problems, seeds nested in bases; one base: seeds × problems, for that base only), so a baselines sweep reads
// as a leaderboard. The ranks order means; whether two neighbours differ beyond noise is what the paired comparisons (compare.ts) say, not overlapping intervals.
import { crossedName } from "./caveats.ts";
import type { AggregateCell } from "./passk.ts";
import { f3 } from "./format.ts";

/** One dataset's ranking section for summary.md (empty with fewer than three trained methods). */
export function rankingSection(cells: readonly AggregateCell[], dataset: string, baseLabel: string) {
  const mine = cells.filter((c) => c.dataset === dataset && c.slice === "all" && c.method !== baseLabel);
  const methods = [...new Set(mine.map((c) => c.method))];
  if (methods.length < 3) return [];
  const kMax = Math.max(...mine.map((c) => c.k));
  const ranked = (k: number) =>
    mine.filter((c) => c.k === k).sort((a, b) => b.mean - a.mean || a.method.localeCompare(b.method));
  const first = ranked(1), last = ranked(kMax);
  const overBases = mine.every((c) => c.scope === "bases");
  const cell = (c: AggregateCell | undefined) =>
    c ? `${c.method} | ${f3(c.mean)} [${f3(c.lo)}, ${f3(c.hi)}]` : "– | –";
  const rows = Array.from(
    { length: Math.max(first.length, last.length) },
    (_, i) => `| ${i + 1} | ${cell(first[i])} | ${cell(last[i])} |`,
  );
  return [
    `### ${dataset}: methods ranked`,
    "",
    `By mean over ${overBases ? "runs" : "seeds"} (${crossedName(overBases)}). Ranks order the means only: ` +
    "two methods differ beyond noise where their paired comparison's interval excludes 0, which overlapping " +
    "intervals do not decide.",
    "",
    `| rank | method | Pass@1 | method | Pass@${kMax} |`,
    "|---:|---|---:|---|---:|",
    ...rows,
    "",
  ];
}
