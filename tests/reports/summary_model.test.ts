// The summary model: summary.json (valid against its schema), cells.csv and differences.csv hold every number
// summary.md prints, and summary.md is rendered from the model.
import { join } from "node:path";
import { rmSync } from "node:fs";
import { assertEquals, ok, throws } from "../assert.ts";
import { fromCsv } from "../../common/csv.ts";
import { readJson, writeJson } from "../../common/fs.ts";
import { type EvalProtocol, PROTOCOL_SCHEMA } from "../../common/protocol.ts";
import { ValidationError } from "../../common/config.ts";
import {
  buildReport,
  DIFFERENCE_COLUMNS,
  parseSummary,
  renderSummary,
  SUMMARY_SCHEMA,
  summaryJson,
  type SummaryModel,
  writeReport,
} from "../../reports/mod.ts";
import { copyFixture } from "./fixture.ts";

const PROTOCOL: EvalProtocol = {
  datasets: ["math500", "synthetic"],
  split: "test",
  template: "compact",
  sampling: { sent: { temperature: 1, top_p: 1 }, serverDefaults: [] },
  grader: { mode: "strict", version: "abc123", timeoutMs: null },
  n: 8,
  ks: [1, 2, 4, 8],
};

/** The fixture sweep in a temp folder with a protocol record in its sweep.json. */
function fixtureWithRecord(): string {
  const dir = copyFixture();
  const sweep = readJson<Record<string, unknown>>(join(dir, "sweep.json"));
  sweep.record = {
    version: 1,
    design: { kind: "seeds", seeds: [0, 1] },
    methods: [
      { name: "grpo", preset: "grpo", family: "standard", baseline: null },
      { name: "ace-grpo", preset: "ace-grpo", family: "ace", baseline: "grpo" },
    ],
    protocol: PROTOCOL,
  };
  writeJson(join(dir, "sweep.json"), sweep);
  return dir;
}

Deno.test("summary model: summary.json validates, carries the protocol, and holds every cell, difference, MDD and component", async () => {
  const dir = fixtureWithRecord();
  try {
    const { written } = await writeReport(dir, { iters: 100 });
    for (const name of ["summary.json", "cells.csv", "differences.csv"]) {
      ok(written.includes(join(dir, name)), `${name} written`);
    }
    const json = parseSummary(
      Deno.readTextFileSync(join(dir, "summary.json")),
      "summary.json",
    ) as unknown as SummaryModel;
    assertEquals(json.version, 1);
    assertEquals(json.kind, "sweep");
    assertEquals(json.protocol, PROTOCOL);
    const report = await buildReport(dir, { iters: 100 });
    // Every aggregated cell (slices included) and every difference of the report is in the file.
    assertEquals(json.cells.length, report.cells.length);
    const diffs = report.comparisons.flatMap((c) => c.cells);
    assertEquals(json.comparisons.flatMap((c) => c.differences).length, diffs.length);
    ok(diffs.length > 0 && json.boundary.length > 0, "the fixture has differences and boundary rows");
    for (const d of json.comparisons.flatMap((c) => c.differences)) {
      ok(d.mdd === null || d.mdd > 0, `MDD of k ${d.k}`);
      ok(typeof d.components.problem === "number", "a difference carries its variance components");
    }
    // The Markdown tables print the file's numbers.
    const md = Deno.readTextFileSync(join(dir, "summary.md"));
    for (const c of json.cells.filter((c) => c.slice === "all" && c.lo !== null)) {
      ok(
        md.includes(`${c.mean.toFixed(3)} [${c.lo!.toFixed(3)}, ${c.hi!.toFixed(3)}]`),
        `${c.method} k ${c.k}`,
      );
    }
    // One row per cell and per difference in the CSVs, with the model's values.
    const cells = fromCsv(Deno.readTextFileSync(join(dir, "cells.csv")));
    assertEquals(cells.length, json.cells.length);
    // cells.csv's columns are its records' keys: pinned here so a renamed field shows as a format change.
    assertEquals(Object.keys(cells[0]), [
      ...[
        "method",
        "dataset",
        "slice",
        "step",
        "k",
        "pass_at_k",
        "ci_lo",
        "ci_hi",
        "se",
        "interval",
        "scope",
      ],
      ...["bases", "runs", "problems", "n", "var_base", "var_seed", "var_problem", "var_base_problem"],
      ...["var_residual", "incomplete", "ungraded", "near_ceiling"],
    ]);
    const first = json.cells[0];
    assertEquals(Number(cells[0].pass_at_k), Math.round(first.mean * 1e6) / 1e6);
    const rows = fromCsv(Deno.readTextFileSync(join(dir, "differences.csv")));
    assertEquals(Object.keys(rows[0]), [...DIFFERENCE_COLUMNS]);
    assertEquals(rows.length, diffs.length);
    const d0 = json.comparisons[0].differences[0];
    assertEquals(Number(rows[0].mdd), Math.round(d0.mdd! * 1e6) / 1e6);
    assertEquals(rows[0].a, json.comparisons[0].a);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

Deno.test("summary model: summary.md is rendered from the model (a changed number in the model is printed)", async () => {
  const dir = fixtureWithRecord();
  try {
    const report = await buildReport(dir, { iters: 100 });
    const model = structuredClone(report.model);
    const cell = model.cells.find((c) => c.slice === "all" && c.method === "grpo")!;
    cell.mean = 0.123456;
    const diff = model.comparisons[0].differences[0];
    diff.mdd = 0.654321;
    const md = renderSummary({ data: report.data, model });
    ok(md.includes("0.123 ["), "the changed cell mean is printed");
    ok(md.includes("0.654"), "the changed MDD is printed");
    ok(!report.summary.includes("0.654"), "the original summary did not have it");
  } finally {
    rmSync(dir, { recursive: true });
  }
});

Deno.test("summary model: the schema refuses a malformed summary, naming the field; a folder without a record has protocol null", async () => {
  const dir = copyFixture();
  try {
    const report = await buildReport(dir, { iters: 100 });
    assertEquals(report.model.protocol, null);
    const good = JSON.parse(summaryJson(report.model));
    parseSummary(JSON.stringify(good), "ok.json");
    // Undefined intervals and n/a components are null in JSON, never NaN (which JSON cannot hold).
    ok(!summaryJson(report.model).includes("NaN"));
    const bad = structuredClone(good);
    bad.cells[0].mean = "0.5";
    throws(() => parseSummary(JSON.stringify(bad), "bad.json"), (e: Error) => {
      ok(e instanceof ValidationError);
      ok(/bad\.json: cells\[0\]\.mean: must be number/.test(e.message), e.message);
      return true;
    });
    const noDiff = structuredClone(good);
    delete noDiff.comparisons[0].differences[0].mdd;
    throws(
      () => parseSummary(JSON.stringify(noDiff), "x.json"),
      /comparisons\[0\]\.differences\[0\]: must have required property 'mdd'/,
    );
  } finally {
    rmSync(dir, { recursive: true });
  }
});

Deno.test("summary schema: its protocol definition is common/protocol.ts's, so the two cannot drift", () => {
  const schema = JSON.parse(Deno.readTextFileSync(SUMMARY_SCHEMA));
  assertEquals(schema.definitions.protocol, JSON.parse(JSON.stringify(PROTOCOL_SCHEMA)));
});
