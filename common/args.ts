// Command-line flags through node:util parseArgs (the one place to swap in @std/cli later).
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";

/** A bad invocation: the CLI prints the message and usage, then exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Options as accepted by node:util parseArgs. */
export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/** Parse flags strictly; `--help` is always accepted; unknown flags or missing values raise UsageError. */
export function parseFlags(args: string[], options: FlagSpec, allowPositionals = true) {
  try {
    return nodeParseArgs({
      args,
      options: { help: { type: "boolean", short: "h" }, ...options },
      allowPositionals,
      strict: true,
    });
  } catch (e) {
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
}

/** Parse a comma-separated list of positive integers, e.g. "1,2,4"; the error names the flag. */
export function parseIntList(text: string, flag: string): number[] {
  const out = text.split(",").map((s) => Number(s.trim()));
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new UsageError(`--${flag}: expected comma-separated positive integers, got '${text}'`);
  }
  return out;
}

/** Parse a number flag within [min, max]; the error names the flag. */
export function parseNumber(
  text: string | undefined,
  flag: string,
  fallback: number,
  min = -Infinity,
  max = Infinity,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`--${flag}: expected a number in [${min}, ${max}], got '${text}'`);
  }
  return n;
}
