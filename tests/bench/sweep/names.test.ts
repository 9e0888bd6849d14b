// Names are labels only (#34): switching ACE on through overrides instead of an `ace-*` preset, and renaming
// every method, gives the same plan, grid, families and baselines (every shipped config), the same VERL entry
// points, and the same numbers and comparisons (a small tabular sweep, run both ways).
import { join } from "node:path";
import { assertEquals, ok } from "../../assert.ts";
import { writeJson } from "../../../common/fs.ts";
import { readFolderFile } from "../../../common/run_folder.ts";
import { PRESETS } from "../../../bench/core/mod.ts";
import { expandRuns, presetPath, readSweepConfig, type SweepConfig } from "../../../bench/sweep/mod.ts";
import { sweepRecord } from "../../../bench/sweep/record.ts";
import { verlRunPlan } from "../../../bench/engines/verl/launch.ts";
import { main } from "../../../commands/sweep.ts";
import { buildReport } from "../../../reports/mod.ts";
import { tempDir } from "../../temp.ts";

Deno.env.set("CI", "true");
type Method = SweepConfig["methods"][number];

/** The non-ACE preset an ACE preset is built on (same algorithm apart from `ace`), and the ACE fields it changes. */
function asOverrides(m: Method): Method {
  const algo = PRESETS[m.preset as keyof typeof PRESETS];
  if (!algo.ace.enabled) return m;
  const { ace, ...rest } = algo;
  const [base, plain] = Object.entries(PRESETS).find(([, p]) => {
    const { ace: a, ...r } = p;
    return !a.enabled && JSON.stringify(r) === JSON.stringify(rest);
  })!;
  const changed = Object.fromEntries(
    Object.entries(ace).filter(([k, v]) => (plain.ace as unknown as Record<string, unknown>)[k] !== v),
  );
  const own = (m.overrides?.ace ?? {}) as Record<string, unknown>;
  return { ...m, preset: base, overrides: { ...m.overrides, ace: { ...changed, ...own } } };
}

/** The sweep with every method renamed `m<i>` (and `compare` following) and ACE switched on by overrides. */
function disguised(sweep: SweepConfig): { sweep: SweepConfig; rename: Map<string, string> } {
  const rename = new Map(sweep.methods.map((m, i) => [m.name, `m${i}`]));
  return {
    rename,
    sweep: {
      ...structuredClone(sweep),
      methods: sweep.methods.map((m) => ({ ...asOverrides(m), name: rename.get(m.name)! })),
      compare: sweep.compare?.map((c) => ({
        method: rename.get(c.method)!,
        against: c.against.map((a) => rename.get(a)!),
      })),
    },
  };
}

/** A method label of the original sweep (grid suffix kept) under the renaming. */
function renamed(label: string, rename: Map<string, string>): string {
  const name = [...rename.keys()].sort((a, b) => b.length - a.length).find((n) => label.startsWith(n))!;
  return rename.get(name)! + label.slice(name.length);
}

Deno.test("names: every shipped config, renamed and with ACE on through overrides, plans the same runs", () => {
  for (const entry of Deno.readDirSync(new URL("../../../bench/configs/", import.meta.url))) {
    const name = entry.name.replace(/\.json$/, "");
    const sweep = readSweepConfig(presetPath(name));
    const { sweep: other, rename } = disguised(sweep);
    ok(other.methods.every((m) => !m.preset.startsWith("ace-")), name);
    const [a, b] = [expandRuns(sweep), expandRuns(other)];
    assertEquals(a.length, b.length, `${name}: run count`);
    a.forEach((run, i) => {
      const twin = b[i];
      assertEquals(twin.method, renamed(run.method, rename), `${name}: grid label of ${run.method}`);
      assertEquals(
        [twin.seed, twin.base, twin.algo],
        [run.seed, run.base, run.algo],
        `${name}: ${run.runId}`,
      );
      if (sweep.engine === "verl") {
        const at = { name: "x", rl: sweep.rl, dir: "runs/x" };
        const [pa, pb] = [verlRunPlan(run, at, {}), verlRunPlan(twin, at, {})];
        assertEquals(pb.entrypoint, pa.entrypoint, `${name}: VERL entry point of ${run.runId}`);
      }
    });
    const [ra, rb] = [sweepRecord(sweep, a), sweepRecord(other, b)];
    assertEquals(
      rb.methods.map((m) => [m.name, m.family, m.baseline]),
      ra.methods.map((m) => [renamed(m.name, rename), m.family, m.baseline && renamed(m.baseline, rename)]),
      `${name}: families and baselines`,
    );
    assertEquals(rb.protocol, ra.protocol, `${name}: protocol`);
  }
});

Deno.test("names: a tabular sweep run both ways gives the same numbers and the same ACE comparisons", async () => {
  const dir = tempDir();
  try {
    const sweep = {
      name: "names",
      engine: "tabular",
      seeds: [0, 1],
      methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
      grid: { "ace.alpha": [0.5, 1] },
      settings: { prompts: 12, checkpointEvery: 5 },
      rl: { steps: 4, promptsPerStep: 4 },
      eval: { n: 4, ks: [1, 4], every: 4 },
    };
    const other = {
      ...sweep,
      methods: [
        { name: "plain", preset: "grpo" },
        { name: "shaped", preset: "grpo", overrides: { ace: { enabled: true } } },
      ],
    };
    const rename = new Map([["grpo", "plain"], ["ace-grpo", "shaped"]]);
    const out: string[] = [];
    for (const [i, config] of [sweep, other].entries()) {
      writeJson(join(dir, `${i}.json`), config);
      out.push(join(dir, `out${i}`));
      assertEquals(await main(["--config", join(dir, `${i}.json`), "--out", out[i], "--no-report"]), 0);
    }
    const [a, b] = [await buildReport(out[0], { iters: 100 }), await buildReport(out[1], { iters: 100 })];
    const rows = (r: typeof a, map: (m: string) => string) =>
      r.rows.map((x) => JSON.stringify({ ...x, method: map(x.method), runId: undefined }));
    assertEquals(rows(b, (m) => m), rows(a, (m) => renamed(m, rename)), "same Pass@k rows");
    const pairs = (r: typeof a) => r.comparisons.map((c) => [c.a, c.b, c.cells.map((d) => d.mean)]);
    assertEquals(
      pairs(b),
      pairs(a).map(([x, y, d]) => [renamed(x as string, rename), renamed(y as string, rename), d]),
    );
    assertEquals(pairs(a).length, 2, "each grid point of the ACE method against grpo");
    const record = readFolderFile(out[1])!.record!;
    assertEquals(record.methods.map((m) => m.baseline), [null, "plain", "plain"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
