// How reports print numbers, said once: Pass@k values, signed differences with their intervals, and numbers in
// the CSV and JSON files (rounded so the files are stable across platforms).

/** A Pass@k value for print: 3 decimals. */
export const f3 = (x: number) => x.toFixed(3);

/** A difference for print: its sign ("−" is U+2212) and 3 decimals. */
export const signed = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(3);

/** "+0.012 [−0.004, +0.030]" (`fmt`: signed by default), or "+0.012 (no interval)" when the interval is undefined. */
export function withInterval(c: { mean: number; lo: number; hi: number }, fmt = signed): string {
  return Number.isFinite(c.lo)
    ? `${fmt(c.mean)} [${fmt(c.lo)}, ${fmt(c.hi)}]`
    : `${fmt(c.mean)} (no interval)`;
}

/** A number rounded to 6 decimals (NaN stays NaN). */
export const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** A CSV number: rounded to 6 decimals; empty when not defined (NaN, ±∞). */
export const csv6 = (x: number) => (Number.isFinite(x) ? r6(x) : "");

/** A variance component: "n/a" when not estimable, 0 below float noise (1e-12), else 3 significant digits. */
export const e2 = (x: number) => (Number.isNaN(x) ? "n/a" : Math.abs(x) < 1e-12 ? "0" : x.toExponential(2));
