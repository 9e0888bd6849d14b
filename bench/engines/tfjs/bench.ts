// Placeholder until this area's benchmark lands.
/** Benchmark entry point. */
export function main(_args: string[]): Promise<number> {
  console.error("benchmark not implemented yet");
  return Promise.resolve(1);
}
