/** Public API of evaluators/: the math-answer grader, batch grading, Pass@k and its statistics. */
export {
  grade,
  type GradeExplanation,
  type GradeOptions,
  type GradeResult,
  type GradeStatus,
  isEquivalent,
  type Verdict,
  verdictOf,
} from "./grade.ts";
export {
  GRADE_TIMEOUT_MS,
  gradeMany,
  type GradeManyItem,
  type GradeManyOptions,
  GraderPool,
} from "./pool.ts";
export { extractAnswer, type Extraction, EXTRACTION_RULES, type ExtractionRule } from "./extract.ts";
export { NORMALIZE_RULES, type NormalizeRule } from "./normalize.ts";
export { type Form, FORMS, type Value } from "./forms.ts";
export { type AnswerComparison, COMPARISONS } from "./compare.ts";
export { graderVersion } from "./version.ts";
export { majAtK, type MajResult } from "./majority.ts";
export { meanAtN, passAtK, passAtKVariance } from "./passk.ts";
export {
  bootstrapCI,
  type CrossedComponents,
  crossedComponents,
  type CrossedInterval,
  crossedInterval,
  type CrossedTerms,
  crossedVariance,
  holm,
  type Interval,
  mddInterval,
  median,
  minDetectable,
  type NestedComponents,
  type NestedInterval,
  nestedInterval,
  nestedTerms,
  passAtKVarianceUnbiased,
  percentileSorted,
  quantile,
  seedAggregate,
  tCdf,
  tCritical,
  termsPValue,
  termsVariance,
  tQuantile,
  varianceInterval,
} from "./stats.ts";
