// The one-writer lock (common/lock.ts): exclusive create, live owners refused, stale locks taken over; and two
// concurrent `deno task sweep` on one folder, where the second must exit 2 at once and retrain nothing.
import { join } from "node:path";
import { hostname } from "node:os";
import { assertEquals, ok, throws } from "../assert.ts";
import { FolderInUseError, LOCK_FILE, lockFolder } from "../../common/lock.ts";
import { exists, readJson, writeJson } from "../../common/fs.ts";

/** The pid of a process that has exited (so no process holds it, barring reuse within the test). */
async function deadPid(): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), { args: ["eval", "0"] }).spawn();
  await child.status;
  return child.pid;
}

Deno.test("lock: one holder at a time; release frees it; a live owner's lock is refused with its pid", async () => {
  const dir = join(Deno.makeTempDirSync(), "out");
  const a = lockFolder(dir);
  ok(exists(join(dir, LOCK_FILE)), "created with the folder");
  assertEquals(readJson<{ pid: number; host: string }>(join(dir, LOCK_FILE)).pid, Deno.pid);
  throws(
    () => lockFolder(dir),
    (e: Error) =>
      e instanceof FolderInUseError && e.message.startsWith(`folder ${dir} is in use by pid ${Deno.pid}`),
  );
  assertEquals((Deno.statSync(join(dir, LOCK_FILE)).mode! & 0o777).toString(8), "644");
  a.release();
  a.release();
  ok(!exists(join(dir, LOCK_FILE)));
  const b = lockFolder(dir);
  b.release();
  // Another host's lock cannot be checked for liveness, so it is respected and named.
  writeJson(join(dir, LOCK_FILE), { pid: 1, host: "elsewhere", startedAt: "2026-01-01T00:00:00Z" });
  throws(() => lockFolder(dir), /in use by pid 1 on elsewhere/);
  // A dead pid on this host, or a torn lock file, is taken over with a message.
  const pid = await deadPid();
  writeJson(join(dir, LOCK_FILE), { pid, host: hostname(), startedAt: "2026-01-01T00:00:00Z" });
  const told: string[] = [];
  const c = lockFolder(dir, { onStale: (m) => told.push(m) });
  assertEquals(told, [`folder ${dir}: taking over the lock of pid ${pid} (no longer running)`]);
  assertEquals(readJson<{ pid: number }>(join(dir, LOCK_FILE)).pid, Deno.pid);
  c.release();
  Deno.writeTextFileSync(join(dir, LOCK_FILE), '{"pid": 12');
  const d = lockFolder(dir, { onStale: (m) => told.push(m) });
  ok(told[1].includes("unreadable lock file"));
  d.release();
  Deno.removeSync(join(dir, ".."), { recursive: true });
});

Deno.test("lock: two concurrent sweeps on one folder: the second exits 2 at once, no run is trained twice", async () => {
  const dir = Deno.makeTempDirSync();
  const config = join(dir, "slow.json");
  writeJson(config, {
    name: "slow",
    engine: "tabular",
    // Long enough (8 runs, one at a time) that the first is still training when the second starts.
    seeds: [0, 1, 2, 3],
    methods: [{ name: "grpo", preset: "grpo" }, { name: "ace-grpo", preset: "ace-grpo" }],
    settings: { prompts: 40, checkpointEvery: 50 },
    rl: { steps: 600, promptsPerStep: 16 },
    eval: { n: 8, ks: [1, 8], every: 200 },
  });
  const out = join(dir, "out");
  const sweep = () =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../cli.ts", import.meta.url).pathname,
        "sweep",
        "--config",
        config,
        "--out",
        out,
        "--workers",
        "1",
        "--no-report",
      ],
      stdout: "null",
      stderr: "piped",
      env: { CI: "true" },
    });
  const first = sweep().spawn();
  try {
    for (let i = 0; i < 1500 && !exists(join(out, LOCK_FILE)); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    ok(exists(join(out, LOCK_FILE)), "the first sweep holds the lock");
    let firstDone = false;
    const firstStatus = first.status.then((s) => (firstDone = true, s));
    const second = await sweep().output();
    const err = new TextDecoder().decode(second.stderr);
    assertEquals(second.code, 2, err);
    ok(err.includes(`folder ${out} is in use by pid ${first.pid}`), err);
    ok(!firstDone, "the second exited while the first was still training");
    assertEquals((await firstStatus).code, 0);
    for (const run of [0, 1, 2, 3].flatMap((s) => [`grpo_s${s}`, `ace-grpo_s${s}`])) {
      const status = readJson<{ state: string; attempts?: number }>(join(out, "runs", run, "status.json"));
      assertEquals([status.state, status.attempts ?? 1], ["done", 1], `${run} trained once`);
    }
    ok(!exists(join(out, LOCK_FILE)), "released at exit");
  } finally {
    await first.stderr.cancel().catch(() => {});
    Deno.removeSync(dir, { recursive: true });
  }
});
