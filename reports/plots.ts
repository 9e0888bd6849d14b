// SVG plots through vega-lite → vega (headless, renderer "none"): Pass@k over k per method beside the base curve
// (step 0) with intervals, ACE minus baseline over k with its crossed interval and significant k marked, and
// training curves (accuracy, KL, entropy, overconfident-error fraction and mean c): median and band over runs.
import { toCsv } from "../common/csv.ts";
import { quantile } from "../evaluators/mod.ts";
import * as vega from "vega";
import * as vl from "vega-lite";
import type { CalibrationPoint } from "./calibration.ts";
import type { Comparison } from "./compare.ts";
import type { DoseResult } from "./dose.ts";
import type { RunData } from "./load.ts";
import type { AggregateCell } from "./passk.ts";
import type { referenceCurves } from "./references.ts";
import { BEFORE_RL } from "./summary_model.ts";
import { r6, signed } from "./format.ts";

/** Render a vega-lite spec to an SVG string. */
export async function renderSvg(spec: vl.TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** A y-domain around the plotted values with a small margin, inside [lo, hi] (vega's default starts at 0). */
function domainOf(values: readonly number[], lo: number, hi: number): [number, number] {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return [lo, hi];
  const min = Math.min(...finite), max = Math.max(...finite);
  const pad = Math.max(0.02, 0.08 * (max - min));
  return [Math.max(lo, min - pad), Math.min(hi, max + pad)];
}

/** The interval's caption: over bases × problems, or over seeds × problems for one base model only. */
function intervalCaption(cells: readonly { scope: "bases" | "one base" }[]): string[] {
  return cells.length > 0 && cells.every((c) => c.scope === "bases")
    ? ["95% crossed bases × problems interval", "(seeds nested in bases)"]
    : ["95% crossed seeds × problems interval,", "for this base model only"];
}

/** The Pass@k plot's caption; for one run per curve (an eval, a one-seed sweep) over problems only. */
function passKCaption(cells: readonly Pick<AggregateCell, "scope" | "interval">[]): string[] {
  return cells.length > 0 && cells.every((c) => c.interval === "one seed")
    ? ["mean over problems; bands: 95% interval", "over problems, for this model only"]
    : ["mean over runs; bands:", ...intervalCaption(cells)];
}

/** The log₂ k axis shared by the Pass@k and difference plots. */
function kAxis(ks: number[]) {
  return {
    field: "k",
    type: "quantitative" as const,
    title: "k (log scale)",
    scale: { type: "log" as const, base: 2, domain: [ks[0], ks[ks.length - 1]] },
    axis: { values: ks, format: "d" },
  };
}

// Titles are short lines: the headless renderer over-estimates text width, and a title wider than the panels
// widens the canvas and leaves it blank on the right.
/** Legend label of each panel's own method curve (its name is the panel's title). */
const METHOD_CURVE = "method (panel title)";
/** Panels per row of the faceted plots. */
const COLUMNS = 4;
/** Facet headers print names in full (vega-lite cuts long labels by default). */
const HEADER = { labelLimit: 0, labelFontSize: 12, labelFontWeight: "bold" as const, title: null };

/** A cell's interval for a band; an undefined one (one seed and one problem) collapses onto the mean. */
function bandOf(c: { mean: number; lo: number; hi: number }) {
  return { lo: Number.isFinite(c.lo) ? c.lo : c.mean, hi: Number.isFinite(c.hi) ? c.hi : c.mean };
}

/** A legend of line strokes with labels in full, at `orient`, laid out by `layout`. */
function lineLegend(orient: "top" | "bottom", layout: Record<string, unknown>) {
  return { orient, labelLimit: 0, symbolType: "stroke", symbolStrokeWidth: 3, symbolOpacity: 1, ...layout };
}

/** A colour encoding of `field` giving each of `domain` a `palette` entry in turn, untitled. */
function cycledColor(
  field: string,
  domain: string[],
  legend: Record<string, unknown>,
  palette = METHOD_COLORS,
) {
  const range = domain.map((_, i) => palette[i % palette.length]);
  return { field, type: "nominal" as const, title: null, scale: { domain, range }, legend };
}

/** The frame every panelled plot shares: titled, faceted on `panel` in `panels` order, up to COLUMNS a row. */
function faceted(
  text: string,
  subtitle: string[],
  values: object[],
  panels: string[],
  spec: { layer: unknown[]; [key: string]: unknown },
  field = "panel",
): vl.TopLevelSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text, subtitle, anchor: "start" },
    data: { values },
    facet: { field, type: "nominal", header: HEADER, sort: panels },
    columns: Math.min(COLUMNS, panels.length),
    spec,
    resolve: { axis: { x: "independent", y: "independent" } },
  } as vl.TopLevelSpec;
}

