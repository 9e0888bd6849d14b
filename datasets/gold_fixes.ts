// Golds that no correct answer can match as published, found by the gold audit (evaluators/audit.ts, run by
// `deno task fetch`): per-dataset normalisers that repair a notation (applied to every record at fetch time, the
// published answer kept in meta.publishedAnswer), and the golds left unmatchable, each with the reason
// (docs/datasets.md, "Gold audit").
import type { MathRecord } from "./record.ts";

/** A repair of one notation in one dataset's golds: `fix` returns the answer unchanged where it does not apply. */
export interface GoldFix {
  name: string;
  about: string;
  fix(answer: string): string;
}

/** The normalisers, per dataset, in the order they run. */
export const GOLD_FIXES: Readonly<Record<string, readonly GoldFix[]>> = {
  minerva: [
    {
      name: "python_numpy",
      about: "a gold written as Python: np.arcsin(10/13) is \\arcsin(10/13)",
      fix: (a) => a.replace(/\bnp\.([a-z]+)\s*\(/g, "\\$1("),
    },
    {
      name: "stray_math_break",
      about:
        "a math span closed and reopened inside the gold: x_{0} \\cos(\\omega t)+$ $\\dot{x}_{0} … has no $ $",
      fix: (a) => a.replace(/\$\s*\$/g, " "),
    },
  ],
  olympiadbench: [
    {
      name: "variable_before_interval",
      about: "a stray variable glued before an interval: t(0,4] is (0,4]",
      fix: (a) => a.replace(/^\s*[a-z]\s*(?=[([][^()[\]]*,[^()[\]]*[)\]]\s*$)/, ""),
    },
  ],
};

/** Golds the audit fails that no normaliser repairs, by dataset and record id: why no correct answer matches. */
export const KNOWN_UNMATCHABLE: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  minerva: {
    "minerva/61": "I(0), the current at time 0, is read as the product I·0",
    "minerva/86": "I(0) e^{-t/(RC)}: I(0) is read as the product I·0",
    "minerva/72": "\\dot{x}_{0}, a time derivative written with a dot accent, is not read",
  },
  "dapo-math-17k": {
    "dapo/1000": "integer passed through a double: 105263157894736848 for 105263157894736842",
    "dapo/5195": "integer passed through a double: 105263157894736848 for 105263157894736842",
    "dapo/12110": "integer passed through a double: 22099999999999998951424 is 2.21e22 as a double",
  },
};

/** The gold after the dataset's normalisers, and the names of those that changed it. */
export function fixGold(dataset: string, answer: string): { answer: string; fixes: string[] } {
  const fixes: string[] = [];
  for (const f of GOLD_FIXES[dataset] ?? []) {
    const next = f.fix(answer);
    if (next !== answer) fixes.push(f.name);
    answer = next;
  }
  return { answer, fixes };
}

/** The grader's audit, passed in by the command layer (datasets/ does not import the grader): each gold no
 * correct answer can match, with why. */
export type AuditGolds = (
  golds: readonly { id: string; answer: string }[],
) => { id: string; answer: string; why: string }[];

/** What the audit of one dataset found (recorded in its manifest): failures listed as known or not. */
export type GoldAuditResult = ReturnType<typeof auditRecords>;

/** Run `audit` over a dataset's records and sort its failures into known-unmatchable and new ones. */
export function auditRecords(
  dataset: string,
  records: readonly MathRecord[],
  audit: AuditGolds,
) {
  const known = KNOWN_UNMATCHABLE[dataset] ?? {};
  const failures = audit(records);
  return {
    checked: records.length,
    fixed: records.filter((r) => Array.isArray(r.meta.goldFixes)).length,
    known: failures.filter((f) => f.id in known).map((f) => ({ ...f, why: known[f.id] })),
    failed: failures.filter((f) => !(f.id in known)),
  };
}
