// The VERL engine as a sweep sees it: `prepare` exports the datasets as parquet and bundles the grader once per
// sweep; `run` writes the run's launch plan and, when settings.launch asks, runs it and ingests the dumps.
import { basename, join, resolve } from "node:path";
import { readStatus, runFile, writeStatus } from "../../../common/run_folder.ts";
import { exists } from "../../../common/fs.ts";
import { loadDataset, type MathRecord } from "../../../datasets/mod.ts";
import type { Engine, RunConfig, RunHooks } from "../engine.ts";
import { toVerlRows, writeVerlParquet } from "./export.ts";
import { bundleDigest, bundleGrader, GRADER_BUNDLE_DIR } from "./grader_bundle.ts";
import { DUMP_DIR, ingestVerlDumps } from "./ingest.ts";
import { countPromptTokens, writeValFilter } from "./prompt_filter.ts";
import { checkClusterAssumptions, interruptRayJob, rayJobConcurrency, runRayJob } from "./ray_jobs.ts";
import { VERL_DIR, verlDataPath, verlRunPlan, writeRunPlan } from "./launch.ts";
import { validateVerlSettings, type VerlDataset, type VerlSettings } from "./recipes.ts";

/**
 * Write the sweep's training and validation sets as VERL parquet under `<sweepDir>/data/verl/` (train-<name>,
 * test-<name>), each prompt rendered with settings.template; `load` gives a dataset's records (fixtures in tests).
 */
export async function exportVerlData(
  sweepDir: string,
  settings: Pick<VerlSettings, "trainDatasets" | "valDatasets" | "template" | "dataSources">,
  load: (name: VerlDataset) => Promise<MathRecord[]>,
) {
  const jobs = [
    ...settings.trainDatasets.map((dataset) => ({ dataset, split: "train" as const })),
    ...settings.valDatasets.map((dataset) => ({ dataset, split: "test" as const })),
  ];
  const out = [];
  for (const { dataset, split } of jobs) {
    const rows = toVerlRows(await load(dataset), {
      template: settings.template,
      dataSource: settings.dataSources[dataset] ?? dataset,
      split,
    });
    const path = verlDataPath(sweepDir, split, dataset);
    writeVerlParquet(path, rows);
    out.push({ dataset, split, path, rows: rows.length });
  }
  return out;
}

/** Run the launch script (bash, from the run's verl/ folder); a non-zero exit throws with the code. */
async function runScript(runDir: string, script: string): Promise<void> {
  const status = await new Deno.Command("bash", { args: [script], cwd: join(runDir, VERL_DIR) }).spawn()
    .status;
  if (!status.success) throw new Error(`${join(runDir, VERL_DIR, script)} exited with code ${status.code}`);
}

/** Ingest a failed job's dumps as partial (reports refuse outputs not ingested); a failure is said, not thrown. */
async function ingestFailed(runDir: string, sweepDir: string): Promise<void> {
  if (!exists(join(runDir, DUMP_DIR))) return;
  try {
    await ingestVerlDumps(runDir, { sweepDir, partial: true });
  } catch (e) {
    console.error(
      `${runDir}: the failed run's dumps were not ingested: ${(e as Error).message.split("\n")[0]}`,
    );
  }
}

/** The VERL engine: plans (and optionally launches) one VERL job per run; results come back through the dumps. */
export const verlEngine: Engine = {
  name: "verl",
  async prepare(sweep, sweepDir) {
    const settings = validateVerlSettings(sweep.settings, `${sweepDir}: settings`);
    const options = {
      cacheDir: settings.datasetCacheDir ?? undefined,
      mirror: settings.datasetMirror ?? undefined,
    };
    const files = await exportVerlData(sweepDir, settings, (name) => loadDataset(name, options));
    for (const f of files) console.log(`verl: wrote ${f.rows} rows to ${f.path}`);
    const counted = await countPromptTokens(sweepDir, settings);
    console.log(
      counted.method === "tokenizer"
        ? `verl: counted validation prompt tokens with ${counted.why}'s chat template`
        : `verl: validation prompt tokens bounded (UTF-8 bytes + template), no tokenizer: ${counted.why}`,
    );
    if (settings.launch === "ray-job") {
      const clusterSweep = settings.clusterSweepDir ?? resolve(sweepDir);
      const verlRoot = settings.verlRoot ?? Deno.env.get("VERL_ROOT") ?? null;
      const host = await checkClusterAssumptions(sweepDir, clusterSweep, settings, verlRoot);
      console.log(`verl: a probe job in the Ray cluster (on ${host}) read and wrote ${clusterSweep}`);
    }
    if (settings.acebenchRoot === null) {
      const grader = await bundleGrader(sweepDir);
      console.log(
        `verl: bundled the reward grader into ${grader.dir} (deno ${Deno.version.deno}, sha256 in SHA256SUMS)`,
      );
    }
  },
  async run(run: RunConfig, runDir: string, sweepDir: string, hooks: RunHooks) {
    const steps = (run.settings.rl as { steps?: number } | undefined)?.steps;
    if (!steps) throw new Error(`${runFile(runDir, "config")}: settings.rl.steps is missing`);
    const plan = verlRunPlan(run, { name: basename(sweepDir), rl: { steps }, dir: sweepDir });
    writeRunPlan(plan, runDir);
    writeValFilter(sweepDir, runDir, plan.maxPromptLength);
    const settings = validateVerlSettings(run.settings);
    // the bundle this run scores with: a later plan may not replace it while the run is planned or running
    const digest = settings.acebenchRoot === null ? bundleDigest(join(sweepDir, GRADER_BUNDLE_DIR)) : null;
    const status = readStatus(runDir);
    if (digest !== null && status !== null) writeStatus(runDir, { ...status, graderBundleSha256: digest });
    if (settings.launch === "none") {
      const dir = join(runDir, VERL_DIR);
      console.log(
        `verl: ${run.runId} planned, not launched (settings.launch is "none"): run ${dir}/ray_job.sh or ` +
          `launch.sh, then ingest with deno task report ${sweepDir} --ingest`,
      );
      return "planned";
    }
    hooks.onProgress(0, steps);
    try {
      if (settings.launch === "local") await runScript(runDir, "launch.sh");
      else {
        const { clusterRunDir, verlRoot } = plan;
        await runRayJob({ runId: run.runId, runDir, clusterRunDir, verlRoot, settings, log: console.error });
      }
    } catch (e) {
      await ingestFailed(runDir, sweepDir);
      throw e;
    }
    await ingestVerlDumps(runDir, { sweepDir });
    hooks.onProgress(steps, steps);
    return "done";
  },
};

/** The registry's `cluster` for VERL: runs in flight and Ctrl-C handling under launch ray-job (else none). */
export const verlCluster = {
  async concurrency(raw: Record<string, unknown>): Promise<number | null> {
    const settings = validateVerlSettings(raw);
    return settings.launch === "ray-job" ? await rayJobConcurrency(settings) : null;
  },
  async interrupt(runDir: string, raw: Record<string, unknown>): Promise<void> {
    const settings = validateVerlSettings(raw);
    if (settings.launch === "ray-job") await interruptRayJob(runDir, settings);
  },
};
