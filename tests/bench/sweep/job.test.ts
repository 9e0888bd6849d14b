// Jobs through a real sweep Worker (bench/sweep/worker.ts), for every registered engine and both job kinds: what
// crosses the boundary is plain data, the engine is found by name inside the Worker, and what comes back is a
// checked report. A function in a job is refused before posting, naming its field (it used to surface as a
// DataCloneError from postMessage).
import { assert, assertEquals, throws } from "../../assert.ts";
import { engineRef, engines, loadEngine } from "../../../bench/engines/registry.ts";
import { checkJob, checkReport, type WorkerJob, type WorkerReport } from "../../../bench/sweep/job.ts";
import { tempDir } from "../../temp.ts";

const workerUrl = new URL("../../../bench/sweep/worker.ts", import.meta.url);

/** Post one job to a fresh Worker; the final report (done or error), every report checked on arrival. */
function postJob(job: WorkerJob): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl, { type: "module" });
    worker.onmessage = (e) => {
      const report = checkReport(e.data);
      if (report.kind === "done" || report.kind === "error") {
        worker.terminate();
        resolve(report);
      }
    };
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(new Error(`worker crashed: ${e.message}`));
    };
    worker.postMessage(checkJob(job));
  });
}

const evalSpec = { n: 2, ks: [1, 2], every: 1 };

for (const [name, spec] of Object.entries(engines)) {
  Deno.test(`sweep job: ${name}'s prepare and run jobs cross a real Worker and come back as checked reports`, async () => {
    const dir = tempDir();
    const engine = engineRef(spec);
    // Settings the engine cannot use: the job must still arrive, find the engine by name, and report its error.
    const settings = { notASetting: { nested: [1, 2, 3] } };
    const prepare = await postJob({
      kind: "prepare",
      engine,
      settings,
      seed: 0,
      base: 0,
      eval: evalSpec,
      sweepDir: dir,
    });
    // An engine with a shared `prepare` validates the settings and names the bad field; one without has none to do.
    if ((await loadEngine(engine)).prepare) {
      assertEquals(prepare.kind, "error", JSON.stringify(prepare));
      if (prepare.kind === "error") assert(/notASetting/.test(prepare.message), prepare.message);
    } else assertEquals(prepare, { kind: "done", outcome: "done" });
    const run = await postJob({
      kind: "run",
      engine,
      run: {
        runId: "probe_s0",
        engine: name,
        method: "probe",
        preset: "grpo",
        seed: 0,
        base: 0,
        algo: {},
        settings,
        eval: evalSpec,
      } as unknown as Extract<WorkerJob, { kind: "run" }>["run"],
      runDir: `${dir}/runs/probe_s0`,
      sweepDir: dir,
    });
    assertEquals(run.kind, "error", "a run with unusable settings fails inside the engine");
    if (run.kind === "error") assert(!/could not be cloned|DataCloneError/i.test(run.message), run.message);
  });
}

Deno.test("sweep job: an engine named with another module is refused inside the Worker, naming both", async () => {
  const engine = { ...engineRef(engines.tabular), module: "file:///elsewhere/engine.ts" };
  const report = await postJob({
    kind: "prepare",
    engine,
    settings: {},
    seed: 0,
    base: 0,
    eval: evalSpec,
    sweepDir: tempDir(),
  });
  assertEquals(report.kind, "error");
  if (report.kind === "error") assert(report.message.includes("/elsewhere/engine.ts"), report.message);
});

Deno.test("sweep job: a function anywhere in a job is refused before posting, naming the field", () => {
  const job = {
    kind: "prepare",
    engine: { ...engineRef(engines.verl), pending: (d: string) => d.length > 0 },
    settings: {},
    seed: 0,
    base: 0,
    eval: evalSpec,
    sweepDir: "/tmp/x",
  };
  throws(() => checkJob(job), /engine/);
});