/**
 * Pass@k over k (log₂ axis) on one dataset, one panel per trained method (full name as its header): the method's
 * mean over seeds with its 95% interval as a light band with outlined edges, and on every panel the policy before
 * RL (`baseLabel` cells: step 0) in black dashes with its own band, plus any published reference points. The
 * y-range follows the data; a plot without a step-0 row shows the methods alone.
 */
export function passKSpec(
  cells: readonly AggregateCell[],
  dataset: string,
  baseLabel = BEFORE_RL,
  references: ReturnType<typeof referenceCurves> = [],
): vl.TopLevelSpec {
  const point = (c: AggregateCell) => ({ k: c.k, passAtK: c.mean, ...bandOf(c) });
  const mine = cells.filter((c) => c.dataset === dataset && c.slice === "all");
  const base = mine.filter((c) => c.method === baseLabel);
  const methods = [...new Set(mine.filter((c) => c.method !== baseLabel).map((c) => c.method))];
  const panels = methods.length ? methods : [baseLabel];
  const values = panels.flatMap((panel) => [
    ...mine.filter((c) => c.method === panel).map((c) => ({ panel, curve: METHOD_CURVE, ...point(c) })),
    ...(panel === baseLabel ? [] : base.map((c) => ({ panel, curve: baseLabel, ...point(c) }))),
    ...references.flatMap((r) =>
      r.points.map((p) => ({ panel, curve: r.label, k: p.k, passAtK: p.value, lo: p.value, hi: p.value }))
    ),
  ]);
  const ks = [...new Set(values.map((v) => v.k))].sort((a, b) => a - b);
  const domain = domainOf(values.flatMap((v) => [v.lo, v.hi]), 0, 1);
  const curves = [METHOD_CURVE, ...(base.length ? [baseLabel] : []), ...references.map((r) => r.label)];
  const palette = ["#1f77b4", "#000000", "#7f7f7f", "#bcbd22", "#8c564b", "#e377c2", "#17becf"];
  const color = cycledColor("curve", curves, lineLegend("top", { direction: "vertical" }), palette);
  const y = { field: "passAtK", type: "quantitative" as const, title: "pass@k", scale: { domain } };
  const band = (curve: string) => ({ filter: { field: "curve", equal: curve } });
  return faceted(`Pass@k on ${dataset}`, passKCaption(mine), values, panels, {
    width: 220,
    height: 170,
    encoding: { x: kAxis(ks), color },
    layer: [
      ...[baseLabel, METHOD_CURVE].flatMap((curve) => [
        {
          transform: [band(curve)],
          mark: { type: "area" as const, opacity: curve === baseLabel ? 0.08 : 0.12 },
          encoding: { y: { field: "lo", type: "quantitative" as const }, y2: { field: "hi" } },
        },
        ...["lo", "hi"].map((edge) => ({
          transform: [band(curve)],
          mark: { type: "line" as const, strokeWidth: 0.6, opacity: 0.6 },
          encoding: { y: { field: edge, type: "quantitative" as const } },
        })),
      ]),
      {
        transform: [band(baseLabel)],
        mark: { type: "line", strokeWidth: 1.8, strokeDash: [5, 3], point: { size: 18 } },
        encoding: { y },
      },
      {
        transform: [{ filter: { field: "curve", oneOf: references.map((r) => r.label) } }],
        mark: { type: "point", shape: "diamond", size: 70, filled: true, opacity: 0.9 },
        encoding: { y },
      },
      {
        transform: [band(METHOD_CURVE)],
        mark: { type: "line", strokeWidth: 2.2, point: { size: 22 } },
        encoding: { y },
      },
    ],
  });
}

/**
 * ACE minus its baseline over k (log₂ axis) on one dataset, one panel per comparison (wrapped, full names): the
 * mean difference (paired by seed and problem), its 95% crossed interval as a band, a zero line, and each k
 * marked filled when its interval excludes 0 (significant at 5%, two-sided), hollow otherwise.
 */
