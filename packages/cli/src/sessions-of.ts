import type { HistoryStore, SessionKey, SessionKeyFilter } from "@memoria/core";

/** Every session of `store` matching `filter`, a page of `list` at a time. */
export async function* sessionsOf(store: HistoryStore, filter: SessionKeyFilter = {}, pageSize = 500): AsyncGenerator<SessionKey> {
  let cursor: string | undefined;
  do {
    const page = await store.list(filter, { limit: pageSize, cursor });
    yield* page.sessions;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

/** Runs `work` over `items` with at most `width` at once, in order of start; rejects with the first failure. */
export async function inParallel<T>(items: AsyncIterable<T>, width: number, work: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for await (const item of items) {
    if (failure) break;
    const task: Promise<void> = work(item).then(
      () => void running.delete(task),
      (error: unknown) => {
        running.delete(task);
        failure ??= { error };
      },
    );
    running.add(task);
    if (running.size >= width) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw failure.error;
}
