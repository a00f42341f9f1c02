import { type HistoryStore, type SessionKey, type SessionKeyFilter, everySession } from "@memoria/core";

/** Every session and scope record matching `filter` (core's `everySession`), in pages of 500. */
export function sessionsOf(store: HistoryStore, filter: SessionKeyFilter = {}): AsyncGenerator<SessionKey> {
  return everySession(store, filter, { pageSize: 500 });
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