export function diffSpec(comparisons: readonly Comparison[], dataset: string): vl.TopLevelSpec {
  const SIG = "interval excludes 0", NOT = "interval includes 0";
  const values = comparisons.filter((c) => c.dataset === dataset).flatMap((c) =>
    c.cells.map((d) => ({
      comparison: `${c.b} − ${c.a}`,
      k: d.k,
      diff: d.mean,
      ...bandOf(d),
      significance: Number.isFinite(d.lo) && (d.lo > 0 || d.hi < 0) ? SIG : NOT,
    }))
  );
  const ks = [...new Set(values.map((v) => v.k))].sort((a, b) => a - b);
  const domain = domainOf([0, ...values.flatMap((v) => [v.lo, v.hi])], -1, 1);
  const panels = [...new Set(values.map((v) => v.comparison))];
  const y = { field: "diff", type: "quantitative" as const, title: "Δ pass@k", scale: { domain } };
  const subtitle = [
    "paired by base, seed and problem; band:",
    ...intervalCaption(comparisons.filter((c) => c.dataset === dataset).flatMap((c) => c.cells)),
  ];
  return faceted(`ACE − baseline on ${dataset}`, subtitle, values, panels, {
    width: 220,
    height: 150,
    encoding: { x: kAxis(ks) },
    layer: [
      {
        mark: { type: "area", opacity: 0.2, color: "#4c78a8" },
        encoding: { y: { field: "lo", type: "quantitative", scale: { domain } }, y2: { field: "hi" } },
      },
      { mark: { type: "line", color: "#4c78a8", strokeWidth: 2 }, encoding: { y } },
      {
        mark: { type: "rule", color: "black", strokeDash: [4, 3] },
        encoding: { y: { datum: 0, type: "quantitative" } },
      },
      {
        mark: { type: "point", size: 50, strokeWidth: 1.5, opacity: 1 },
        encoding: {
          y,
          fill: {
            field: "significance",
            type: "nominal",
            title: null,
            scale: { domain: [SIG, NOT], range: ["#4c78a8", "white"] },
            legend: { orient: "top", labelLimit: 0 },
          },
          stroke: { value: "#4c78a8" },
        },
      },
    ],
  }, "comparison");
}

/**
 * ACE's dose-response on one dataset: ΔPass@k (against the baseline, paired by base, seed and problem) over α, one
 * panel per k (1 and the largest), one line per confidence-shift variant with its 95% interval as a band, the
 * baseline's α = 0 at 0, a zero line, and each panel's slope per unit α with its interval in the legend label.
 */
export function doseSpec(results: readonly DoseResult[], dataset: string): vl.TopLevelSpec {
  const mine = results.filter((r) => r.dataset === dataset);
  const values = mine.flatMap((r) => {
    const slope = Number.isFinite(r.slope.lo)
      ? `slope ${signed(r.slope.mean)} [${signed(r.slope.lo)}, ${signed(r.slope.hi)}]`
      : `slope ${signed(r.slope.mean)}`;
    const line = `${r.variant.label}, k=${r.k}: ${slope}`;
    const at = { panel: `k = ${r.k}`, line, variant: r.variant.label };
    return [
      ...(r.variant.points.some((p) => p.alpha === 0 && p.method === r.variant.baseline)
        ? [{ ...at, alpha: 0, diff: 0, lo: 0, hi: 0 }]
        : []),
      ...r.deltas.map((d) => ({ ...at, alpha: d.alpha, diff: d.cell.mean, ...bandOf(d.cell) })),
    ];
  });
  const panels = [...new Set(mine.map((r) => `k = ${r.k}`))];
  const lines = [...new Set(values.map((v) => v.line))];
  const domain = domainOf([0, ...values.flatMap((v) => [v.lo, v.hi])], -1, 1);
  const color = cycledColor("line", lines, lineLegend("bottom", { direction: "vertical" }));
  const y = {
    field: "diff",
    type: "quantitative" as const,
    title: "Δ pass@k vs baseline",
    scale: { domain },
  };
  const subtitle = ["Δ against the baseline over α; band:", ...intervalCaption(mine.map((r) => r.slope))];
  return faceted(`ACE dose-response on ${dataset}`, subtitle, values, panels, {
    width: 240,
    height: 170,
    encoding: { x: { field: "alpha", type: "quantitative", title: "α" }, color },
    layer: deltaLayers(y, domain),
  });
}

