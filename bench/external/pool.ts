// Bounded concurrency: at most `limit` tasks in flight, each worker pulling the next item when it finishes one.

/** Run `worker` over every item with at most `limit` running at once; resolves when all have settled. */
export async function runPool<T>(
  items: readonly T[],
  limit: number,
  worker: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      await worker(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
