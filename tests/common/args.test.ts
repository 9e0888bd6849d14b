import { assertEquals, ok, throws } from "../assert.ts";
import {
  bool,
  flagLines,
  type FlagTable,
  HelpRequested,
  list,
  num,
  parseTable,
  str,
  UsageError,
} from "../../common/args.ts";

const FLAGS = {
  runs: num("how many runs", { default: 3, min: 1, max: 10 }),
  mode: str("M", "the mode", { choices: ["a", "b"] }),
  ks: list("k values"),
  quiet: bool("say less"),
  tag: str("VALUE", "a tag (repeatable)", { multiple: true }),
} as const satisfies FlagTable;

// The values' types follow the table: a default or a boolean is never undefined; choices narrow a string.
const typed: {
  runs: number;
  mode: "a" | "b" | undefined;
  ks: number[] | undefined;
  quiet: boolean;
  tag: string[];
} = parseTable([], FLAGS).values;

Deno.test("flag table: defaults filled, values typed and checked; each bad value names its flag", () => {
  const none = parseTable([], FLAGS);
  assertEquals(typed.runs, 3);
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
