// The gold audit at fetch time over the mirror's files (every registered dataset): each gold's canonical
// rendering must grade correct against it, or the gold is repaired by a normaliser of datasets/gold_fixes.ts or
// listed there as known-unmatchable. Skips with a message when the mirror is absent ($ACEBENCH_DATASET_MIRROR).
import { assertEquals, ok, rejects } from "../assert.ts";
import { fetchDataset } from "../../datasets/fetch.ts";
import { FETCHABLE } from "../../datasets/sources.ts";
import { fixGold, GOLD_FIXES, KNOWN_UNMATCHABLE } from "../../datasets/gold_fixes.ts";
import { auditGolds } from "../../evaluators/audit.ts";
import { main as datasetsMain } from "../../datasets/cli.ts";
import { main as fetchMain } from "../../commands/fetch.ts";
import { UsageError } from "../../common/args.ts";
import { HAVE_SHARED, SHARED, tempDir } from "./helpers.ts";
import { missing, skipping } from "../external_inputs.ts";

skipping("the gold audit over the mirror", HAVE_SHARED ? null : missing("datasetMirror"));

Deno.test("gold fixes: each normaliser repairs its example and leaves a sound gold alone", () => {
  assertEquals(fixGold("minerva", "np.arcsin(10/13)"), {
    answer: "\\arcsin(10/13)",
    fixes: ["python_numpy"],
  });
  assertEquals(fixGold("minerva", "x_0 \\cos t+$ $y").answer, "x_0 \\cos t+ y");
  assertEquals(fixGold("olympiadbench", "t(0,4]"), { answer: "(0,4]", fixes: ["variable_before_interval"] });
  assertEquals(fixGold("olympiadbench", "f(0,4)").fixes, ["variable_before_interval"]);
  for (const sound of ["(0,4]", "\\frac{1}{2}", "x(x+1)", "(1, 2, 3)"]) {
    for (const dataset of Object.keys(GOLD_FIXES)) assertEquals(fixGold(dataset, sound).fixes, [], sound);
  }
});

Deno.test("gold audit: the published golds the normalisers repair fail it, the repaired ones pass", () => {
  const failing = auditGolds([
    { id: "a", answer: "np.arcsin(10/13)" },
    { id: "b", answer: "t(0,4]" },
    { id: "c", answer: "\\arcsin(10/13)" },
    { id: "d", answer: "(0,4]" },
  ]);
  assertEquals(failing.map((f) => f.id), ["a", "b"]);
});

Deno.test({
  name:
    "gold audit over the mirror: every dataset fetched, no gold failing beyond the known-unmatchable list",
  ignore: !HAVE_SHARED,
  async fn() {
    const cacheDir = tempDir();
    const lines: string[] = [];
    for (const dataset of FETCHABLE) {
      const { manifest } = await fetchDataset(dataset, {
        cacheDir,
        mirror: SHARED,
        auditGolds,
        log: (l) => lines.push(l),
      });
      const audit = manifest.audit!;
      ok(
        audit.checked === manifest.rows.kept,
        `${dataset}: audited ${audit.checked} of ${manifest.rows.kept}`,
      );
      assertEquals(audit.failed, [], `${dataset}: failing golds (fix in datasets/gold_fixes.ts)`);
      // Every listed gold still fails: a list entry the grader now reads must be removed.
      const listed = Object.keys(KNOWN_UNMATCHABLE[dataset] ?? {}).sort();
      assertEquals(
        audit.known.map((k) => k.id).sort(),
        listed,
        `${dataset}: stale known-unmatchable entries`,
      );
    }
    ok(lines.filter((l) => l.includes("gold audit:")).length === FETCHABLE.length, lines.join("\n"));
    // The commands: --check audits the cache again (exit 0: nothing failing), --list shows the counts.
    const printed: string[] = [];
    const log = console.log;
    console.log = (...a: unknown[]) => printed.push(a.join(" "));
    try {
      assertEquals(await fetchMain(["--check", "minerva", "--cache-dir", cacheDir]), 0);
      assertEquals(await fetchMain(["--list", "--cache-dir", cacheDir]), 0);
    } finally {
      console.log = log;
    }
    const out = printed.join("\n");
    ok(
      out.includes(
        "minerva: gold audit: 272 checked, 2 repaired by a normaliser, 3 known unmatchable, 0 failing",
      ),
      out,
    );
    ok(out.includes("known  minerva/61"), out);
    ok(/minerva .* 0 failing, 3 known, 2 repaired/.test(out), out);
  },
});

Deno.test("fetch --check without the grader (datasets/cli.ts alone) is a usage error", async () => {
  await rejects(() => datasetsMain(["--check", "--cache-dir", tempDir()]), UsageError);
});
