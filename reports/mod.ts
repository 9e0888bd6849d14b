/** Public API of reports/: Pass@k tables, summary.md, SVG plots, sweep comparisons and regression checks. */
export { type EvalSample, loadSweep, type RunData } from "./load.ts";
export {
  type AggregateCell,
  aggregateSeeds,
  finalRows,
  type PassKRow,
  passKRows,
  reportedKs,
} from "./passk.ts";
export { aceComparisons, type Comparison, comparisonSentence, type DiffCell } from "./compare.ts";
export { renderSummary, type SummaryInput } from "./summary.ts";
export {
  DIFFERENCE_COLUMNS,
  parseSummary,
  SUMMARY_SCHEMA,
  summaryJson,
  type SummaryModel,
} from "./summary_model.ts";
export { diffSpec, passKSpec, renderSvg, trainingSpec } from "./plots.ts";
export { blockingIssues, type DataIssue, dataIssues, issueLines } from "./completeness.ts";
export { chanceLine, mddCell, nearCeiling } from "./caveats.ts";
export { boundaryCounts, boundaryRecord, boundaryRows, boundarySection } from "./boundary.ts";
export { buildReport, compareSweeps, type ExtraColumn, writeReport } from "./report.ts";
export {
  type Baseline,
  baselineCells,
  baselineOf,
  compareToBaseline,
  describeRegressions,
  readBaseline,
} from "./regress.ts";
export { checkIngested, ingestPending, pendingIngest } from "./ingest.ts";
export { rankingSection } from "./ranking.ts";
export {
  protocolDifferences,
  readReferences,
  referenceCurves,
  referenceSection,
  referencesFor,
  runProtocol,
} from "./references.ts";
export { BASE_SIDE, checkClaims, type Claim, CLAIMS, type Outcome, outcomeOf } from "./controls.ts";
export { doseVariants, slopeInterval, slopeWeights } from "./dose.ts";
export { suiteCell, type SuiteInput, type SuiteSet, writeSuiteReport } from "./suite.ts";
