// The one-writer lock (common/lock.ts): an flock held for the writer's lifetime, freed by the kernel when the
// holder dies; and the real `deno task sweep` / `deno task eval` (deno.json's permissions: no --allow-run) twice on
// one folder: the second exits 2 naming the holder, SIGKILL of the holder frees the folder, a re-run resumes.
import { join } from "node:path";
import { assertEquals, ok, throws } from "../assert.ts";
import { FolderInUseError, LOCK_FILE, lockFolder, type LockOwner } from "../../common/lock.ts";
import { exists, readJson, readJsonl, writeJson } from "../../common/fs.ts";
import { startFaultServer } from "../bench/external/fault_server.ts";

const root = new URL("../..", import.meta.url).pathname;
const lockModule = new URL("../../common/lock.ts", import.meta.url).href;

/** Run `deno task <args>` from the repository, with the task's own permissions (as a user runs it). */
function task(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", join(root, "deno.json"), ...args],
    stdout: "null",
    stderr: "piped",
    env: { CI: "true", ACEBENCH_QUIET: "1" },
  }).spawn();
}

/** The lock file's owner once a holder has written it (polls up to 60 s), or null. */
async function holderOf(dir: string, until: () => boolean = () => false): Promise<LockOwner | null> {
  for (let i = 0; i < 3000 && !until(); i++) {
    try {
      const o = readJson<LockOwner>(join(dir, LOCK_FILE));
      if (Number.isInteger(o.pid)) return o;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("lock: one holder at a time, named with pid and command; release frees it and removes the file", () => {
  const dir = join(Deno.makeTempDirSync(), "out");
  try {
    const a = lockFolder(dir, { command: "deno task eval --out x" });
    const owner = readJson<LockOwner>(join(dir, LOCK_FILE));
    assertEquals([owner.pid, owner.command], [Deno.pid, "deno task eval --out x"]);
    throws(
      () => lockFolder(dir),
      (e: Error) =>
        e instanceof FolderInUseError &&
        e.message ===
          `folder ${dir} is in use by pid ${Deno.pid} (deno task eval --out x) since ${owner.startedAt}` +
            `; wait for it to finish or choose another --out`,
    );
    assertEquals((Deno.statSync(join(dir, LOCK_FILE)).mode! & 0o777).toString(8), "644");
    a.release();
    a.release();
    ok(!exists(join(dir, LOCK_FILE)));
    // A file left by a process that died is not a lock: only the kernel's lock counts.
    writeJson(join(dir, LOCK_FILE), { pid: 1, host: "elsewhere", startedAt: "2026-01-01T00:00:00Z" });
    const b = lockFolder(dir);
    assertEquals(readJson<LockOwner>(join(dir, LOCK_FILE)).pid, Deno.pid);
    b.release();
  } finally {
    Deno.removeSync(join(dir, ".."), { recursive: true });
  }
});

Deno.test("lock: held by a process with only --allow-read/--allow-write; SIGKILL frees it", async () => {
  const dir = join(Deno.makeTempDirSync(), "out");
  const code = `import { lockFolder } from "${lockModule}";
lockFolder(${JSON.stringify(dir)}, { command: "holder" });
console.log("held");
await new Promise(() => setInterval(() => {}, 1000));`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", "--allow-read", "--allow-write", code],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    assertEquals(text(value!).trim(), "held");
    throws(() => lockFolder(dir), new RegExp(`in use by pid ${child.pid} \\(holder\\)`));
    child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();
    ok(exists(join(dir, LOCK_FILE)), "the dead holder's file stays");
    const mine = lockFolder(dir);
    mine.release();
  } finally {
    Deno.removeSync(join(dir, ".."), { recursive: true });
  }
});

Deno.test("lock: deno task sweep twice on one folder: the second exits 2 naming the holder; after SIGKILL a re-run resumes; --repair", async () => {
  const dir = Deno.makeTempDirSync();
  const config = join(dir, "slow.json");
  // 4 tabular runs, one at a time, a few seconds each: the first is still training when the second starts.
  writeJson(config, {
    name: "slow",
    engine: "tabular",
    seeds: [0, 1],
    methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
    settings: { prompts: 40, checkpointEvery: 50 },
    rl: { steps: 1500, promptsPerStep: 16 },
    eval: { n: 8, ks: [1, 8], every: 500 },
  });
  const out = join(dir, "out");
  const args = ["sweep", "--config", config, "--out", out, "--workers", "1", "--no-report"];
  const first = task(args);
  try {
    let firstDone = false;
    const firstStatus = first.status.then((s) => (firstDone = true, s));
    const owner = await holderOf(out, () => firstDone);
    ok(owner, "the first sweep holds the lock");
    const second = await task(args).output();
    const err = text(second.stderr);
    assertEquals(second.code, 2, err);
    ok(
      err.includes(
        `folder ${out} is in use by pid ${owner.pid} (deno task sweep ${args.slice(1).join(" ")})`,
      ),
      err,
    );
    ok(err.includes(`since ${owner.startedAt}`), err);
    ok(!firstDone, "the second exited while the first was still training");
    Deno.kill(owner.pid, "SIGKILL");
    await firstStatus;
    const runs = ["grpo_s0", "grpo_s1", "ace-grpo_s0", "ace-grpo_s1"];
    const stateOf = (run: string) => {
      const path = join(out, "runs", run, "status.json");
      return exists(path) ? readJson<{ state: string; attempts?: number }>(path) : null;
    };
    const doneBefore = runs.filter((r) => stateOf(r)?.state === "done");
    ok(doneBefore.length < runs.length, "killed mid-sweep");
    const third = await task(args).output();
    assertEquals(third.code, 0, text(third.stderr));
    for (const run of runs) {
      const s = stateOf(run)!;
      assertEquals(s.state, "done", run);
      if (doneBefore.includes(run)) assertEquals(s.attempts ?? 1, 1, `${run} was not trained again`);
      const steps = readJsonl<{ step: number }>(join(out, "runs", run, "metrics.jsonl")).map((m) => m.step);
      assertEquals(new Set(steps).size, steps.length, `${run}: no step logged twice`);
    }
    ok(!exists(join(out, LOCK_FILE)), "released at exit");
    // A folder damaged before the lock held (two writers): --repair drops the duplicates and says how many.
    const evalPath = join(out, "runs", "grpo_s0", "eval.jsonl");
    const metricsPath = join(out, "runs", "grpo_s0", "metrics.jsonl");
    const evalLines = Deno.readTextFileSync(evalPath).split("\n").filter(Boolean);
    const metricsLines = Deno.readTextFileSync(metricsPath).split("\n").filter(Boolean);
    Deno.writeTextFileSync(evalPath, evalLines.slice(0, 7).join("\n") + "\n", { append: true });
    Deno.writeTextFileSync(metricsPath, metricsLines.slice(0, 3).join("\n") + "\n", { append: true });
    const repaired = await task([...args, "--repair"]).output();
    const said = text(repaired.stderr);
    assertEquals(repaired.code, 0, said);
    ok(said.includes("--repair: grpo_s0: dropped 7 duplicate eval samples, 3 duplicate metrics lines"), said);
    ok(said.includes("--repair: dropped 7 duplicate eval samples, 3 duplicate metrics lines"), said);
    assertEquals(readJsonl(evalPath).length, evalLines.length);
    assertEquals(readJsonl(metricsPath).length, metricsLines.length);
  } finally {
    await first.status;
    await first.stderr.cancel().catch(() => {});
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("lock: deno task eval twice on one folder: the second exits 2 naming the holder; after SIGKILL a re-run resumes; --repair", async () => {
  const srv = startFaultServer({ latencyMs: 300 });
  const dir = Deno.makeTempDirSync();
  const out = join(dir, "out");
  const args = [
    "eval",
    ...["--endpoint", srv.url, "--model", "test-model", "--dataset", "synthetic", "--limit", "6", "--n", "4"],
    ...["--completions", "--concurrency", "1", "--max-n-per-request", "1", "--out", out],
  ];
  const first = task(args);
  try {
    let firstDone = false;
    const firstStatus = first.status.then((s) => (firstDone = true, s));
    for (let i = 0; i < 3000 && srv.log.requests === 0 && !firstDone; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const owner = await holderOf(out, () => firstDone);
    ok(owner && srv.log.requests > 0, "the first eval holds the lock and samples");
    const second = await task(args).output();
    const err = text(second.stderr);
    assertEquals(second.code, 2, err);
    ok(err.includes(`folder ${out} is in use by pid ${owner.pid} (deno task eval --endpoint`), err);
    ok(!firstDone, "the second exited while the first was still sampling");
    Deno.kill(owner.pid, "SIGKILL");
    await firstStatus;
    const samplesPath = join(out, "runs", "test-model", "samples.jsonl");
    const before = readJsonl(samplesPath).length;
    ok(before < 24, `killed after ${before} samples`);
    const requestsBefore = srv.log.requests;
    const third = await task(args).output();
    assertEquals(third.code, 0, text(third.stderr));
    const after = readJsonl<{ problemId: string; sample: number }>(samplesPath);
    assertEquals(after.length, 24);
    assertEquals(new Set(after.map((s) => `${s.problemId}#${s.sample}`)).size, 24);
    assertEquals(
      srv.log.requests - requestsBefore,
      24 - before,
      "the re-run asked only for the missing samples",
    );
    ok(!exists(join(out, LOCK_FILE)), "released at exit");
    // A folder damaged before the lock held (two writers): --repair drops the duplicates and says how many.
    const lines = Deno.readTextFileSync(samplesPath).split("\n").filter(Boolean);
    Deno.writeTextFileSync(samplesPath, lines.slice(0, 5).join("\n") + "\n", { append: true });
    const requestsBeforeRepair = srv.log.requests;
    const repaired = await task([...args, "--repair"]).output();
    const said = text(repaired.stderr);
    assertEquals(repaired.code, 0, said);
    ok(said.includes(`--repair: dropped 0 bad lines and 5 duplicate samples of ${samplesPath}`), said);
    assertEquals(readJsonl(samplesPath).length, 24);
    assertEquals(readJsonl(join(out, "runs", "test-model", "eval.jsonl")).length, 24);
    assertEquals(srv.log.requests, requestsBeforeRepair, "nothing was missing, so nothing was requested");
  } finally {
    await first.status;
    await first.stderr.cancel().catch(() => {});
    await srv.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
