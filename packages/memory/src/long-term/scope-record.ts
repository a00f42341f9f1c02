import {
  type HistoryStore,
  type JsonValue,
  MemoriaError,
  type SessionKey,
  type SessionKeyFilter,
  type TurnLock,
  encodeSessionKey,
  scopeKeyOf,
} from "@memoria/core";

/** What a long-term memory keeps in its scope record: its data and, per session, how many messages it has processed. */
export interface ScopeRecord<D> {
  data?: D;
  /** Encoded session key → messages processed. */
  cursors: Record<string, number>;
}

/**
 * Scope locks. Stores shared between processes renew a lease while it is held, so
 * a short one lets a crashed holder's work resume soon; a store in this process's
 * memory does not renew (and dies with its holder), so its lease outlasts any model call.
 */
function scopeLock(store: HistoryStore) {
  return { ttlMs: store.capabilities.crossProcessLock ? 10_000 : 600_000, waitMs: 300_000 };
}

/** The scope record `name` of `scopeKey`, as stored. */
export async function readScopeRecord<D>(store: HistoryStore, scopeKey: SessionKey, name: string): Promise<ScopeRecord<D> | undefined> {
  const value = await store.getState(scopeKey, name);
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { cursors?: unknown }).cursors !== "object") {
    throw new MemoriaError("CORRUPT_DATA", `The scope record "${name}" of ${encodeSessionKey(scopeKey)} is not a memoria scope record.`);
  }
  return value as unknown as ScopeRecord<D>;
}

/** Stores a scope record, fenced by the scope's `lock`. */
export async function writeScopeRecord<D>(store: HistoryStore, scopeKey: SessionKey, name: string, record: ScopeRecord<D>, lock: TurnLock): Promise<void> {
  const next: ScopeRecord<D> = { cursors: record.cursors };
  if (record.data !== undefined) next.data = record.data;
  await store.setState(scopeKey, name, next as unknown as JsonValue, { lock });
}

/** Runs `work` holding the scope record's lock (the one background passes take), released after. */
export async function withScopeLock<T>(store: HistoryStore, scopeKey: SessionKey, work: (lock: TurnLock) => Promise<T>): Promise<T> {
  const lock = await store.lock(scopeKey, scopeLock(store));
  try {
    return await work(lock);
  } finally {
    await lock.release();
  }
}

/**
 * Changes a memory's data in its scope record, under the same lock as the
 * background work, so an edit (a fact the user asked to remember or forget) and
 * an extraction pass never overwrite each other. The progress marks are kept.
 * `change` returns the new data, or undefined to leave the record as it is.
 */
export function editScopeData<D>(
  store: HistoryStore,
  scope: SessionKeyFilter,
  name: string,
  change: (data: D | undefined) => D | undefined,
): Promise<D | undefined> {
  const scopeKey = scopeKeyOf(scope);
  return withScopeLock(store, scopeKey, async (lock) => {
    const record = (await readScopeRecord<D>(store, scopeKey, name)) ?? { cursors: {} };
    const data = change(record.data);
    if (data === undefined) return record.data;
    await writeScopeRecord(store, scopeKey, name, { cursors: record.cursors, data }, lock);
    return data;
  });
}
