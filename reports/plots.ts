// SVG plots through vega-lite → vega (headless, renderer "none"): Pass@k over k per method with intervals, ACE
// minus baseline over k with its crossed interval, and training curves (accuracy, KL, entropy, overconfident-error
// fraction and mean c) averaged over seeds.
import * as vega from "vega";
import * as vl from "vega-lite";
import type { Comparison } from "./compare.ts";
import type { RunData } from "./load.ts";
import type { AggregateCell } from "./passk.ts";

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

/**
 * Pass@k over k (log₂ axis) for each method on one dataset: mean over seeds with its 95% interval band. The
 * y-range follows the data (differences between methods stay visible); the legend shows full-opacity line
 * swatches, not the band's.
 */
export function passKSpec(cells: readonly AggregateCell[], dataset: string): vl.TopLevelSpec {
  const values = cells.filter((c) => c.dataset === dataset && c.slice === "all")
    .map((c) => ({
      method: c.method,
      k: c.k,
      passAtK: c.mean,
      lo: Number.isFinite(c.lo) ? c.lo : c.mean,
      hi: Number.isFinite(c.hi) ? c.hi : c.mean,
    }));
  const ks = [...new Set(values.map((v) => v.k))].sort((a, b) => a - b);
  const domain = domainOf(values.flatMap((v) => [v.lo, v.hi]), 0, 1);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `Pass@k on ${dataset} (mean over seeds, 95% crossed seeds × problems interval)`,
    width: 420,
    height: 280,
    data: { values },
    encoding: {
      x: kAxis(ks),
      color: {
        field: "method",
        type: "nominal",
        legend: { symbolType: "stroke", symbolOpacity: 1, symbolStrokeWidth: 3 },
      },
    },
    layer: [
      {
        mark: { type: "line", point: true, strokeWidth: 2 },
        encoding: { y: { field: "passAtK", type: "quantitative", title: "pass@k", scale: { domain } } },
      },
      {
        mark: { type: "area", opacity: 0.15 },
        encoding: { y: { field: "lo", type: "quantitative" }, y2: { field: "hi" } },
      },
    ],
  };
}

/**
 * ACE minus its baseline over k (log₂ axis) on one dataset, one panel per comparison: the mean difference
 * (paired by seed and problem), its 95% crossed interval as a band, and a zero line.
 */
export function diffSpec(comparisons: readonly Comparison[], dataset: string): vl.TopLevelSpec {
  const values = comparisons.filter((c) => c.dataset === dataset).flatMap((c) =>
    c.cells.map((d) => ({
      comparison: `${c.b} − ${c.a}`,
      k: d.k,
      diff: d.mean,
      lo: Number.isFinite(d.lo) ? d.lo : d.mean,
      hi: Number.isFinite(d.hi) ? d.hi : d.mean,
    }))
  );
  const ks = [...new Set(values.map((v) => v.k))].sort((a, b) => a - b);
  const domain = domainOf([0, ...values.flatMap((v) => [v.lo, v.hi])], -1, 1);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `ACE − baseline on ${dataset} (95% crossed seeds × problems interval)`,
    data: { values },
    facet: { column: { field: "comparison", type: "nominal", title: null } },
    spec: {
      width: 300,
      height: 220,
      layer: [
        {
          mark: { type: "area", opacity: 0.25, color: "#4c78a8" },
          encoding: {
            x: kAxis(ks),
            y: { field: "lo", type: "quantitative", scale: { domain } },
            y2: { field: "hi" },
          },
        },
        {
          mark: { type: "line", point: true, color: "#4c78a8", strokeWidth: 2 },
          encoding: {
            x: kAxis(ks),
            y: { field: "diff", type: "quantitative", title: "Δ pass@k", scale: { domain } },
          },
        },
        {
          mark: { type: "rule", color: "black", strokeDash: [4, 3] },
          encoding: { y: { datum: 0, type: "quantitative" } },
        },
      ],
    },
  };
}

/**
 * Metrics plotted as training curves, with the label of each panel. Accuracy, not reward: rewards are 0/1 for
 * GRPO but ±1 for DAPO, so their curves are not comparable.
 */
export const TRAINING_METRICS: Record<string, string> = {
  accuracy: "rollout accuracy",
  kl: "KL to ref",
  entropy: "entropy",
  clipfrac: "clip fraction",
  response_length: "response length (tokens)",
  ace_overconf_frac: "overconfident errors (fraction)",
  ace_overconf_mean_c: "overconfident errors (mean c)",
};

/** Per-method training curves averaged over seeds, one panel per metric the runs logged. */
export function trainingSpec(runs: readonly RunData[]): vl.TopLevelSpec | null {
  const sums = new Map<string, { sum: number; count: number }>();
  for (const run of runs) {
    for (const m of run.metrics) {
      for (const metric of Object.keys(TRAINING_METRICS)) {
        const v = m[metric];
        if (typeof v !== "number" || !Number.isFinite(v)) continue;
        const key = `${run.method}\u0000${metric}\u0000${m.step}`;
        const acc = sums.get(key) ?? { sum: 0, count: 0 };
        acc.sum += v;
        acc.count++;
        sums.set(key, acc);
      }
    }
  }
  if (sums.size === 0) return null;
  const values = [...sums].map(([key, acc]) => {
    const [method, metric, step] = key.split("\u0000");
    return { method, metric: TRAINING_METRICS[metric], step: Number(step), value: acc.sum / acc.count };
  });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "Training curves (mean over seeds)",
    data: { values },
    facet: {
      row: {
        field: "metric",
        type: "nominal",
        title: null,
        sort: Object.values(TRAINING_METRICS),
        header: { labelOrient: "top", labelAnchor: "start", labelAngle: 0, labelFontSize: 12 },
      },
    },
    spec: {
      width: 420,
      height: 120,
      mark: "line",
      encoding: {
        x: { field: "step", type: "quantitative", title: "RL step" },
        y: { field: "value", type: "quantitative", title: null },
        color: { field: "method", type: "nominal" },
      },
    },
    resolve: { scale: { y: "independent" } },
  };
}
