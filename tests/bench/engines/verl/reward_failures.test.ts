// reward.py when its grader fails: a dead grader is restarted once and the request retried; a second death, a
// stall past the request's bound, are errors naming the grader and its last stderr lines; a grader writing more to
// stderr than a pipe holds does not block. Runs reward.py (standard library only) with the system python3.
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, ok } from "../../../assert.ts";
import { tempDir } from "../../../temp.ts";
import { skipping } from "../../../external_inputs.ts";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const rewardDir = fileURLToPath(new URL("../../../../bench/engines/verl/", import.meta.url));
const python = (() => {
  try {
    return new Deno.Command("python3", { args: ["-c", "pass"] }).outputSync().success ? "python3" : null;
  } catch {
    return null;
  }
})();
skipping(
  "reward.py's failure tests",
  python === null ? "no python3 on PATH; reward.py needs only its stdlib (apt-get install -y python3)" : null,
);

async function drive(
  mode: string,
  requests: number,
  env: Record<string, string> = {},
  dir = rewardDir,
  stderr: "inherit" | "piped" = "inherit",
): Promise<{ ok?: number; error?: string; starts: number; stderr?: string }> {
  const state = join(tempDir("acebench-reward-failures-"), "starts");
  const out = await new Deno.Command(python!, {
    args: [join(fixtures, "reward_failures.py"), dir, mode, state, String(requests)],
    env,
    stderr,
    // a grader blocked on a full stderr pipe would hang reward.py: kill it and fail instead
    signal: AbortSignal.timeout(120_000),
  }).output();
  const result = JSON.parse(new TextDecoder().decode(out.stdout)) as { ok?: number; error?: string };
  const starts = Deno.readTextFileSync(state).split("\n").filter(Boolean).length;
  const said: string | undefined = stderr === "piped" ? new TextDecoder().decode(out.stderr) : undefined;
  return said === undefined ? { ...result, starts } : { ...result, starts, stderr: said };
}

Deno.test({ name: "verl reward.py: a healthy grader starts once", ignore: python === null }, async () => {
  assertEquals(await drive("ok", 3), { ok: 6, starts: 1 });
});

Deno.test({
  name: "verl reward.py: a grader that dies once is restarted and the request retried",
  ignore: python === null,
}, async () => {
  assertEquals(await drive("die-first", 3), { ok: 6, starts: 2 });
});

Deno.test({
  name:
    "verl reward.py: each restart is said on stderr and, in a run folder, appended to grader_restarts.jsonl",
  ignore: python === null,
}, async () => {
  // reward.py as a run folder holds it: grader.sh beside it
  const dir = tempDir("acebench-reward-run-");
  copyFileSync(join(rewardDir, "reward.py"), join(dir, "reward.py"));
  Deno.writeTextFileSync(join(dir, "grader.sh"), "");
  const r = await drive("die-first", 3, {}, dir, "piped");
  assertEquals([r.ok, r.starts], [6, 2]);
  const said = r.stderr!.split("\n").filter((l) => l.startsWith("reward: restarting the grader"));
  assertEquals(said.length, 1, r.stderr!);
  ok(said[0].includes("exited") && said[0].includes("dying as asked (start 1)"), said[0]);
  const logged = Deno.readTextFileSync(join(dir, "grader_restarts.jsonl")).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assertEquals(logged.length, 1);
  ok(logged[0].error.includes("dying as asked (start 1)") && Number.isInteger(logged[0].pid), logged[0]);
  // the source tree's reward.py (no grader.sh beside it) says it on stderr only
  const plain = await drive("die-first", 1, {}, rewardDir, "piped");
  ok(plain.stderr!.includes("reward: restarting the grader"), plain.stderr!);
  ok(!existsSync(join(rewardDir, "grader_restarts.jsonl")), "nothing written into the source tree");
});

Deno.test({
  name: "verl reward.py: a grader that dies again fails with the first error and its stderr",
  ignore: python === null,
}, async () => {
  const r = await drive("die", 2);
  assertEquals(r.starts, 2);
  ok(r.ok === undefined, "no verdicts");
  ok(
    /^GraderError: reward: the grader \(.*fake_grader\.py die .*\) exited with code 3: fake grader: dying as asked \(start 1\)/
      .test(r.error!),
    r.error ?? "no error",
  );
  ok(/restarted once; the restarted grader failed too: .*start 2/.test(r.error!), r.error ?? "no error");
});

Deno.test({
  name: "verl reward.py: a stalled grader fails after the request's bound",
  ignore: python === null,
}, async () => {
  const t = performance.now();
  const r = await drive("stall", 1, { ACE_VERL_GRADER_TIMEOUT_S: "0.5" });
  const seconds = (performance.now() - t) / 1000;
  ok(/answered nothing in 6 s for 2 responses/.test(r.error ?? ""), r.error ?? "no error");
  assertEquals(r.starts, 2);
  ok(seconds < 60, `stalls are bounded (${seconds.toFixed(1)} s)`);
});

Deno.test({
  name: "verl reward.py: a grader writing megabytes to stderr does not block",
  ignore: python === null,
}, async () => {
  assertEquals(await drive("chatty", 2), { ok: 4, starts: 1 });
});
