// SVG plots through vega-lite → vega (headless, renderer "none"): Pass@k over k per method with intervals, and
// training curves (reward, entropy, KL, overconfident-error fraction and severity) averaged over seeds.
import * as vega from "vega";
import * as vl from "vega-lite";
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

/** Pass@k over k (log₂ axis) for each method on one dataset: mean over seeds with its 95% interval band. */
export function passKSpec(cells: readonly AggregateCell[], dataset: string): vl.TopLevelSpec {
  const values = cells.filter((c) => c.dataset === dataset && c.slice === "all")
    .map((c) => ({ method: c.method, k: c.k, passAtK: c.mean, lo: c.lo, hi: c.hi }));
  const ks = [...new Set(values.map((v) => v.k))].sort((a, b) => a - b);

  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `Pass@k on ${dataset} (mean over seeds, 95% interval)`,
    width: 420,
    height: 280,
    data: { values },
    encoding: {
      x: {
        field: "k",
        type: "quantitative",
        title: "k (log scale)",
        scale: { type: "log", base: 2, domain: [ks[0], ks[ks.length - 1]] },
        axis: { values: ks, format: "d" },
      },
      color: { field: "method", type: "nominal" },
    },
    layer: [
      {
        mark: { type: "area", opacity: 0.18 },
        encoding: { y: { field: "lo", type: "quantitative" }, y2: { field: "hi" } },
      },
      {
        mark: { type: "line", point: true },
        encoding: {
          y: { field: "passAtK", type: "quantitative", title: "pass@k", scale: { domain: [0, 1] } },
        },
      },
    ],
  };
}

/**
 * Metrics plotted as training curves, with the (short) label of each panel: severity is the mean c of
 * overconfident errors. Accuracy comes first because rewards are 0/1 for GRPO but ±1 for DAPO.
 */
export const TRAINING_METRICS: Record<string, string> = {
  accuracy: "rollout accuracy",
  reward_mean: "reward",
  entropy: "entropy",
  kl: "KL to ref",
  ace_overconf_frac: "overconf. errors",
  ace_overconf_mean_c: "overconf. severity",
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
      row: { field: "metric", type: "nominal", title: null, sort: Object.values(TRAINING_METRICS) },
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
