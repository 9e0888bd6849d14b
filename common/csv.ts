// CSV in and out through csv-stringify / csv-parse (the one place to swap in @std/csv later).
import { stringify } from "csv-stringify/sync";
import { parse } from "csv-parse/sync";

/** Serialise rows of objects to CSV with a header in the given column order. */
export function toCsv(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  return stringify(rows as Record<string, unknown>[], { header: true, columns: [...columns] });
}

/** Parse CSV text with a header row into objects of strings. */
export function fromCsv(text: string): Record<string, string>[] {
  return parse(text, { columns: true, skip_empty_lines: true, trim: true });
}
