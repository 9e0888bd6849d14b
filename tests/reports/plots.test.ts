// The plot specs: the base curve on every Pass@k panel, significant k marked on the difference plot, training
// curves as a median and band over runs without the step-1 value of the c-based metrics, and canvases no wider
// than their panels.
import { buildReport, diffSpec, passKSpec, renderSvg, trainingSpec } from "../../reports/mod.ts";
import { assertEquals, ok } from "../assert.ts";
import { fixture } from "./fixture.ts";

type Row = Record<string, unknown>;
const rowsOf = (spec: unknown) => (spec as { data: { values: Row[] } }).data.values;
const widthOf = (svg: string) => Number(svg.match(/width="(\d+)"/)![1]);

Deno.test("plots: every Pass@k panel carries the step-0 curve; full method names; a tight canvas", async () => {
  const report = await buildReport(fixture, { iters: 200 });
  // The fixture evaluates no step 0: give each trained cell a step-0 twin, as a sweep's step-0 row.
  const cells = report.cells.filter((c) => c.dataset === "synthetic");
  const base = cells.filter((c) => c.method === "grpo").map((c) => ({
    ...c,
    method: "step 0 (before RL)",
    mean: 0.1,
  }));
  const spec = passKSpec([...base, ...cells], "synthetic");
  const values = rowsOf(spec);
  const panels = [...new Set(values.map((v) => v.panel))];
  assertEquals(panels, report.methods);
  for (const panel of panels) {
    ok(values.some((v) => v.panel === panel && v.curve === "step 0 (before RL)"), `${panel}: base curve`);
    ok(values.some((v) => v.panel === panel && v.curve === "method (panel title)"), `${panel}: method curve`);
  }
  const svg = await renderSvg(spec);
  ok(svg.includes(">ace-grpo<"), "the method name is printed in full");
  ok(widthOf(svg) < 2 * 260 + 120, `canvas ${widthOf(svg)} px for two panels`);
  assertEquals(
    new Set(rowsOf(passKSpec(cells, "synthetic")).map((v) => v.curve)),
    new Set(["method (panel title)"]),
  );
});

Deno.test("plots: the difference plot marks the k whose interval excludes 0, on a canvas the size of its panels", async () => {
  const report = await buildReport(fixture, { iters: 200 });
  const spec = diffSpec(report.comparisons, "synthetic");
  const values = rowsOf(spec);
  for (const v of values) {
    const excludes = (v.lo as number) > 0 || (v.hi as number) < 0;
    assertEquals(v.significance, excludes ? "interval excludes 0" : "interval includes 0");
  }
  const svg = await renderSvg(spec);
  ok(widthOf(svg) < 460, `canvas ${widthOf(svg)} px for one panel and its legend`);
});

Deno.test("plots: training curves are the median and quartile band over runs; c-based metrics skip step 1", () => {
  const run = (seed: number, values: number[]) => ({
    runId: `m_s${seed}`,
    method: "m",
    preset: "grpo",
    seed,
    base: 0,
    engine: "tabular",
    state: "done" as const,
    ks: [],
    samples: [],
    expected: {},
    evalFile: "ok" as const,
    metrics: values.map((v, i) => ({ step: i + 1, accuracy: v, ace_overconf_frac: v, clipfrac: 0 })),
  });
  const spec = trainingSpec([run(0, [0, 0.1]), run(1, [0, 0.5]), run(2, [0, 0.3])])!;
  const values = rowsOf(spec);
  // a metric that is 0 everywhere (on-policy clip fraction) gets no empty panel
  ok(!values.some((v) => String(v.metric).startsWith("clip fraction")), "an all-zero metric has no panel");
  const acc = values.filter((v) => v.metric === "rollout accuracy (fraction correct)");
  assertEquals(acc.map((v) => v.step), [1, 2]);
  assertEquals([acc[1].median, acc[1].q25, acc[1].q75], [0.3, 0.2, 0.4]);
  const overconf = values.filter((v) => String(v.metric).startsWith("overconfident errors: fraction"));
  assertEquals(overconf.map((v) => v.step), [2]);
  const x =
    (spec as unknown as { spec: { encoding: { x: { axis: { tickMinStep: number } } } } }).spec.encoding.x;
  assertEquals(x.axis.tickMinStep, 1);
});
