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

/**
 * ETA text: cli-progress passes the string "INF"/"NULL" before it has a rate, which its own formatter pads to
 * "NFs"; show "--" until the ETA is a number of seconds.
 */
export function formatEta(t: unknown, options: unknown, roundTo: number): string {
  if (typeof t !== "number" || !Number.isFinite(t)) return "--";
  return cliProgress.Format.TimeFormat(t, options, roundTo);
}

/** cli-progress options of a bar drawn on stderr with `format`. */
function barOptions(format: string) {
  return { format, stream: process.stderr, hideCursor: true, clearOnComplete: false, formatTime: formatEta };
}

/** A single bar with ETA; `label` prefixes it, `unit` names what is counted. */
export function progressBar(label: string, total: number, unit = "items"): Progress {
  if (!progressEnabled()) return quiet;
  const bar = new cliProgress.SingleBar(
    barOptions(`${label} [{bar}] {value}/{total} ${unit} | {percentage}% | ETA {eta_formatted}`),
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return bar;
}

/** Several named bars (overall plus one per active job). */
export function multiProgress(): {
  /** A new bar at `start` (default 0) of `total`. */
  add(label: string, total: number, unit?: string, start?: number): Progress;
  stop(): void;
} {
  if (!progressEnabled()) return { add: () => quiet, stop() {} };
  const multi = new cliProgress.MultiBar(
    barOptions("{label} [{bar}] {value}/{total} {unit} | ETA {eta_formatted}"),
    cliProgress.Presets.shades_classic,
  );
  return {
    add(label, total, unit = "steps", start = 0) {
      const bar = multi.create(total, start, { label: label.padEnd(24), unit });
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
