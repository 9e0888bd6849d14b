// Command-line flags through node:util parseArgs (the one place to swap in @std/cli later).
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";

/** A bad invocation: the CLI prints the message and where to find the usage, then exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Options as accepted by node:util parseArgs. */
export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parse flags strictly; `--help` is always accepted; unknown flags, missing or empty values raise UsageError
 * naming the flag. A negative number after a string flag (`--seed -1`) is taken as its value, so the flag's own
 * range check rejects it with its message (parseArgs alone calls it "ambiguous").
 */
export function parseFlags(args: string[], options: FlagSpec, allowPositionals = true) {
  const joined = joinNegativeValues(args, options);
  let parsed;
  try {
    parsed = nodeParseArgs({
      args: joined,
      options: { help: { type: "boolean", short: "h" }, ...options },
      allowPositionals,
      strict: true,
    });
  } catch (e) {
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
  for (const [name, value] of Object.entries(parsed.values)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === "string" && v.trim() === "")) {
      throw new UsageError(`--${name}: the value is empty`);
    }
  }
  return parsed;
}

/** `--flag -3` → `--flag=-3` for string flags followed by a negative number (anything else is left alone). */
function joinNegativeValues(args: readonly string[], options: FlagSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith("--") ? args[i].slice(2) : null;
    const next = args[i + 1];
    if (name !== null && options[name]?.type === "string" && next !== undefined && /^-\d|^-\.\d/.test(next)) {
      out.push(`${args[i]}=${next}`);
      i++;
    } else {
      out.push(args[i]);
    }
  }
  return out;
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
