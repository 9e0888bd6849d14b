// Running the real `deno task eval` (deno.json's permissions) as a child process, for the tests that check what
// a user's command does: signals, SIGKILL and resume, a real llama-server.
const ROOT = new URL("../../../", import.meta.url).pathname;

/** A started `deno task eval`: its process, and its output once it ends. */
export interface TaskEval {
  child: Deno.ChildProcess;
  /** Waits for the exit; stdout and stderr as text. */
  done(): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Start `deno task eval ARGS` in the repository root, with CI=true (no progress bars). */
export function spawnTaskEval(args: string[]): TaskEval {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "eval", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { CI: "true" },
  }).spawn();
  const output = child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return {
    child,
    done: async () => {
      const o = await output;
      return { code: o.code, stdout: decode(o.stdout), stderr: decode(o.stderr) };
    },
  };
}

/** Run `deno task eval ARGS` to the end. */
export function taskEval(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return spawnTaskEval(args).done();
}

/**
 * Every descendant pid of `pid` (children first), from `ps --ppid` (reading /proc/PID/task would need
 * --allow-all); [] when it has none or ps is missing.
 */
async function descendants(pid: number): Promise<number[]> {
  let text = "";
  try {
    const o = await new Deno.Command("ps", { args: ["-o", "pid=", "--ppid", String(pid)], stdout: "piped" })
      .output();
    text = new TextDecoder().decode(o.stdout);
  } catch {
    return [];
  }
  const kids = text.trim().split(/\s+/).filter(Boolean).map(Number);
  const out: number[] = [];
  for (const k of kids) out.push(k, ...(await descendants(k)));
  return out;
}

/**
 * Send `signal` to the `deno run` process that `deno task` started (what a terminal's Ctrl-C reaches along with
 * `deno task` itself), or to the whole tree for SIGKILL; waits up to 10 s for that process to appear.
 */
export async function signalEval(task: TaskEval, signal: Deno.Signal): Promise<void> {
  let tree: number[] = [];
  for (let i = 0; i < 500 && tree.length === 0; i++) {
    tree = await descendants(task.child.pid);
    if (tree.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  if (signal === "SIGKILL") {
    for (const pid of [...tree, task.child.pid]) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    return;
  }
  if (tree.length === 0) {
    const r = await task.done();
    throw new Error(`deno task eval ended (exit ${r.code}) before ${signal}: ${r.stderr.slice(-500)}`);
  }
  Deno.kill(tree[0], signal);
}
