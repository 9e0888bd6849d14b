// A plain progress line for logs (no terminal): every `intervalMs`, done/total, rate, ETA and the last error,
// so a long backoff does not look like a hang.

/** Prints `label: done/total samples, rate/s, ETA, last error` at most once per interval while running. */
export class ProgressLog {
  #done = 0;
  /** Samples already done at the first update (resumed ones): the rate counts only new samples. */
  #base: number | null = null;
  #lastError: string | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #started: number;

  /** `now` returns milliseconds (performance.now by default); `write` receives each line. */
  constructor(
    readonly label: string,
    readonly total: number,
    readonly intervalMs = 15_000,
    readonly write: (line: string) => void = (l) => console.error(l),
    readonly now: () => number = () => performance.now(),
  ) {
    this.#started = now();
  }

  /** Start printing every interval (the timer does not keep the process alive). */
  start(): this {
    this.#timer = setInterval(() => this.write(this.line()), this.intervalMs);
    Deno.unrefTimer(this.#timer);
    return this;
  }

  /** Record the samples finished so far, including resumed ones. */
  update(done: number): void {
    this.#base ??= done;
    this.#done = done;
  }

  /** Record the latest failure reason (a retry or a failed problem). */
  error(reason: string): void {
    this.#lastError = reason;
  }

  /** The current line, e.g. "eval m: 120/800 samples, 3.2/s, ETA 3m32s, last error: HTTP 503: busy". */
  line(): string {
    const seconds = (this.now() - this.#started) / 1000;
    const rate = seconds > 0 ? (this.#done - (this.#base ?? 0)) / seconds : 0;
    const left = this.total - this.#done;
    const eta = rate > 0 ? formatSeconds(left / rate) : "unknown";
    const err = this.#lastError ? `, last error: ${this.#lastError}` : "";
    return `${this.label}: ${this.#done}/${this.total} samples, ${rate.toFixed(1)}/s, ETA ${eta}${err}`;
  }

  /** Stop the timer. */
  stop(): void {
    clearInterval(this.#timer);
  }
}

/** 212 → "3m32s", 5 → "5s", 4000 → "1h06m". */
export function formatSeconds(s: number): string {
  const t = Math.round(s);
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, "0")}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, "0")}m`;
}
