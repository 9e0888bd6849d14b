// The wall time of independent jobs on parallel lanes, as the sweep runner schedules them.

/** Wall time of `jobs` (seconds each) on `workers` lanes, greedily longest-first (what the runner achieves). */
export function makespan(jobs: number[], workers: number): number {
  const lanes = new Array(Math.max(1, workers)).fill(0);
  for (const job of [...jobs].sort((a, b) => b - a)) {
    const i = lanes.indexOf(Math.min(...lanes));
    lanes[i] += job;
  }
  return Math.max(...lanes);
}
