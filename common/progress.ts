// Progress bars for long work (cli-progress); silent when stderr is not a TTY or under CI=true.
import cliProgress from "cli-progress";

/** A progress handle; `update` and `stop` are no-ops when quiet. */
export interface Progress {
  increment(by?: number, payload?: Record<string, unknown>): void;
  update(value: number, payload?: Record<string, unknown>): void;
  setTotal(total: number): void;
  stop(): void;
}

/** True when progress bars should be drawn (interactive stderr, not CI, not ACEBENCH_QUIET). */
export function progressEnabled(): boolean {
  try {
    if (Deno.env.get("CI") === "true" || Deno.env.get("ACEBENCH_QUIET")) return false;
  } catch { /* no env permission: fall through */ }
  return Deno.stderr.isTerminal();
}

const quiet: Progress = { increment() {}, update() {}, setTotal() {}, stop() {} };

/** A single bar with ETA; `label` prefixes it, `unit` names what is counted. */
export function progressBar(label: string, total: number, unit = "items"): Progress {
  if (!progressEnabled()) return quiet;
  const bar = new cliProgress.SingleBar({
    format: `${label} [{bar}] {value}/{total} ${unit} | {percentage}% | ETA {eta_formatted}`,
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
  }, cliProgress.Presets.shades_classic);
  bar.start(total, 0);
  return bar;
}

/** Several named bars (overall plus one per active job). */
export function multiProgress(): {
  add(label: string, total: number, unit?: string): Progress;
  stop(): void;
} {
  if (!progressEnabled()) return { add: () => quiet, stop() {} };
  const multi = new cliProgress.MultiBar({
    format: "{label} [{bar}] {value}/{total} {unit} | ETA {eta_formatted}",
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
  }, cliProgress.Presets.shades_classic);
  return {
    add(label, total, unit = "steps") {
      const bar = multi.create(total, 0, { label: label.padEnd(24), unit });
      return {
        increment: (by = 1, p) => bar.increment(by, p),
        update: (v, p) => bar.update(v, p),
        setTotal: (t) => bar.setTotal(t),
        stop: () => multi.remove(bar),
      };
    },
    stop: () => multi.stop(),
  };
}
