import { assertEquals, ok, throws } from "../assert.ts";
import { flagLines, type FlagTable, HelpRequested, parseTable, UsageError } from "../../common/args.ts";

const FLAGS = {
  runs: { type: "number", default: 3, min: 1, max: 10, help: "how many runs" },
  mode: { type: "string", value: "M", choices: ["a", "b"], help: "the mode" },
  ks: { type: "list", value: "LIST", help: "k values" },
  quiet: { type: "boolean", help: "say less" },
  tag: { type: "string", multiple: true, help: "a tag (repeatable)" },
} as const satisfies FlagTable;

Deno.test("flag table: defaults filled, values typed and checked; each bad value names its flag", () => {
  const none = parseTable([], FLAGS);
  assertEquals(none.values, { runs: 3, mode: undefined, ks: undefined, quiet: false, tag: [] });
  const some = parseTable([
    "--runs",
    "5",
    "--mode",
    "b",
    "--ks",
    "1,4",
    "--quiet",
    "--tag",
    "x",
    "--tag",
    "y",
  ], FLAGS);
  assertEquals(some.values, { runs: 5, mode: "b", ks: [1, 4], quiet: true, tag: ["x", "y"] });
  throws(() => parseTable(["--runs", "5", "--help"], FLAGS), (e: Error) => e instanceof HelpRequested);
  const refused = (args: string[], pattern: RegExp) =>
    throws(() => parseTable(args, FLAGS), (e: Error) => e instanceof UsageError && pattern.test(e.message));
  refused(["--runs", "11"], /^--runs: expected a number in \[1, 10\], got '11'$/);
  refused(["--mode", "c"], /^--mode: expected one of a, b, got 'c'$/);
  refused(["--ks", "0"], /^--ks: expected comma-separated positive integers/);
  refused(["--colour", "red"], /colour/);
});

Deno.test("flag table: --help lines show the placeholder, choices and default, long help wrapped under itself", () => {
  const text = flagLines(FLAGS, 40);
  ok(text.includes("  --runs N     how many runs (default 3)"), text);
  ok(text.includes("  --mode M     the mode: a | b"), text);
  ok(text.split("\n").every((l) => l.length <= 40), text);
  const long = { x: { type: "boolean", help: "one two three four five six seven eight nine ten" } } as const;
  assertEquals(flagLines(long, 30), "  --x  one two three four five\n       six seven eight nine ten");
});
