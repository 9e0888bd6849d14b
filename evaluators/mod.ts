/** Public API of evaluators/: the math-answer grader, batch grading, Pass@k and its statistics. */
export * from "./grade.ts";
export * from "./pool.ts";
export { extractAnswer, type Extraction, EXTRACTION_RULES, type ExtractionRule } from "./extract.ts";
export { NORMALIZE_RULES, type NormalizeRule } from "./normalize.ts";
export { type Form, FORMS, type Value } from "./forms.ts";
export { type AnswerComparison, COMPARISONS } from "./compare.ts";
export { graderVersion } from "./version.ts";
export * from "./majority.ts";
export * from "./passk.ts";
export * from "./stats.ts";
