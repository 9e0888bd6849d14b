// The grader's version: a hash of its ordered rule tables (names and code), so a record can say which grader
// made its verdicts and two protocols graded by different rules never compare as equal.
import { configHash } from "../common/hash.ts";
import { COMPARISONS } from "./compare.ts";
import { EXTRACTION_RULES } from "./extract.ts";
import { FORMS } from "./forms.ts";
import { NORMALIZE_RULES } from "./normalize.ts";

/** A table as plain data: each entry's name and the source text of its functions, in order. */
function tableText(table: readonly object[]): string[][] {
  return table.map((entry) =>
    Object.entries(entry).map(([k, v]) => `${k}=${typeof v === "function" ? String(v) : JSON.stringify(v)}`)
  );
}

let cached: string | null = null;

/**
 * 12-hex hash of EXTRACTION_RULES, NORMALIZE_RULES, FORMS and COMPARISONS (names, order and function source):
 * changes whenever a rule is added, removed, reordered or edited. Helpers a rule calls are not hashed.
 */
export function graderVersion(): string {
  cached ??= configHash({
    extraction: tableText(EXTRACTION_RULES),
    normalize: tableText(NORMALIZE_RULES),
    forms: tableText(FORMS),
    comparisons: tableText(COMPARISONS),
  });
  return cached;
}
