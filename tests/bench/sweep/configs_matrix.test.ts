// Every shipped config through its shipped commands, as a user types them: `deno task sweep --dry-run`, `deno
// task sweep --smoke` (the same code path and Worker lanes on a config shrunk to seconds), then `deno task
// report` and `deno task power` on what it wrote; VERL configs plan (launch "none"), and their plans are read
// back: every run planned, the parquet files readable, reward.py answering. Each subprocess runs with exactly
// the permissions deno.json gives its task. A config added to bench/configs/ is covered without editing this.
// `regress` is not run here: it compares against a committed baseline of the full ci-* sweeps (its own test).
import { cpSync } from "node:fs";
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";
import { assert, assertEquals } from "../../assert.ts";
import { taskPermissions } from "../../run_cli.ts";
import { tempDir } from "../../temp.ts";
import { DATASET_MIRROR, missing, skipping } from "../../external_inputs.ts";

const root = new URL("../../../", import.meta.url).pathname;
const configs = [...Deno.readDirSync(join(root, "bench/configs"))].map((e) => e.name)
  .filter((n) => n.endsWith(".json")).map((n) => n.replace(/\.json$/, "")).sort();

/** The dataset mirror VERL plans export from: $ACEBENCH_DATASET_MIRROR, else ../shared/datasets (tests/external_inputs.ts), else none. */
function datasetMirror(): string | null {
  const dir = DATASET_MIRROR;
  try {
    return Deno.statSync(dir).isDirectory ? dir : null;
  } catch {
    return null;
  }
}

/** `deno task <task> …` as a subprocess with deno.json's permissions for that task; code and output. */
async function task(name: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...taskPermissions(name), join(root, "cli.ts"), name, ...args],
    env: { CI: "true", ACEBENCH_WEBGPU_ADAPTER: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, text };
}

function assertOk(r: { code: number; text: string }, what: string) {
  assertEquals(r.code, 0, `${what} exited ${r.code}:\n${r.text.slice(-3000)}`);
}

let verlCache: string | null | undefined;
/** A dataset cache holding what VERL plans export, fetched once from the mirror; null without a mirror. */
async function verlDatasets(): Promise<string | null> {
  if (verlCache !== undefined) return verlCache;
  const mirror = datasetMirror();
  if (mirror === null) return verlCache = null;
  const cache = tempDir("acebench-matrix-cache-");
  assertOk(
    await task("fetch", ["dapo-math-17k", "aime2025", "math500", "--mirror", mirror, "--cache-dir", cache]),
    "deno task fetch",
  );
  return verlCache = cache;
}

/**
 * reward.py of a planned run scores a right and a wrong answer (acebench's strict grade through grader.sh and the
 * grader bundled into the sweep), from a copy of the sweep folder, with no Deno on PATH.
 */
async function rewardAnswers(sweepDir: string, runId: string): Promise<void> {
  const copy = join(tempDir("acebench-matrix-copy-"), "sweep");
  cpSync(sweepDir, copy, { recursive: true });
  const verlDir = join(copy, "runs", runId, "verl");
  const script = [
    "import sys, json",
    `sys.path.insert(0, ${JSON.stringify(verlDir)})`,
    "import reward",
    "print(json.dumps([reward.compute_score_binary('x', 'so \\\\boxed{12}', '12'),",
    "  reward.compute_score_binary('x', 'so \\\\boxed{13}', '12')]))",
  ].join("\n");
  const out = await new Deno.Command("/usr/bin/python3", {
    args: ["-c", script],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: copy },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr).slice(-2000));
  const [right, wrong] = JSON.parse(text.split("\n").pop()!).map((s: unknown) =>
    typeof s === "object" && s !== null ? (s as { score: number }).score : s
  );
  assert(right > wrong, `reward.py: right ${right}, wrong ${wrong}`);
}

async function checkVerlPlans(out: string): Promise<void> {
  const runs = [...Deno.readDirSync(join(out, "runs"))].map((e) => e.name);
  assert(runs.length > 0, "no run planned");
  for (const run of runs) {
    const status = JSON.parse(Deno.readTextFileSync(join(out, "runs", run, "status.json")));
    assertEquals(status.state, "planned", `${run}: ${JSON.stringify(status)}`);
  }
  // The exported datasets (the prompt-length filter's token counts lie beside them).
  for (
    const file of [...Deno.readDirSync(join(out, "data/verl"))].filter((f) => f.name.endsWith(".parquet"))
  ) {
    const bytes = Deno.readFileSync(join(out, "data/verl", file.name));
    const rows = await parquetReadObjects({ file: bytes.buffer as ArrayBuffer, rowEnd: 2 });
    assert(rows.length > 0, `${file.name}: no rows`);
  }
  await rewardAnswers(out, runs[0]);
}

const mirror = datasetMirror();

for (const name of configs) {
  const { engine, methods } = JSON.parse(
    Deno.readTextFileSync(join(root, "bench/configs", `${name}.json`)),
  ) as {
    engine: string;
    methods: { preset: string }[];
  };
  const out = join(tempDir("acebench-matrix-"), name);
  Deno.test(`shipped config ${name}: sweep --dry-run under deno.json's permissions`, async () => {
    assertOk(
      await task("sweep", ["--preset", name, "--dry-run", "--out", out]),
      "sweep --dry-run",
    );
  });
  const needsMirror = engine === "verl" && mirror === null;
  Deno.test({
    name: `shipped config ${name}: sweep --smoke, then report and power on it`,
    ignore: needsMirror &&
      skipping(`sweep --smoke of ${name} (VERL plans export datasets)`, missing("datasetMirror")),
    fn: async () => {
      if (engine === "verl") {
        const cache = await verlDatasets();
        assertOk(
          await task("sweep", ["--preset", name, "--smoke", "--out", out], { ACEBENCH_CACHE: cache! }),
          "sweep",
        );
        await checkVerlPlans(out);
        return;
      }
      assertOk(await task("sweep", ["--preset", name, "--smoke", "--out", out]), "sweep --smoke");
      const summary = Deno.readTextFileSync(join(out, "summary.md"));
      assert(summary.includes(`${name}-smoke`) || summary.includes("-smoke"), "the smoke sweep names itself");
      assertOk(await task("report", [out]), "report");
      // power needs an ACE-vs-baseline pair; a calibration sweep has none, and says so.
      const power = await task("power", [out]);
      if (methods.some((m) => m.preset.startsWith("ace-"))) assertOk(power, "power");
      else assert(power.code === 1 && power.text.includes("no ACE-vs-baseline comparison"), power.text);
    },
  });
}
