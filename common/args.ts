// Command-line flags through node:util parseArgs (the one place to swap in @std/cli later).
import { parseArgs, type ParseArgsConfig } from "node:util";

/** A bad invocation: the CLI prints the message and where to find the usage, then exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** `--help` was given: whoever dispatched the command (cli.ts, bench/perf/cli.ts) prints its usage, exit 0. */
export class HelpRequested extends Error {
  constructor() {
    super("--help");
    this.name = "HelpRequested";
  }
}

/** Quote a word for POSIX sh (single quotes; embedded ones as '\''); plain words stay bare for readability. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Options as accepted by node:util parseArgs. */
type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

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

/** A flag's string value as its type: a number within [min, max] (an integer if asked), a list, a choice. */
function typedValue(name: string, f: Flag, v: string): unknown {
  if (f.type === "number") {
    const n = Number(v);
    const [min, max] = [f.min ?? -Infinity, f.max ?? Infinity];
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new UsageError(`--${name}: expected a number in [${min}, ${max}], got '${v}'`);
    }
    if (f.integer && !Number.isInteger(n)) throw new UsageError(`--${name}: expected an integer, got ${v}`);
    return n;
  }
  if (f.type === "list") {
    const out = v.split(",").map((s) => Number(s.trim()));
    if (out.some((n) => !Number.isInteger(n) || n < 1)) {
      throw new UsageError(`--${name}: expected comma-separated positive integers, got '${v}'`);
    }
    return out;
  }
  if (f.choices && !f.choices.includes(v)) {
    throw new UsageError(`--${name}: expected one of ${f.choices.join(", ")}, got '${v}'`);
  }
  return v;
}

/**
 * One flag of a command's table, declared once for parsing, `--help` and validation: its type (`list`: comma-
 * separated positive integers), help line, placeholder in the usage, default (filled in when absent), a number's
 * range (and `integer`), a string's choices; `multiple` makes a string flag repeatable.
 */
export interface Flag {
  type: "boolean" | "string" | "number" | "list";
  help: string;
  value?: string;
  default?: string | number | boolean | readonly number[];
  min?: number;
  max?: number;
  integer?: boolean;
  choices?: readonly string[];
  multiple?: boolean;
}

/** What a flag may add to its type and help (see Flag). */
type Extra = Omit<Flag, "type" | "help">;

/** A boolean flag (false when absent). */
export const bool = (help: string) => ({ type: "boolean", help }) as const;

/** A string flag shown as `value` in the usage. */
export const str = <const O extends Extra = Record<never, never>>(value: string, help: string, o?: O) =>
  ({ type: "string", value, help, ...o }) as { type: "string"; value: string; help: string } & O;

/** A number flag (`integer`, `min`, `max`, `default` in `o`). */
export const num = <const O extends Extra = Record<never, never>>(help: string, o?: O) =>
  ({ type: "number", help, ...o }) as { type: "number"; help: string } & O;

/** An integer flag (`min`, `max`, `default` in `o`). */
export const int = <const O extends Extra = Record<never, never>>(help: string, o?: O) =>
  ({ type: "number", integer: true, help, ...o }) as { type: "number"; integer: true; help: string } & O;

/** A comma-separated list of positive integers. */
export const list = <const O extends Extra = Record<never, never>>(help: string, o?: O) =>
  ({ type: "list", value: "LIST", help, ...o }) as { type: "list"; help: string } & O;

/** A command's flags by name (without the leading "--"). */
export type FlagTable = Record<string, Flag>;

type ValueOf<F extends Flag> = F["type"] extends "boolean" ? boolean
  : F["type"] extends "number" ? number
  : F["type"] extends "list" ? number[]
  : F extends { multiple: true } ? string[]
  : F extends { choices: readonly (infer C)[] } ? C
  : string;

/** Parsed values: a flag with a default (booleans and repeatable flags always) is never undefined. */
export type FlagValues<T extends FlagTable> = {
  [K in keyof T]: T[K] extends { default: unknown } | { type: "boolean" } | { multiple: true } ? ValueOf<T[K]>
    : ValueOf<T[K]> | undefined;
};

/** The flag lines of a usage text: "  --name VALUE  help (default: d)", long help wrapped under itself. */
export function flagLines(table: FlagTable, width = 110): string {
  const heads = Object.entries(table).map(([name, f]) =>
    `  --${name}${f.type === "boolean" ? "" : ` ${f.value ?? (f.type === "string" ? "VALUE" : "N")}`}`
  );
  const pad = Math.min(24, Math.max(...heads.map((h) => h.length)) + 2);
  return Object.values(table).map((f, i) => {
    const shown = f.default === undefined || f.type === "boolean" ? "" : ` (default ${f.default})`;
    const words = `${f.help}${f.choices ? `: ${f.choices.join(" | ")}` : ""}${shown}`.split(" ");
    const lines = [heads[i].length >= pad ? `${heads[i]} ` : heads[i].padEnd(pad)];
    for (const w of words) {
      if (lines.at(-1)!.length + w.length > width && lines.at(-1)!.trim() !== "") lines.push(" ".repeat(pad));
      lines[lines.length - 1] += (/\S$/.test(lines.at(-1)!) ? " " : "") + w;
    }
    return lines.join("\n");
  }).join("\n");
}

/**
 * Parse `args` by `table` (node:util parseArgs underneath; `--help` always accepted): numbers checked against their range,
 * lists and choices checked, defaults filled in; every error a UsageError naming the flag; `--help` throws
 * HelpRequested.
 */
export function parseTable<T extends FlagTable>(
  args: string[],
  table: T,
  allowPositionals = false,
): { values: FlagValues<T>; positionals: string[] } {
  const spec: FlagSpec = Object.fromEntries(
    Object.entries(table).map(([name, f]) => [
      name,
      f.type === "boolean"
        ? { type: "boolean" }
        : { type: "string", ...(f.multiple ? { multiple: true } : {}) },
    ]),
  );
  // Strict: unknown flags and missing values are errors; a negative number after a string flag (`--seed -1`)
  // is its value, so the flag's own range check rejects it with its message (parseArgs calls it "ambiguous").
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(args, spec),
      options: { help: { type: "boolean", short: "h" }, ...spec },
      allowPositionals,
      strict: true,
    });
  } catch (e) {
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
  const raw = parsed.values as Record<string, string | string[] | boolean | undefined>;
  if (raw.help === true) throw new HelpRequested();
  const values: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(table)) {
    const v = raw[name];
    if ([v].flat().some((x) => typeof x === "string" && x.trim() === "")) {
      throw new UsageError(`--${name}: the value is empty`);
    }
    if (f.type === "boolean") values[name] = v === true;
    else if (f.multiple) values[name] = (v as string[] | undefined) ?? [];
    else values[name] = v === undefined ? f.default : typedValue(name, f, v as string);
  }
  return { values: values as FlagValues<T>, positionals: parsed.positionals };
}
