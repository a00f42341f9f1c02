import { type HistoryStore, SCOPE_FIELD, type SessionKey, type SessionKeyFilter } from "@memoria/core";

async function* listed(store: HistoryStore, filter: SessionKeyFilter, pageSize: number): AsyncGenerator<SessionKey> {
  let cursor: string | undefined;
  do {
    const page = await store.list(filter, { limit: pageSize, cursor });
    yield* page.sessions;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

/** The `memoriaScope` values a scope record of these sessions' fields can have: each non-empty subset of a key's fields, sorted and joined. */
function scopeNames(fieldSets: Iterable<string>): string[] {
  const names = new Set<string>();
  for (const set of fieldSets) {
    const fields = set.split("+");
    if (fields.length > 6) continue; // 63 subsets is plenty; wider keys are not scoped by the CLI
    for (let mask = 1; mask < 1 << fields.length; mask++) names.add(fields.filter((_, i) => mask & (1 << i)).join("+"));
  }
  return [...names].sort();
}

/**
 * Every session of `store` matching `filter`, a page of `list` at a time, then the
 * scope records (long-term memory, keyed by a subset of the sessions' fields plus
 * `memoriaScope`) that match it: what export, migration and erasure must carry.
 */
export async function* sessionsOf(store: HistoryStore, filter: SessionKeyFilter = {}, pageSize = 500): AsyncGenerator<SessionKey> {
  const fieldSets = new Set<string>();
  for await (const key of listed(store, filter, pageSize)) {
    fieldSets.add(Object.keys(key).sort().join("+"));
    yield key;
  }
  if (Object.hasOwn(filter, SCOPE_FIELD)) return; // the filter named scope records: listed above
  for (const name of scopeNames(fieldSets)) yield* listed(store, { ...filter, [SCOPE_FIELD]: name }, pageSize);
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