/** The layers of a Δ-over-x panel: the interval as a band (lo–hi), the line with points, and the zero rule. */
function deltaLayers(y: Record<string, unknown>, domain: [number, number]) {
  return [
    {
      mark: { type: "area", opacity: 0.12 },
      encoding: { y: { field: "lo", type: "quantitative", scale: { domain } }, y2: { field: "hi" } },
    },
    { mark: { type: "line", strokeWidth: 2, point: { size: 30 } }, encoding: { y } },
    {
      mark: { type: "rule", color: "black", strokeDash: [4, 3] },
      encoding: { y: { datum: 0, type: "quantitative" } },
    },
  ];
}

/**
 * The calibration of the RL step: Pass@k after RL minus its step 0 over the step size (log scale), one line per
 * preset, at k = 1 and at the largest k, with the crossed interval as a band.
 */
export function calibrationSpec(points: readonly CalibrationPoint[], dataset: string): vl.TopLevelSpec {
  const mine = points.filter((p) => p.dataset === dataset);
  const values = mine.flatMap((p) =>
    [p.pass1, p.passMax].map((c) => ({
      panel: `k = ${c.k}`,
      preset: p.preset,
      lr: p.lr,
      diff: c.mean,
      ...bandOf(c),
    }))
  );
  const panels = [...new Set(values.map((v) => v.panel))];
  const presets = [...new Set(values.map((v) => v.preset))];
  const domain = domainOf([0, ...values.flatMap((v) => [v.lo, v.hi])], -1, 1);
  const y = { field: "diff", type: "quantitative" as const, title: "Δ pass@k vs step 0", scale: { domain } };
  const subtitle = ["Pass@k after RL − before, over lr; band:", ...intervalCaption(mine.map((p) => p.pass1))];
  return faceted(`RL step-size calibration on ${dataset}`, subtitle, values, panels, {
    width: 240,
    height: 170,
    encoding: {
      x: { field: "lr", type: "quantitative", title: "rl.lr (log scale)", scale: { type: "log" } },
      color: cycledColor("preset", presets, {
        orient: "bottom",
        direction: "horizontal",
        symbolType: "stroke",
        symbolStrokeWidth: 3,
      }),
    },
    layer: deltaLayers(y, domain),
  });
}

/**
 * Metrics plotted as training curves, with the label of each panel. Accuracy, not reward: rewards are 0/1 for
 * GRPO but ±1 for DAPO, so their curves are not comparable. c is ACE's confidence shift of a rollout,
 * c_i = Σ_t (log π_θ − log π_ref) over its response tokens (nats; `mean` aggregation: per token), logged for every
 * method; an overconfident error is an incorrect rollout with c > 0.
 */
const TRAINING_METRICS: Record<string, string> = {
  accuracy: "rollout accuracy (fraction correct)",
  kl: "KL to the reference (nats per token)",
  entropy: "entropy (nats per token)",
  clipfrac: "clip fraction (tokens whose ratio was clipped)",
  response_length: "response length (tokens)",
  ace_overconf_frac: "overconfident errors: fraction of incorrect rollouts with c > 0",
  ace_overconf_mean_c: "overconfident errors: mean c (nats)",
  ace_multiplier: "ACE's mean multiplier A'/A on penalised errors (1: no ACE)",
  err_shortcut_c: "errors reproducing a tempting shortcut: mean c (nats)",
  err_other_c: "other errors: mean c (nats)",
};

/** Metrics measured against the reference policy: at step 1 the policy is the reference, so c ≡ 0 there. */
const REFERENCE_METRICS = new Set([
  "ace_overconf_frac",
  "ace_overconf_mean_c",
  "err_shortcut_c",
  "err_other_c",
]);

/** Distinct, saturated method colours (tableau10 and four more), so up to 14 methods stay apart. */
const METHOD_COLORS = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#79706e",
  "#1b1b1b",
  "#7b3294",
  "#008837",
  "#0571b0",
];

/** One training-curve point: a method's median and quartiles of one metric over its runs at one step. */
interface TrainingPoint {
  method: string;
  /** A key of TRAINING_METRICS. */
  metric: string;
  step: number;
  median: number;
  q25: number;
  q75: number;
}

