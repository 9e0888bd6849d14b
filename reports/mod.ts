/** Public API of reports/: Pass@k tables, summary.md, SVG plots, sweep comparisons and regression checks. */
export {
  type EvalSample,
  loadSweep,
  type MetricRow,
  type RunAce,
  type RunData,
  type SweepData,
  usableRuns,
} from "./load.ts";
export {
  type AggregateCell,
  aggregateSeeds,
  csvRecord,
  finalRows,
  type IntervalKind,
  type PassKRow,
  passKRows,
  reportedKs,
  runPassK,
  seedProblemMatrix,
} from "./passk.ts";
export {
  aceComparisons,
  baselineOf as aceBaselineOf,
  type Comparison,
  comparisonSentence,
  type ComparisonView,
  type DiffCell,
  pairedDiff,
  requestedComparisons,
} from "./compare.ts";
export { renderSummary, type SummaryInput } from "./summary.ts";
export {
  BEFORE_RL,
  type CellModel,
  cellsCsv,
  type ComparisonModel,
  type ComponentsModel,
  type DesignModel,
  DIFFERENCE_COLUMNS,
  type DifferenceModel,
  differencesCsv,
  type ModelInput,
  parseSummary,
  SUMMARY_SCHEMA,
  SUMMARY_VERSION,
  summaryJson,
  type SummaryModel,
  summaryModel,
} from "./summary_model.ts";
export {
  BASE_CURVE,
  diffSpec,
  doseSpec,
  passKSpec,
  type ReferenceCurve,
  renderSvg,
  TRAINING_METRICS,
  trainingSpec,
} from "./plots.ts";
export { blockingIssues, type DataIssue, dataIssues, issueLines } from "./completeness.ts";
export { chanceLine, mddCell, nearCeiling } from "./caveats.ts";
export {
  type BoundaryCounts,
  boundaryCounts,
  boundaryRecord,
  type BoundaryRow,
  boundaryRows,
  boundarySection,
} from "./boundary.ts";
export {
  buildReport,
  compareSweeps,
  type ExtraColumn,
  type ReportOptions,
  type SweepReport,
  writeReport,
  writeReportChecked,
} from "./report.ts";
export {
  type Baseline,
  type BaselineCell,
  baselineCells,
  baselineOf,
  compareToBaseline,
  describeRegressions,
  readBaseline,
  type RegressionCell,
  writeBaseline,
} from "./regress.ts";
export { checkIngested, ingestPending, pendingIngest } from "./ingest.ts";
export { rankingSection } from "./ranking.ts";
export {
  ACEBENCH_GRADER,
  protocolDifferences,
  protocolSettings,
  readReferences,
  REFERENCE_COLUMNS,
  referenceCurves,
  type ReferenceRow,
  referenceSection,
  referencesFor,
  runProtocol,
  sameDataset,
} from "./references.ts";
export {
  BASE_SIDE,
  checkClaims,
  type Claim,
  CLAIMS,
  type ControlResult,
  controlsSection,
  type Outcome,
  outcomeOf,
} from "./controls.ts";
export {
  type DoseResult,
  doseResults,
  doseSection,
  type DoseVariant,
  doseVariants,
  type SlopeInterval,
  slopeInterval,
  slopeWeights,
} from "./dose.ts";
export { suiteCell, type SuiteInput, type SuiteSet, writeSuiteReport } from "./suite.ts";