/**
 * The training curves behind `plots/training.svg` (and training.csv): per method, metric of TRAINING_METRICS and
 * step, the median and quartiles over runs; metrics that are 0 everywhere are dropped. `units`: the most runs
 * behind one point.
 */
function trainingSummary(runs: readonly RunData[]): { values: TrainingPoint[]; units: number } {
  const byKey = new Map<string, number[]>();
  for (const run of runs) {
    const first = Math.min(...run.metrics.map((m) => m.step));
    for (const m of run.metrics) {
      for (const metric of Object.keys(TRAINING_METRICS)) {
        const v = m[metric];
        if (typeof v !== "number" || !Number.isFinite(v)) continue;
        if (REFERENCE_METRICS.has(metric) && m.step === first && first <= 1) continue;
        const key = `${run.method}\u0000${metric}\u0000${m.step}`;
        const list = byKey.get(key);
        if (list) list.push(v);
        else byKey.set(key, [v]);
      }
    }
  }
  // A metric that is 0 at every step of every run (clip fraction of an on-policy single update) gets no panel:
  // an empty panel reads as missing data.
  const informative = new Set(
    [...byKey].filter(([, list]) => list.some((v) => v !== 0)).map(([key]) => key.split("\u0000")[1]),
  );
  for (const key of [...byKey.keys()]) if (!informative.has(key.split("\u0000")[1])) byKey.delete(key);
  const values = [...byKey].map(([key, list]) => {
    const [method, metric, step] = key.split("\u0000");
    return {
      method,
      metric,
      step: Number(step),
      median: quantile(list, 0.5),
      q25: quantile(list, 0.25),
      q75: quantile(list, 0.75),
    };
  });
  return { values, units: Math.max(0, ...[...byKey.values()].map((l) => l.length)) };
}

/** training.csv: the curves of `trainingSummary`, one row per method, metric and step (6 decimals). */
export function trainingCsv(runs: readonly RunData[]): string {
  return toCsv(
    trainingSummary(runs).values.map((v) => ({ ...v, median: r6(v.median), q25: r6(v.q25), q75: r6(v.q75) })),
    ["method", "metric", "step", "median", "q25", "q75"],
  );
}

/**
 * Per-method training curves, one panel per metric the runs logged: the median over units (runs: base × seed)
 * per step with the band between their 25th and 75th percentiles. The c-based panels start at step 2 (at step 1
 * the policy equals the reference, so c ≡ 0 and the fraction is 0 by construction). Integer step ticks.
 */
export function trainingSpec(runs: readonly RunData[]): vl.TopLevelSpec | null {
  const { values: rows, units } = trainingSummary(runs);
  if (rows.length === 0) return null;
  const values = rows.map((r) => ({ ...r, metric: TRAINING_METRICS[r.metric] }));

  const methods = [...new Set(runs.map((r) => r.method))];
  const x = {
    field: "step",
    type: "quantitative" as const,
    title: "RL step",
    axis: { tickMinStep: 1, format: "d" },
    scale: { nice: false },
  };
  const color = {
    field: "method",
    type: "nominal" as const,
    sort: methods,
    scale: { range: METHOD_COLORS },
    legend: lineLegend("top", { columns: 4, title: null }),
  };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: "Training curves",
      subtitle: [
        `median over ${units} run(s) (base × seed) per step;`,
        "band: 25th–75th percentile. c: ACE's confidence",
        "shift Σ_t (log π_θ − log π_ref) over a rollout's",
        "response tokens, in nats",
      ],
      anchor: "start",
    },
    data: { values },
    facet: {
      field: "metric",
      type: "nominal",
      sort: Object.values(TRAINING_METRICS),
      header: { title: null, labelAnchor: "start", labelFontSize: 12, labelLimit: 0 },
    },
    columns: 1,
    spec: {
      width: 460,
      height: 120,
      encoding: { x, color },
      layer: [
        {
          mark: { type: "area", opacity: 0.15 },
          encoding: { y: { field: "q25", type: "quantitative", title: null }, y2: { field: "q75" } },
        },
        {
          mark: { type: "line", strokeWidth: 1.6 },
          encoding: { y: { field: "median", type: "quantitative" } },
        },
      ],
    },
    resolve: { scale: { y: "independent" } },
  } as vl.TopLevelSpec;
}
